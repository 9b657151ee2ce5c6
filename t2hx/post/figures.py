"""Every figure of the paper from the tidy tables: data file (pandas) → gnuplot (plots.py).

Which figure a benchmark gets follows from its data, not from a list of names:

* several message sizes (IMB collectives, ring allreduce, PingPong) → relative-gain grid
  (seed 000 Fig 4) of its primary metric, plus a line plot for ring allreduce;
* one or no message size (apps, x500, eBB, mpiGraph) → whisker plot (Fig 5b–6);
* unit ``runs`` (the capacity check: one perf variable per app, named after the app) →
  capacity bars (Fig 7);
* mpiGraph matrices → heatmaps (Fig 1); eBB → bandwidth vs nodes lines;
* fabric-engine analysis files → EFI histogram and dark-fiber bars (t2hx.post.routing).

Each function returns :class:`Figure` records (files + the table behind the figure) and never
raises for one bad figure: the caller lists failures like skipped inputs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from t2hx import benchmarks
from t2hx.post import plots
from t2hx.post.store import write_text

# Preferred metric per benchmark (first one present wins), seed 000 Table 2.
PRIMARY = {
    "imb-pingpong": ["t"], "imb-": ["t_min"], "ebb": ["bandwidth"], "ring-allreduce": ["t_avg"],
    "mpigraph": ["send_avg"], "hpl": ["gflops"], "hpcg": ["gflops"],
    "graph500": ["bfs_harmonic_mean_teps", "bfs_median_teps"],
    "amg": ["solver_walltime", "solve_time", "fom"],
    "comd": ["solver_walltime", "loop_time", "atom_update_rate"],
    "minife": ["solver_walltime", "cg_time"], "swfft": ["solver_walltime", "forward_time"],
    "milc": ["solver_walltime", "time"], "qbox": ["solver_walltime", "iteration_time"],
    "ffvc": ["solver_walltime"], "mvmc": ["solver_walltime", "total_time"],
    "ntchem": ["solver_walltime", "wall_time"],
}
MAX_SIZES = 6  # message sizes per node count in a gain grid (log-spaced pick)
GIB = 1024.0


@dataclass
class Figure:
    name: str
    kind: str
    title: str
    files: list[Path] = field(default_factory=list)
    data: Path | None = None
    table: pd.DataFrame | None = None


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-").lower() or "x"


def primary_metric(bench: str, metrics: list[str]) -> str | None:
    hit = benchmarks.find(bench)            # the registry's Table 2 metric first
    if hit is not None and hit[0].metric in metrics:
        return hit[0].metric
    for prefix, prefs in PRIMARY.items():
        if bench == prefix or (prefix.endswith("-") and bench.startswith(prefix)):
            for m in prefs:
                if m in metrics:
                    return m
    return sorted(metrics)[0] if metrics else None


def size_label(size: int) -> str:
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div}{unit}"
    return str(size)


def bytes_label(size: int) -> str:
    """A byte count as people write it (axes, report cells): 0 B, 512 B, 8 KiB, 4 MiB, 2 GiB
    (exact units only)."""
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"


def pick_sizes(sizes: list[int]) -> list[int]:
    """At most MAX_SIZES sizes, log-spaced, always including the smallest and largest."""
    sizes = sorted(set(sizes))
    if len(sizes) <= MAX_SIZES:
        return sizes
    idx = np.unique(np.round(np.linspace(0, len(sizes) - 1, MAX_SIZES)).astype(int))
    return [sizes[i] for i in idx]


def _keys_macro(combos: list[str], shown: list[str] | None = None) -> str:
    """Legend entries of ``shown`` (default: all), each in its colour among ``combos``."""
    return "".join(f", NaN with boxes lc {combos.index(c) + 1} fs solid 0.35 title "
                   f"{plots.gp_string(c)}" for c in (combos if shown is None else shown))


# --- Fig 4: relative-gain grids ---------------------------------------------------------------

def gain_grid(g: pd.DataFrame, bench: str, metric: str, combos: list[str], baseline: str,
              outdir: Path) -> Figure:
    sub = g[(g["benchmark"] == bench) & (g["metric"] == metric) & g["nodes"].notna()
            & g["msg_size"].notna()]
    # A combo that ran none of this benchmark (an extra combo such as Fig 1's PARX/linear)
    # gets no row: an empty row reads as a missing result.
    rows_combos = [c for c in combos if c != baseline and (sub["combo"] == c).any()]
    columns: list[tuple[int, int]] = []
    for nodes in sorted(sub["nodes"].unique()):
        sizes = pick_sizes([int(s) for s in sub.loc[sub["nodes"] == nodes, "msg_size"]])
        columns.extend((int(nodes), s) for s in sizes)
    cell = {(int(r.nodes), int(r.msg_size), r.combo): r.gain for r in sub.itertuples()}
    rows = []
    for ri, combo in enumerate(rows_combos):
        for ci, (nodes, size) in enumerate(columns):
            rows.append([ci, ri, cell.get((nodes, size, combo), np.nan), nodes, size, combo])
    table = pd.DataFrame(rows, columns=["col", "row", "gain", "nodes", "msg_size", "combo"])
    stem = outdir / f"gain-grid-{slug(bench)}"
    title = f"{bench} {metric}: relative gain vs {baseline} (best of N)"
    data = stem.with_suffix(".dat")
    write_text(data, plots.table_text(None, rows, f"{title}\ncol\trow\tgain\tnodes\tmsg_size\tcombo"))
    xt = ", ".join(f'"{size_label(s)}" {i}' for i, (_, s) in enumerate(columns))
    yt = ", ".join(f'"{c}" {i}' for i, c in enumerate(rows_combos))
    extra = [f"set xtics ({xt})" if xt else "", f"set ytics ({yt})" if yt else ""]
    for nodes in sorted({n for n, _ in columns}):
        idx = [i for i, (n, _) in enumerate(columns) if n == nodes]
        extra.append(f'set label "{nodes} nodes" at first {np.mean(idx)}, graph 1 offset 0,0.8 center font ",7"')
        if idx[0] > 0:
            extra.append(f"set arrow from {idx[0] - 0.5},-0.5 to {idx[0] - 0.5},"
                         f"{len(rows_combos) - 0.5} nohead lc rgb '#444444' lw 1.2 front")
    finite = table["gain"].abs().replace([np.inf], np.nan).dropna()
    cbmax = float(min(max(finite.max() if len(finite) else 0.5, 0.1), 2.0))
    files = plots.render("gain_grid", data, stem, {
        "title": title, "ncols": max(len(columns), 1), "nrows": max(len(rows_combos), 1),
        "cbmax": round(cbmax, 3), "extra": "; ".join(e for e in extra if e),
        "figw": min(max(3.0 + 0.28 * len(columns), 4.5), 10.0),
        "figh": 1.2 + 0.35 * max(len(rows_combos), 1)})
    return Figure(stem.name, "gain-grid", title, files, data, table)


# --- Fig 5b-6: whisker plots ------------------------------------------------------------------

def whisker(g: pd.DataFrame, bench: str, metric: str, combos: list[str], baseline: str,
            outdir: Path, msg_size: int | None = None) -> Figure:
    sub = g[(g["benchmark"] == bench) & (g["metric"] == metric)]
    node_list = sorted(int(n) for n in sub["nodes"].dropna().unique())
    unit = str(sub["unit"].dropna().iloc[0]) if sub["unit"].notna().any() else ""
    better = str(sub["better"].dropna().iloc[0]) if sub["better"].notna().any() else ""
    by = {(int(r.nodes), r.combo): r for r in sub.itertuples() if pd.notna(r.nodes)}
    shown = [c for c in combos if (sub["combo"] == c).any()]   # no legend for a combo not run
    width = len(shown) + 1
    rows, table_rows = [], []
    for gi, nodes in enumerate(node_list):
        for ci, combo in enumerate(shown):
            r = by.get((nodes, combo))
            if r is None:
                continue
            x = gi * width + ci
            gain = r.gain if combo != baseline else np.nan
            label = f"{gain:+.0%}" if pd.notna(gain) else "NaN"
            label_y = r.max if pd.notna(gain) else np.nan
            rows.append([x, combos.index(combo) + 1, nodes, r.min, r.q1, r.median, r.q3,
                         r.max, gain, label_y, label])
            table_rows.append([nodes, combo, int(r.runs), r.min, r.q1, r.median, r.q3, r.max,
                               r.best, gain])
    table = pd.DataFrame(table_rows, columns=["nodes", "combo", "runs", "min", "q1", "median",
                                              "q3", "max", "best", "gain"])
    stem = outdir / f"whisker-{slug(bench)}-{slug(metric)}"
    arrow = "lower is better" if better == "lower" else "higher is better" if better else ""
    title = f"{bench} {metric} ({arrow}); label = best-run gain vs {baseline}"
    data = stem.with_suffix(".dat")
    header = "x\tcombo_idx\tnodes\tmin\tq1\tmedian\tq3\tmax\tgain\tlabel_y\tgain_label"
    write_text(data, plots.table_text(None, rows, f"{title}\n{header}"))
    xt = ", ".join(f'"{n}" {gi * width + (len(shown) - 1) / 2}' for gi, n in enumerate(node_list))
    values = table[["min", "max"]].to_numpy(dtype=float)
    logy = bool(values.size and np.nanmin(values) > 0 and np.nanmax(values) / np.nanmin(values) > 50)
    extra = [f"set xtics ({xt})" if xt else "",
             f"set xrange [-1:{max(len(node_list), 1) * width - 1}]",
             "set offsets 0,0,graph 0.08,0"]
    files = plots.render("whisker", data, stem, {
        "title": title, "ylabel_text": f"{metric} [{unit}]", "logy": logy,
        "keys": _keys_macro(combos, shown), "extra": "; ".join(e for e in extra if e),
        "figw": min(max(3.5, 1.0 + 0.18 * len(rows)), 10.0), "figh": 3.0})
    return Figure(stem.name, "whisker", title, files, data, table)


# --- Fig 7: capacity --------------------------------------------------------------------------

def capacity_lengths(logdir: Path) -> pd.DataFrame:
    """Per (combo, app) of the campaign's capacity records (log/<campaign>/capacity/, real or
    simulated): the mean length of its finished runs in the window and, when simulated, one
    run alone and its parts (launch, set-up + teardown, solve; wire.capacity_lengths)."""
    from t2hx import wire

    rows = []
    for out in sorted(Path(logdir).glob("capacity/**/rfm_job.out")):
        m = re.match(r"capacity_(.+)_r(\d+)$", out.parent.name)
        if not m:
            continue
        text = out.read_text(errors="replace")
        parts = wire.capacity_lengths(text)
        took: dict[str, list[float]] = {}
        for e in wire.capacity_events(text):
            if e.event == "finished":
                took.setdefault(e.app, []).append(float(e.fields["end"]) -
                                                  float(e.fields["start"]))
        for app in sorted(set(took) | set(parts)):
            runs = took.get(app, [])
            rows.append({"combo": m.group(1), "app": app, "runs": len(runs),
                         "run_s": float(np.mean(runs)) if runs else np.nan,
                         **{f"{k}_s": v for k, v in parts.get(app, {}).items() if k != "nodes"},
                         "nodes": parts.get(app, {}).get("nodes", np.nan)})
    return pd.DataFrame(rows)


def capacity(results: pd.DataFrame, combos: list[str], outdir: Path,
             lengths: pd.DataFrame | None = None) -> Figure | None:
    """Finished runs per app and combo (seed 000 Fig 7); with ``lengths``
    (:func:`capacity_lengths`), each app's label names the run length used (its mean
    finished run over the combos) and the table gives it per combo with its parts."""
    sub = results[results["unit"] == "runs"]
    if sub.empty:
        return None
    # Several capacity windows (repetitions) → the mean finished runs per window.
    wide = sub.groupby(["metric", "combo"])["value"].mean().unstack("combo")
    wide = wide.reindex(columns=[c for c in combos if c in wide.columns])
    stem = outdir / "capacity"
    title = "Capacity: finished runs per app and combo"
    data = stem.with_suffix(".dat")
    run_s = (lengths.groupby("app")["run_s"].mean() if lengths is not None and len(lengths)
             else pd.Series(dtype=float))
    label = {app: (f"{app} ({run_s[app]:.3g} s)" if app in run_s and np.isfinite(run_s[app])
                   else app) for app in wide.index}
    rows = [[label[app]] + [wide.loc[app, c] for c in wide.columns] for app in wide.index]
    write_text(data, plots.table_text(["app"] + list(wide.columns), rows, title + (
        "\nlabel: app (mean length of its finished runs, s)" if len(run_s) else "")))
    # Short apps finish thousands of runs, long ones a handful: a linear axis hides the
    # latter, so a wide spread gets a log axis (the table keeps the numbers).
    positive = wide.to_numpy(dtype=float)
    positive = positive[positive > 0]
    spread = positive.max() / positive.min() if positive.size else 1.0
    extra = ('set logscale y; set yrange [0.5:*]; set ylabel "finished runs (log scale)"'
             if spread > 100 else "")
    files = plots.render("capacity", data, stem, {
        "title": title, "ncombos": len(wide.columns), "extra": extra,
        "figw": min(max(4.5, 1.0 + 0.12 * len(rows) * max(len(wide.columns), 1)), 7.0)})
    table = wide.reset_index().rename(columns={"metric": "app"})
    if len(run_s):
        table = table.merge(_length_columns(lengths, list(wide.columns)), on="app", how="left")
    return Figure(stem.name, "capacity", title, files, data, table)


def _length_columns(lengths: pd.DataFrame, combos: list[str]) -> pd.DataFrame:
    """Per app: the mean finished run per combo (``run_s <combo>``) and, when simulated, the
    parts of one run alone (the combos' mean)."""
    per = lengths.groupby(["app", "combo"])["run_s"].mean().unstack("combo")
    per = per.reindex(columns=[c for c in combos if c in per.columns])
    per.columns = [f"run_s {c}" for c in per.columns]
    parts = [c for c in ("nodes", "launch_s", "setup_s", "solve_s", "alone_s")
             if c in lengths.columns]
    alone = lengths.groupby("app")[parts].mean() if parts else None
    out = per if alone is None else alone.join(per)
    return out.reset_index()


# --- Fig 1: mpiGraph heatmaps -----------------------------------------------------------------

def _best_matrices(results: pd.DataFrame, matrices: pd.DataFrame):
    """Per (combo, nodes): the Send-avg row of the best run (the number Fig 1 reports) and
    that run's send matrix, rows and columns in rank order."""
    avg = results[(results["benchmark"] == "mpigraph") & (results["metric"] == "send_avg")]
    send = matrices[matrices["kind"] == "send"]
    for (combo, nodes), runs in send.groupby(["combo", "nodes"], sort=True):
        cand = avg[(avg["combo"] == combo) & (avg["nodes"] == nodes)]
        cand = cand[cand["source"].isin(runs["source"].unique())]
        if cand.empty:
            continue
        best = cand.sort_values(["value", "source"], ascending=[False, True]).iloc[0]
        yield combo, int(nodes), best, runs[runs["source"] == best["source"]].sort_values(
            ["row", "col"])


def _matrix_lines(m: pd.DataFrame) -> list[str]:
    lines = []
    for _, cells in m.groupby("row", sort=True):
        lines += [f"{int(c.row)}\t{int(c.col)}\t{plots.fmt(c.value / GIB)}"
                  for c in cells.itertuples()]
        lines.append("")
    return lines


def _ranks(m: pd.DataFrame) -> int:
    return int(max(m["row"].max(), m["col"].max()) + 1)


def _cbmax(matrices: pd.DataFrame) -> float:
    """One colour scale for every matrix of the log, so that pictures compare."""
    return round(max(float(matrices.loc[matrices["kind"] == "send", "value"].max()) / GIB,
                     1e-3), 4)


def mpigraph_heatmaps(results: pd.DataFrame, matrices: pd.DataFrame, combos: list[str],
                      outdir: Path) -> list[Figure]:
    if matrices.empty:
        return []
    figs = []
    for combo, nodes, best, m in _best_matrices(results, matrices):
        stem = outdir / f"mpigraph-{slug(combo)}-{nodes}"
        title = f"mpiGraph {combo}, {nodes} nodes: average {best['value'] / GIB:.2f} GiB/s"
        data = stem.with_suffix(".dat")
        write_text(data, "\n".join([f"# {title}", "# sender\treceiver\tGiB/s",
                                     *_matrix_lines(m)]) + "\n")
        files = plots.render("heatmap", data, stem, {"title": title, "n": _ranks(m),
                                                     "cbmax": _cbmax(matrices),
                                                     "figw": 4.0, "figh": 3.4})
        table = pd.DataFrame([{"combo": combo, "nodes": nodes,
                               "avg_GiB_s": best["value"] / GIB, "source": best["source"]}])
        figs.append(Figure(stem.name, "mpigraph", title, files, data, table))
    return figs


def mpigraph_pairs(results: pd.DataFrame, matrices: pd.DataFrame, combos: list[str],
                   outdir: Path) -> list[Figure]:
    """Seed 000 Fig 1's layout: per node count, the first combo's matrix (the baseline) beside
    the last combo's that ran at that count (seed 000: PARX, and at 28 nodes the extra
    PARX/linear combo of Fig 1), one colour scale, each average in its panel's title."""
    if matrices.empty or len(combos) < 2:
        return []
    best = {(c, n): (b, m) for c, n, b, m in _best_matrices(results, matrices)}
    figs = []
    for nodes in sorted({n for _, n in best}):
        ran = [c for c in combos if (c, nodes) in best]
        if len(ran) < 2 or ran[0] != combos[0]:
            continue
        left, right = ran[0], ran[-1]
        (lb, lm), (rb, rm) = best[(left, nodes)], best[(right, nodes)]
        stem = outdir / f"mpigraph-pair-{nodes}"
        title = f"mpiGraph, {nodes} nodes: {left} beside {right}"
        panels = [f"{c}: average {b['value'] / GIB:.2f} GiB/s" for c, b in ((left, lb), (right, rb))]
        data = stem.with_suffix(".dat")
        # two gnuplot data sets (index 0 and 1), separated by two blank lines
        write_text(data, "\n".join([f"# {title}", "# sender\treceiver\tGiB/s",
                                     *_matrix_lines(lm), "", *_matrix_lines(rm)]) + "\n")
        files = plots.render("heatmap_pair", data, stem, {
            "title": title, "left_title": panels[0], "right_title": panels[1],
            "n": max(_ranks(lm), _ranks(rm)), "cbmax": _cbmax(matrices),
            "figw": 7.2, "figh": 3.4})
        table = pd.DataFrame([{"combo": c, "nodes": nodes, "avg_GiB_s": b["value"] / GIB,
                               "source": b["source"]} for c, b in ((left, lb), (right, rb))])
        figs.append(Figure(stem.name, "mpigraph", title, files, data, table))
    return figs


# --- eBB and ring allreduce lines -------------------------------------------------------------

def lines(g: pd.DataFrame, bench: str, metric: str, x: str, combos: list[str], outdir: Path,
          name: str, title: str, where: pd.Series | None = None) -> Figure | None:
    sub = g[(g["benchmark"] == bench) & (g["metric"] == metric) & g[x].notna()]
    if where is not None:
        sub = sub[where.reindex(sub.index, fill_value=False)]
    sized = x == "msg_size"
    if sized:          # message sizes span 9 decades: a log axis, where 0 B has no place
        sub = sub[sub[x] > 0]
    if sub.empty:
        return None
    wide = sub.pivot_table(index=x, columns="combo", values="best", aggfunc="first")
    wide = wide.reindex(columns=[c for c in combos if c in wide.columns]).sort_index()
    unit = str(sub["unit"].dropna().iloc[0]) if sub["unit"].notna().any() else ""
    stem = outdir / name
    data = stem.with_suffix(".dat")
    rows = [[int(i)] + [wide.loc[i, c] for c in wide.columns] for i in wide.index]
    write_text(data, plots.table_text([x] + list(wide.columns), rows, title))
    xs = [int(i) for i in wide.index]
    logx = sized or (len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) >= 16)
    vals = wide.to_numpy(dtype=float)
    logy = bool(np.isfinite(vals).any() and np.nanmin(vals) > 0
                and np.nanmax(vals) / np.nanmin(vals) > 100)
    files = plots.render("lines", data, stem, {
        "title": title, "nseries": len(wide.columns),
        "xlabel_text": "message size" if sized else x.replace("_", " "),
        "ylabel_text": f"{metric} [{unit}] (best of N)", "logx": logx, "logy": logy,
        "style": "linespoints", "ratio": sized and len(wide.columns) > 1,
        "ratio_label": f"÷ {wide.columns[0]}" if len(wide.columns) else "",
        "extra": "set xtics (" + ", ".join(f'"{bytes_label(s)}" {s}' for s in xs) + ")"
        if sized else ""})
    return Figure(stem.name, "lines", title, files, data, wide.reset_index())
