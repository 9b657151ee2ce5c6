"""Tile pictures that summarise a campaign at a glance, beside the tables they summarise:

* the **scorecard picture**: one row per claim, a column for the claim's verdict and one per
  node count it was also judged at (the scorecard's "per node count"), cells coloured as the
  report's verdict cells (t2hx.post.scorecard.text.VERDICT_COLOURS) and marked with a symbol
  so that the picture reads in grey too;
* the **packet/flow ratio grid**: one row per benchmark, one column per combo and node count,
  each cell the packet engine's speed relative to the flow model's at the case's largest
  message size (t2hx.post.flow_vs_packet.side_by_side), >1 faster, <1 slower, whatever the metric's
  direction.

Both are gnuplot's ``tiles.gp`` (plots.py); each writes its data file beside the picture."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from t2hx.post import plots
from t2hx.post.figures import Figure
from t2hx.post.records import better_for
from t2hx.post.scorecard.text import VERDICT_COLOURS, VERDICTS, rungs_of
from t2hx.post.store import write_text

#: One symbol per verdict, so that the colours are not the only cue.
VERDICT_MARKS = {"agrees": "✓", "same direction": "~", "weaker": "w", "stronger": "s",
                 "vacuous": "v", "unresolved": "?", "contradicts": "✗", "not run": "–",
                 "identical": "="}
#: The ratio grid's diverging colours: slower (orange) · equal (white) · faster (purple),
#: saturated at a factor of RATIO_SPAN (seed figures' PuOr palette, paper/gnuplot/common.gp).
SLOWER, EQUAL, FASTER = (0xb3, 0x58, 0x06), (0xf7, 0xf7, 0xf7), (0x54, 0x27, 0x88)
RATIO_SPAN = 2.0


def _rgb(hex_colour: str) -> int:
    return int(hex_colour.lstrip("#"), 16)


def _tics(axis: str, labels: list[str]) -> str:
    return f"set {axis}tics (" + ", ".join(f"{plots.gp_string(t)} {i}"
                                            for i, t in enumerate(labels)) + ")"


def _draw(stem: Path, title: str, cells: list[list], columns: list[str], rows: list[str],
          keys: str = "", extra: str = "") -> tuple[list[Path], Path]:
    data = stem.with_suffix(".dat")
    write_text(data, plots.table_text(None, cells, f"{title}\ncol\trow\trgb\ttext"))
    width = max(len(r) for r in rows) * 0.055 + 0.22 * len(columns) + 1.2
    files = plots.render("tiles", data, stem, {
        "title": title, "ncols": len(columns), "nrows": len(rows), "keys": keys,
        "extra": "; ".join(filter(None, [_tics("x", columns), _tics("y", rows), extra])),
        "figw": round(min(max(width, 4.5), 10.0), 2),
        "figh": round(1.6 + 0.13 * len(rows) + 0.05 * max(len(c) for c in columns), 2)})
    return files, data


def scorecard_picture(sc: pd.DataFrame, outdir: Path, name: str = "scorecard") -> Figure | None:
    """Claims × (verdict, node counts) of a scorecard frame (t2hx.post.scorecard.frame)."""
    if sc is None or sc.empty:
        return None
    per = [rungs_of(r) for r in sc["per node count"]]
    nodes = sorted({n for r in per for n in r})
    columns = ["verdict"] + [f"{n} nodes" for n in nodes]
    rows = [c + ("" if finding else " (check)")
            for c, finding in zip(sc["claim"], sc.get("finding", pd.Series(True, index=sc.index)))]
    cells = []
    for ri, (verdict, rungs) in enumerate(zip(sc["verdict"], per)):
        for ci, v in enumerate([verdict] + [rungs.get(n) for n in nodes]):
            if v is not None:
                cells.append([ci, ri, _rgb(VERDICT_COLOURS.get(v, "#ffffff")),
                              VERDICT_MARKS.get(v, "")])
    shown = [v for v in (*VERDICTS, "identical") if any(c[3] == VERDICT_MARKS[v] for c in cells)]
    keys = "".join(f", NaN with boxes fs solid 1.0 noborder fc rgb {plots.gp_string(VERDICT_COLOURS[v])}"
                   f" title {plots.gp_string(VERDICT_MARKS[v] + ' ' + v)}" for v in shown)
    title = f"Scorecard: {len(sc)} claims, verdict and per node count"
    stem = Path(outdir) / name
    files, data = _draw(stem, title, cells, columns, rows, keys)
    table = pd.DataFrame(cells, columns=["col", "row", "rgb", "mark"])
    return Figure(stem.name, "scorecard", title, files, data, table)


def speed_ratio(row: pd.Series) -> float:
    """The packet engine's speed relative to the flow model's (>1: the packet engine faster)."""
    r = float(row["packet_vs_flow"])
    if not math.isfinite(r) or r <= 0:
        return math.nan
    return 1.0 / r if better_for(row["unit"]) == "lower" else r


def _ratio_rgb(ratio: float) -> int:
    t = max(-1.0, min(1.0, math.log(ratio, RATIO_SPAN)))
    end = FASTER if t > 0 else SLOWER
    r, g, b = (round(e + abs(t) * (x - e)) for e, x in zip(EQUAL, end))
    return (r << 16) | (g << 8) | b


def ratio_grid(side: pd.DataFrame, combos: list[str], outdir: Path,
               name: str = "engines-ratio") -> Figure | None:
    """Benchmark × (combo, nodes) of the packet engine's speed over the flow model's."""
    if side is None or side.empty:
        return None
    side = side.assign(speed=side.apply(speed_ratio, axis=1)).dropna(subset=["speed"])
    if side.empty:
        return None
    benches = sorted(side["benchmark"].unique())
    order = [c for c in combos if c in set(side["combo"])] + \
        sorted(set(side["combo"]) - set(combos))
    columns = [(c, int(n)) for c in order
               for n in sorted(side.loc[side["combo"] == c, "nodes"].unique())]
    at = {(r.benchmark, r.combo, int(r.nodes)): r.speed for r in side.itertuples()}
    found = [(ci, ri, b, c, n, s) for ri, b in enumerate(benches)
             for ci, (c, n) in enumerate(columns) if (s := at.get((b, c, n))) is not None]
    cells = [[ci, ri, _ratio_rgb(s), f"{s:.2f}"] for ci, ri, *_, s in found]
    title = "Packet engine's speed / flow model's (>1 faster, <1 slower), largest message size"
    stem = Path(outdir) / name
    files, data = _draw(stem, title, cells, [f"{c} · {n}" for c, n in columns], benches)
    table = pd.DataFrame([f[2:] for f in found],
                         columns=["benchmark", "combo", "nodes", "speed ratio"])
    return Figure(stem.name, "engines-ratio", title, files, data, table)
