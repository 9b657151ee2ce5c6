"""The figures of seed 001's generated networks (study ``networks:``), from the analyses the
network check keeps in ``log/<campaign>/networks/`` (checks/network.py):

* ``network-diameter``, ``network-aspl``: per kind over the network size (Figs 5.1, 5.2);
* ``network-<collective>-hops``: total hops of binomial Broadcast, recursive-doubling
  Allreduce, Bruck Alltoall over all N nodes, per kind and mapping (Figs 5.3–5.5);
* ``network-p2p-hops``: mean point-to-point hops among the mapped nodes at one size, per
  kind and mapping (Fig 5.12);
* ``network-p2p-time``: mean time of a point-to-point exchange among the mapped nodes, per
  kind and mapping, when the analysis timed it (Fig 5.13);
* ``network-mix-<n>``: total hops of 102,400 messages among n mapped nodes at one size as
  the share of Alltoall messages grows from 0 to 1, the rest point to point (Fig 5.14);
* ``network-cable-length``: mean inter-switch cable length in §5.6's layout (Fig 5.19);
* ``network-twoopt``: the two-opt tables (Tables 3.4–3.6).
* ``network-annealing-hops`` / ``network-annealing-time``: a Broadcast's total hops on an
  8-degree random network, conventional, two-opt and simulated annealing, and the CPU time
  of each re-placement (Figs 3.17, 3.18).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from t2hx import wire
from t2hx.placement.collective_messages import COLLECTIVES
from t2hx.post import archive, plots
from t2hx.post.figures import Figure
from t2hx.post.store import write_text

KINDS = ("circulant", "random-shortcut", "dragonfly")
MIX_MESSAGES = 102_400          # §5.4: mn + p = 102,400
RATIOS = [k / 10 for k in range(11)]
TITLES = {"bcast": "binomial Broadcast", "allreduce": "recursive-doubling Allreduce",
          "alltoall": "Bruck Alltoall"}


def load(logdir: Path) -> list[dict]:
    """Every kept analysis, smallest network first."""
    out = []
    with archive.folder(Path(logdir), "networks") as root:
        for path in sorted(root.glob(f"networks/*/*/network_*/{wire.NETWORK_ROWS}")):
            out.append(json.loads(path.read_text()))
    return sorted(out, key=lambda r: (r["switches"], r["kind"]))


def frames(analyses: list[dict]) -> dict[str, pd.DataFrame]:
    """Tidy tables: ``networks`` (one row per analysis), ``collectives``, ``p2p``, ``twoopt``,
    ``annealing`` (each with the network's kind and switches)."""
    head = pd.DataFrame([{k: v for k, v in a.items() if not isinstance(v, list)}
                         for a in analyses])
    out = {"networks": head}
    for part in ("collectives", "p2p", "twoopt", "annealing"):
        rows = [{"kind": a["kind"], "switches": a["switches"], **r}
                for a in analyses for r in a.get(part, [])]
        out[part] = pd.DataFrame(rows)
    return out


def figures(logdir: Path, fig_dir: Path) -> list[Figure]:
    analyses = load(logdir)
    if not analyses:
        return []
    t = frames(analyses)
    net = t["networks"]
    figs = [_sized(net, "diameter", "diameter [hops]", "network-diameter",
                   "Diameter per network size (degree 2·log2 N − 1)", fig_dir),
            _sized(net, "aspl", "average shortest path length [hops]", "network-aspl",
                   "Average shortest path length per network size", fig_dir)]
    coll = t["collectives"]
    for c in COLLECTIVES:
        sub = coll[coll["collective"] == c].assign(series=lambda d: d["kind"] + " " + d["mapping"])
        figs.append(_sized(sub, "hops", "total hops", f"network-{c}-hops",
                           f"Total hops of {TITLES[c]} over all nodes", fig_dir,
                           series="series", logy=True))
    if len(t["p2p"]):
        p2p = t["p2p"].assign(series=lambda d: d["kind"] + " " + d["mapping"])
        size = int(p2p["switches"].iloc[0])
        figs.append(_sized(p2p, "mean_hops", "mean hops per message", "network-p2p-hops",
                           f"Point-to-point hops among the mapped nodes ({size} switches)",
                           fig_dir, series="series", x="nodes", xlabel="mapped nodes"))
        if "p2p_time_us" in p2p:
            size_b = int(p2p["p2p_bytes"].iloc[0])
            figs.append(_sized(p2p, "p2p_time_us", "mean exchange time [µs]", "network-p2p-time",
                               f"{size_b}-byte bidirectional exchange among the mapped nodes "
                               f"({size} switches)", fig_dir, series="series", x="nodes",
                               xlabel="mapped nodes"))
        if "alltoall_hops" in p2p:
            figs += [_mix(sub, int(n), size, fig_dir) for n, sub in p2p.groupby("nodes")]
    figs.append(_sized(net, "cable_mean_m", "mean cable length [m]", "network-cable-length",
                       "Mean inter-switch cable length (8 switches per cabinet, 2-D grid)",
                       fig_dir))
    if len(t["twoopt"]):
        figs.append(_twoopt(t["twoopt"], fig_dir))
    if len(t["annealing"]):
        sa = t["annealing"].assign(series=lambda d: d["kind"] + " " + d["mapping"])
        degree = int(sa["degree"].iloc[0])
        figs += [_sized(sa, "total_hops", "total hops of the Broadcast", "network-annealing-hops",
                        f"Broadcast over all nodes of a {degree}-degree random network: "
                        "conventional, two-opt, simulated annealing (§3.5)", fig_dir,
                        series="series", logy=True),
                 _sized(sa[sa["mapping"] != "conv"], "cpu_s", "CPU time [s]",
                        "network-annealing-time", "CPU time of the re-placement (this "
                        "machine, one core)", fig_dir, series="series", logy=True)]
    return figs


def _sized(rows: pd.DataFrame, value: str, ylabel: str, name: str, title: str, fig_dir: Path,
           series: str = "kind", logy: bool = False, x: str = "switches",
           xlabel: str = "switches") -> Figure:
    wide = rows.pivot_table(index=x, columns=series, values=value, aggfunc="first")
    order = [c for k in KINDS for c in wide.columns if str(c).split(" ")[0] == k]
    wide = wide.reindex(columns=order)
    stem = fig_dir / name
    data = stem.with_suffix(".dat")
    body = [[int(i)] + [wide.loc[i, c] for c in wide.columns] for i in wide.index]
    write_text(data, plots.table_text([x] + list(wide.columns), body, title))
    files = plots.render("lines", data, stem, {
        "title": title, "nseries": len(wide.columns), "xlabel_text": xlabel,
        "ylabel_text": ylabel, "logx": True, "logy": logy, "style": "linespoints",
        "extra": ""})
    return Figure(name, "network", title, files, data,
                  wide.rename_axis(columns=None).reset_index())


def mix_total(mean_hops: float, alltoall_hops: float, ratio: float) -> float:
    """§5.4: total hops of MIX_MESSAGES messages, ``ratio`` of them an Alltoall's."""
    return MIX_MESSAGES * (ratio * alltoall_hops + (1 - ratio) * mean_hops)


def crossover(subject: tuple[float, float], base: tuple[float, float]) -> float:
    """The collective share at which the subject's mix total meets the base's (each given
    as (point-to-point, alltoall) hops per message); NaN if the lines never meet in [0, 1]."""
    dp, da = subject[0] - base[0], subject[1] - base[1]
    if dp == da:
        return float("nan")
    r = dp / (dp - da)
    return r if 0.0 <= r <= 1.0 else float("nan")


def _mix(rows: pd.DataFrame, nodes: int, size: int, fig_dir: Path) -> Figure:
    series = list(rows["series"])
    stem = fig_dir / f"network-mix-{nodes}"
    data = stem.with_suffix(".dat")
    title = (f"Total hops of {MIX_MESSAGES:,} messages among {nodes} mapped nodes "
             f"({size} switches) by Alltoall share")
    body = [[r] + [round(mix_total(m, a, r), 1) for m, a in
                   zip(rows["mean_hops"], rows["alltoall_hops"])] for r in RATIOS]
    write_text(data, plots.table_text(["ratio"] + series, body, title))
    files = plots.render("lines", data, stem, {
        "title": title, "nseries": len(series), "xlabel_text": "collective (Alltoall) share",
        "ylabel_text": "total hops", "logx": False, "logy": False, "style": "linespoints",
        "extra": ""})
    return Figure(stem.name, "network-mix", title, files, data,
                  rows[["series", "mean_hops", "alltoall_hops"]].reset_index(drop=True))


def _twoopt(rows: pd.DataFrame, fig_dir: Path) -> Figure:
    table = rows[["collective", "mapping", "switches", "ranks", "initial", "final",
                  "reduction_pct", "iterations"]]
    name = "network-twoopt"
    title = "Two-opt on the random shortcut network: total hops before and after (Tables 3.4–3.6)"
    data = (fig_dir / name).with_suffix(".dat")
    write_text(data, plots.table_text(list(table.columns), table.values.tolist(), title))
    return Figure(name, "network-twoopt", title, [], data, table.reset_index(drop=True))
