"""Seed 001 Figs 3.10–3.12, 4.6–4.8 and 5.6–5.11: each collective's time per message size,
small and large messages in separate figures as §3.4.2, §4.5.2 and §5.2.2 split them, one
set per group of combos the study's ``imb`` benchmark names under ``figures:`` (the random
shortcut network's mappings, the circulant network's, the three networks).

A combo whose ranks were re-placed by two-opt for one collective is drawn only in that
collective's figures (the thesis tunes each collective's placement for that collective);
every other combo is drawn in all of them.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from t2hx.errors import ConfError
from t2hx.post import figures as F
from t2hx.post.figures import Figure
from t2hx.study import Study, split_placement

#: §5.2.2: "The small size includes 256B, 1KB, 4KB, and 16 KB. The large size has 64KB,
#: 256KB, and 1MB." (IMB's -msglog runs every power of two between: the others are left out.)
SMALL = (256, 1024, 4096, 16384)
LARGE = (65536, 262144, 1048576)
IMB_PREFIX = "imb-"
EXECUTION_TIME = "t_max"


def tuned_for(study: Study, combo: str) -> str | None:
    """The collective a combo's two-opt placement was tuned for, or None."""
    try:
        refine = split_placement(study.combo(combo).placement)[1]
    except (ConfError, ValueError):     # a combo the study no longer has
        return None
    return refine[1] if refine else None


def groups(study: Study, combos: list[str]) -> dict[str, list[str]]:
    """Figure group → its combos: the imb benchmark's ``figures:`` (seed 001 draws the random
    shortcut network's mappings in Chapter 3, the circulant network's in Chapter 4 and the
    three networks in Chapter 5), else one unnamed group of every combo."""
    spec = (study.catalog.get("imb") or {}).get("figures") or {"": combos}
    return {name: [c for c in members if c in combos] for name, members in spec.items()}


def figures(g: pd.DataFrame, study: Study, combos: list[str], fig_dir: Path) -> list[Figure]:
    out: list[Figure] = []
    for bench in sorted(b for b in g["benchmark"].dropna().unique()
                        if str(b).startswith(IMB_PREFIX)):
        rows = g[g["benchmark"] == bench]
        metrics = sorted(rows["metric"].dropna().unique())
        # The thesis' execution time is the time to run the collective ten times (§3.4.2):
        # the end of its last rank, IMB's t_max, not the fastest rank's t_min.
        metric = EXECUTION_TIME if EXECUTION_TIME in metrics else F.primary_metric(bench, metrics)
        if metric is None:
            continue
        collective = bench.removeprefix(IMB_PREFIX)
        for group, members in groups(study, combos).items():
            shown = [c for c in members if tuned_for(study, c) in (None, collective)]
            out += _sized(g, bench, metric, collective, group, shown, fig_dir)
    return out


def _sized(g: pd.DataFrame, bench: str, metric: str, collective: str, group: str,
           shown: list[str], fig_dir: Path) -> list[Figure]:
    out = []
    prefix = f"collective-{group}-" if group else "collective-"
    rows = g[g["benchmark"] == bench]
    for nodes in sorted(rows["nodes"].dropna().unique()):
        at = g["benchmark"].eq(bench) & g["nodes"].eq(nodes)
        for part, sizes in (("small", g["msg_size"].isin(SMALL)),
                            ("large", g["msg_size"].isin(LARGE))):
            fig = F.lines(g, bench, metric, "msg_size", shown, fig_dir,
                          f"{prefix}{collective}-{int(nodes)}-{part}",
                          f"{collective}: {metric} per message size, {int(nodes)} nodes "
                          f"({part} messages{', ' + group if group else ''})",
                          where=at & sizes)
            if fig is not None:
                out.append(fig)
    return out
