"""Routing-analysis figures from what the fabric engine (t2hx.routing.analysis) writes.

Inputs, in ``<logdir>/analysis/`` (the file stem labels the routing, e.g. ``hyperx-dfsssp``):

* ``<label>.csv`` — header ``link,efi`` then one row per inter-switch link: ``link`` is any
  identifier, ``efi`` the (effective) edge forwarding index γᵉ of that link (seed 004 Def 7),
  a non-negative number of paths. Other columns are ignored.
* ``<label>.json`` — an object with ``dark_fiber``: the share (0..1) of inter-switch links
  carrying no path (seed 004 Def 8). Other keys are ignored.

Unreadable files are skipped and listed; they never stop the other figures.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from t2hx.post import plots
from t2hx.post.figures import Figure
from t2hx.post.ingest import Summary
from t2hx.post.store import write_text

MAX_BINS = 40


def read_efi(logdir: Path, summary: Summary) -> dict[str, pd.Series]:
    out: dict[str, pd.Series] = {}
    for path in sorted((logdir / "analysis").glob("*.csv")):
        rel = path.relative_to(logdir).as_posix()
        try:
            df = pd.read_csv(path)
            efi = pd.to_numeric(df["efi"], errors="coerce").dropna()
            if efi.empty or "link" not in df:
                raise ValueError("needs columns link,efi with at least one number")
            if not np.isfinite(efi).all() or (efi < 0).any():
                raise ValueError("efi values are path counts: finite and non-negative")
            out[path.stem] = efi
        except (OSError, ValueError, KeyError, pd.errors.ParserError) as err:
            summary.skip("analysis", rel, f"unreadable EFI table: {err}")
    return out


def read_dark_fiber(logdir: Path, summary: Summary) -> dict[str, float]:
    out: dict[str, float] = {}
    for path in sorted((logdir / "analysis").glob("*.json")):
        rel = path.relative_to(logdir).as_posix()
        try:
            value = float(json.loads(path.read_text())["dark_fiber"])
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"dark_fiber {value} outside 0..1")
            out[path.stem] = value
        except (OSError, ValueError, KeyError, TypeError) as err:
            summary.skip("analysis", rel, f"unreadable dark-fiber file: {err}")
    return out


def efi_histogram(efi: dict[str, pd.Series], outdir: Path) -> Figure | None:
    if not efi:
        return None
    top = max(float(s.max()) for s in efi.values())
    width = max(1, math.ceil((top + 1) / MAX_BINS))
    edges = np.arange(0, top + width + 1, width)
    labels = list(efi)
    counts = {k: np.histogram(s.to_numpy(dtype=float), bins=edges)[0] for k, s in efi.items()}
    rows = [[int(edges[i])] + [int(counts[k][i]) for k in labels] for i in range(len(edges) - 1)]
    stem = outdir / "routing-efi-histogram"
    title = f"Edge forwarding index per inter-switch link (bin width {width})"
    data = stem.with_suffix(".dat")
    write_text(data, plots.table_text(["efi"] + labels, rows, title))
    files = plots.render("lines", data, stem, {
        "title": title, "nseries": len(labels), "xlabel_text": "EFI (paths per link)",
        "ylabel_text": "links", "logx": False, "logy": False, "style": "steps"})
    table = pd.DataFrame([{"routing": k, "links": len(s), "max_efi": float(s.max()),
                           "mean_efi": float(s.mean()), "dark_links": int((s == 0).sum())}
                          for k, s in efi.items()])
    return Figure(stem.name, "routing", title, files, data, table)


def dark_fiber_bars(dark: dict[str, float], outdir: Path) -> Figure | None:
    if not dark:
        return None
    stem = outdir / "routing-dark-fiber"
    title = "Dark fiber: share of inter-switch links without any path"
    rows = [[k, 100.0 * v, f"{100.0 * v:.1f}%"] for k, v in dark.items()]
    data = stem.with_suffix(".dat")
    write_text(data, plots.table_text(None, rows, f"{title}\nrouting\tpercent\tlabel"))
    ymax = max(10.0, 1.2 * max(100.0 * v for v in dark.values()))
    files = plots.render("bars", data, stem, {"title": title, "ylabel_text": "dark fiber [%]",
                                              "ymax": round(ymax, 2), "figw": 4.5})
    table = pd.DataFrame([{"routing": k, "dark_fiber_percent": 100.0 * v} for k, v in dark.items()])
    return Figure(stem.name, "routing", title, files, data, table)
