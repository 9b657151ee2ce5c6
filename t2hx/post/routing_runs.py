"""One benchmark case run under several routings, on the packet engine and on its flow-model
companion, as labelled bars: seed 004 Fig 8 (MPI_Alltoall, 1 MiB to every peer, 28 nodes
under fat-tree, DFSSSP and SAR routing; the runtime of the slowest process).

Fig 8 also draws the theoretical peak, "assuming all data can be transferred without
congestion and MPI library overhead": for an Alltoall of ``n`` ranks and ``S`` bytes per
peer, every node sends ``(n − 1)·S`` through its one link, so ``t_peak = (n − 1)·S / B`` with
``B`` the plane's data rate (``gbps`` of the conf). The figure's table keeps, per bar, the
runtime above that peak (the congestion overhead the paper says SAR halves against fat-tree).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from t2hx.conf import ENGINES
from t2hx.post import plots
from t2hx.post.figures import Figure, bytes_label
from t2hx.post.store import write_text

#: The metric of Fig 8 per benchmark: the slowest process's time.
METRIC = {"imb-alltoall": "t_max"}
COLUMNS = ["combo", "routing", "engine", "t_us", "peak_us", "overhead_us"]


def figures(results: pd.DataFrame, flow: pd.DataFrame, fig_dir: Path,
            rate_of: Callable[[str, str], float | None]) -> list[Figure]:
    """One figure per (benchmark, node count) of the benchmarks in METRIC; ``rate_of(system,
    partition)`` is the link data rate in bytes/s of the rows' conf system and partition
    (None: no peak line). ``system`` of the rows is their conf system (ingest.row_systems)."""
    both = pd.concat([results.assign(engine="packet"), flow.assign(engine="flow")]) \
        if not flow.empty else results.assign(engine="packet")
    both = both[both["benchmark"].isin(list(METRIC)) &
                (both["metric"] == both["benchmark"].map(METRIC))]
    figs = []
    for (bench, nodes), grp in both.groupby(["benchmark", "nodes"], sort=True):
        grp = grp[grp["msg_size"] == grp["msg_size"].max()]
        figs.append(_bars(grp, str(bench), int(nodes), fig_dir, rate_of))
    return figs


def _bars(grp: pd.DataFrame, bench: str, nodes: int, fig_dir: Path,
          rate_of: Callable[[str, str], float | None]) -> Figure:
    size = int(grp["msg_size"].iloc[0])
    rate = rate_of(str(grp["system"].iloc[0]), str(grp["partition"].iloc[0]))
    peak = (nodes - 1) * size / rate * 1e6 if rate else float("nan")
    best = grp.groupby(["combo", "routing", "engine"], sort=False)["value"].min().reset_index()
    # Fig 8's order: packet engine first, routings in OpenSM's engine order (ftree, DFSSSP, SAR)
    order = {e: k for k, e in enumerate(ENGINES)}
    best = best.sort_values(["engine", "routing"], ascending=[False, True],
                            key=lambda col: col.map(order) if col.name == "routing" else col)
    table = best.rename(columns={"value": "t_us"}).assign(peak_us=peak)
    table["overhead_us"] = table["t_us"] - peak
    table = table[COLUMNS]
    name = f"routings-{bench}-{nodes}"
    title = f"{bench}, {bytes_label(int(size))} per peer, {nodes} nodes: slowest process per routing"
    stem = fig_dir / name
    data = stem.with_suffix(".dat")
    rows = [[f"{r.routing} ({r.engine})", r.t_us / 1e3, f"{r.t_us / 1e3:.2f}"]
            for r in table.itertuples()]
    write_text(data, plots.table_text(None, rows, f"{title}\nrouting\tms\tlabel"))
    # the peak's label in the right margin, where no bar or bar label can be under it
    extra = (f"set rmargin 10; set arrow from graph 0, first {peak / 1e3:.6g} to graph 1, first "
             f"{peak / 1e3:.6g} nohead dt 2 front; set label \"peak\\n{peak / 1e3:.2f} ms\" at "
             f"graph 1, first {peak / 1e3:.6g} left offset 0.8,0 front font ',7'") \
        if peak == peak else ""
    ymax = 1.25 * max([*table["t_us"], peak if peak == peak else 0.0]) / 1e3
    files = plots.render("bars", data, stem, {"title": title, "ylabel_text": "time [ms]",
                                              "ymax": round(ymax, 3), "figw": 5.5,
                                              "extra": extra})
    return Figure(name, "routing-runs", title, files, data, table)
