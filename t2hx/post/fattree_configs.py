"""The figures of a study that compares systems (seed 003's fat-tree configurations, study
``figures: configs``): the equivalents of its Figs 6-10 and Table 5, from the tidy results
and the workload records (docs/fattree-configs.md#the-study).

A combo of such a study is (configuration = conf system, compute scale). Every number is
the best of N of a case, like every gain in t2hx (docs/modelling.md#relative-gain):

* Fig 6 ``configs-gain-comm``: per app, % gain of each configuration over the baseline's
  configuration, communication only (compute scale 0), at the largest node count;
* Fig 7 ``configs-spread``: per app and compute scale, % difference between the worst and the
  best configuration (t_worst / t_best - 1), largest node count;
* Fig 8 ``configs-scaling-x<k>``: per app and configuration, t(smallest nodes) / t(largest)
  at compute scale k: the speedup of seed 003's strong scaling for a stand-in that holds its
  process count (the study's ``ranks:``, 4 = perfect from 256 to 1,024 nodes), t(few) /
  t(many) of a weak-scaled input for the others (1 = perfect);
* Fig 9a ``configs-workload-gain``: per app, % gain in mean step time in the multi-job
  workload over the baseline's configuration; Fig 9b ``configs-workload-slowdown``: % slowdown
  of the step time in the workload over the same job alone;
* Fig 10 ``configs-throughput``: total normalised performance of the workloads,
  P_w = sum over jobs of (steps/s on this configuration) / (best over configurations),
  averaged over the workloads (seed 003 §6); Figs 9-10 are drawn at the workloads' largest
  compute scale (10x), and again as ``...-x<k>`` at each other one (§6's 2x);
* Table 5 ``configs-cost``: switches and cables per configuration (t2hx fabric cost), relative
  to the baseline's, beside Fig 10's performance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from t2hx.errors import T2hxError
from t2hx.post import plots
from t2hx.post.figures import Figure, primary_metric
from t2hx import wire
from t2hx.post.gain import gain
from t2hx.post.store import write_text

SKIP = ("imb", "ebb", "mpigraph", "workload")   # not apps: no compute to scale


def combo_table(study) -> pd.DataFrame:
    """combo → (config label, system, compute scale) for the study's combos."""
    systems = study.systems()
    prefix = _common_prefix(systems)
    rows = [{"combo": c.name, "system": c.system, "scale": float(c.compute_scale),
             "config": (c.system or "")[len(prefix):].upper()}
            for c in study.all_combos()]
    return pd.DataFrame(rows)


def _common_prefix(names: list[str]) -> str:
    if len(names) < 2:
        return ""
    head = names[0]
    while head and not all(n.startswith(head) for n in names):
        head = head[:-1]
    return head[:head.rfind("-") + 1] if "-" in head else head


def app_times(results: pd.DataFrame, combos: pd.DataFrame) -> pd.DataFrame:
    """Best-of-N solver time per (app, config, scale, nodes)."""
    rows = results[~results["benchmark"].isin(SKIP) & (results["unit"] == "s")]
    out = []
    for bench, sub in rows.groupby("benchmark"):
        metric = primary_metric(bench, sorted(sub["metric"].dropna().unique()))
        sub = sub[sub["metric"] == metric]
        best = sub.groupby(["combo", "nodes"], as_index=False)["value"].min()
        out.append(best.assign(app=bench))
    if not out:
        return pd.DataFrame(columns=["app", "combo", "nodes", "value", "config", "scale"])
    return pd.concat(out).merge(combos, on="combo")


def figures(results: pd.DataFrame, study, logdir: Path, outdir: Path) -> list[Figure]:
    combos = combo_table(study)
    base = combos.set_index("combo").loc[study.baseline, "config"]
    configs = list(dict.fromkeys(combos["config"]))
    times = app_times(results, combos)
    figs = [gain_comm(times, configs, base, outdir), spread(times, outdir)]
    figs += scaling(times, configs, outdir)
    jobs = workload_jobs(logdir, combos)
    perf = None
    # Seed 003 §6 runs its workloads at 2x, then at 10x for Figs 9-10: the largest scale
    # keeps the figures' names, another adds -x<k>.
    for k, scale in enumerate(sorted(jobs["scale"].unique(), reverse=True)):
        part, tag = jobs[jobs["scale"] == scale], Scale(scale, k == 0)
        figs += [workload_gain(part, configs, base, outdir, tag),
                 workload_slowdown(part, configs, outdir, tag)]
        fig = throughput(part, configs, outdir, tag)
        figs.append(fig)
        perf = fig if k == 0 else perf
    figs.append(cost_table(study, combos, configs, base,
                           perf.table if perf is not None else None, outdir))
    return [f for f in figs if f is not None]


@dataclass(frozen=True)
class Scale:
    """The compute scale of a set of workloads, and whether it names the figures alone."""
    value: float
    main: bool

    def name(self, stem: str) -> str:
        return stem if self.main else f"{stem}-x{self.value:g}"

    def title(self, text: str) -> str:
        return f"{text} ({self.value:g}x compute)"


def _bars(name: str, title: str, wide: pd.DataFrame, ylabel: str, outdir: Path,
          label: str = "app", extra: str = "") -> Figure:
    stem = outdir / name
    data = stem.with_suffix(".dat")
    rows = [[idx] + [wide.loc[idx, c] for c in wide.columns] for idx in wide.index]
    write_text(data, plots.table_text([label] + [str(c) for c in wide.columns], rows, title))
    files = plots.render("clustered", data, stem, {
        "title": title, "ncols": len(wide.columns), "ylabel_text": ylabel, "extra": extra,
        "figw": min(max(4.5, 1.0 + 0.12 * len(rows) * max(len(wide.columns), 1)), 7.0)})
    table = wide.reset_index().rename(columns={"index": label})
    return Figure(name, name.rsplit("-", 1)[0] if name.startswith("configs-scaling") else name,
                  title, files, data, table.round(4))


def _largest(times: pd.DataFrame) -> pd.DataFrame:
    return times[times["nodes"] == times["nodes"].max()] if len(times) else times


def gain_comm(times: pd.DataFrame, configs: list[str], base: str, outdir: Path
              ) -> Figure | None:
    """Fig 6: % gain over the baseline configuration, communication only."""
    sub = _largest(times[times["scale"] == 0])
    if sub.empty:
        return None
    wide = sub.pivot_table(index="app", columns="config", values="value")
    wide = wide.reindex(columns=[c for c in configs if c in wide.columns])
    if base not in wide.columns:
        return None
    pct = wide.apply(lambda col: 100 * gain(col, wide[base], "lower"))
    nodes = int(sub["nodes"].max())
    return _bars("configs-gain-comm", f"Communication only, {nodes} nodes: % gain over {base}",
                 pct, f"% gain over {base}", outdir)


def spread(times: pd.DataFrame, outdir: Path) -> Figure | None:
    """Fig 7: worst over best configuration, per app and compute scale."""
    sub = _largest(times)
    if sub.empty:
        return None
    g = sub.groupby(["app", "scale"])["value"].agg(["min", "max"])
    pct = (100 * (g["max"] / g["min"] - 1)).unstack("scale")
    pct.columns = [_scale_label(s) for s in pct.columns]
    nodes = int(sub["nodes"].max())
    return _bars("configs-spread", f"Worst vs best configuration by compute scale, {nodes} "
                 "nodes", pct, "% (t_worst / t_best - 1)", outdir)


def _scale_label(scale: float) -> str:
    return "comm only" if scale == 0 else f"{scale:g}x"


def scaling(times: pd.DataFrame, configs: list[str], outdir: Path) -> list[Figure]:
    """Fig 8: t(fewest nodes) / t(most nodes) per app and configuration, at 2x and 10x."""
    figs: list[Figure] = []
    counts = sorted(times["nodes"].unique()) if len(times) else []
    if len(counts) < 2:
        return figs
    lo, hi = counts[0], counts[-1]
    for scale in (2.0, 10.0):
        sub = times[times["scale"] == scale]
        wide = sub.pivot_table(index=["app", "config"], columns="nodes", values="value")
        if lo not in wide.columns or hi not in wide.columns:
            continue
        ratio = (wide[lo] / wide[hi]).unstack("config")
        ratio = ratio.reindex(columns=[c for c in configs if c in ratio.columns])
        figs.append(_bars(f"configs-scaling-x{scale:g}", f"Scaling {lo} -> {hi} nodes at "
                          f"{scale:g}x compute: t({lo}) / t({hi})", ratio,
                          f"t({lo}) / t({hi})", outdir))
    return figs


# --- multi-job workloads (Figs 9-10) ------------------------------------------------------

def workload_jobs(logdir: Path, combos: pd.DataFrame) -> pd.DataFrame:
    """One row per job of every recorded workload: combo, workload, job, app, step times."""
    rows = []
    pattern = re.compile(r"^workload_(.+)_w(\d+)$")
    for path in sorted(Path(logdir).glob("workloads/*/*/*/workload.out")):
        m = pattern.match(path.parent.name)
        if not m:
            continue
        for job in wire.workload_jobs(path.read_text(errors="replace")):
            rows.append({"combo": m.group(1), "workload": int(m.group(2)), "job": job.job,
                         "app": job.app, "nodes": job.nodes, "steps": job.steps,
                         "step_s": job.step_s, "alone_s": job.alone_step_s})
    if not rows:
        return pd.DataFrame(columns=["combo", "workload", "job", "app", "step_s", "alone_s",
                                     "config", "scale"])
    return pd.DataFrame(rows).merge(combos[["combo", "config", "scale"]], on="combo")


def workload_gain(jobs: pd.DataFrame, configs: list[str], base: str, outdir: Path,
                  scale: Scale) -> Figure | None:
    """Fig 9a: % gain of the mean step time in the workload over the baseline config."""
    if jobs.empty:
        return None
    wide = jobs.groupby(["app", "config"])["step_s"].mean().unstack("config")
    wide = wide.reindex(columns=[c for c in configs if c in wide.columns])
    if base not in wide.columns:
        return None
    pct = wide.apply(lambda col: 100 * gain(col, wide[base], "lower"))
    return _bars(scale.name("configs-workload-gain"), scale.title(
        f"Multi-job workloads: % gain in step time over {base}"), pct, f"% gain over {base}",
        outdir)


def workload_slowdown(jobs: pd.DataFrame, configs: list[str], outdir: Path, scale: Scale
                      ) -> Figure | None:
    """Fig 9b: % slowdown of the step time in the workload over the job alone."""
    if jobs.empty:
        return None
    slow = jobs.assign(slowdown=100 * (jobs["step_s"] / jobs["alone_s"] - 1))
    wide = slow.groupby(["app", "config"])["slowdown"].mean().unstack("config")
    wide = wide.reindex(columns=[c for c in configs if c in wide.columns])
    return _bars(scale.name("configs-workload-slowdown"), scale.title(
        "Multi-job workloads: % slowdown by interference (step time in the workload / alone "
        "- 1)"), wide, "% slowdown", outdir)


def throughput(jobs: pd.DataFrame, configs: list[str], outdir: Path, scale: Scale
               ) -> Figure | None:
    """Fig 10: sum over jobs of the normalised step rate, mean over workloads."""
    if jobs.empty:
        return None
    rate = jobs.assign(rate=1.0 / jobs["step_s"])
    best = rate.groupby(["workload", "job"])["rate"].transform("max")
    rate = rate.assign(norm=rate["rate"] / best)
    total = rate.groupby(["config", "workload"])["norm"].sum().groupby("config").mean()
    total = total.reindex([c for c in configs if c in total.index])
    wide = pd.DataFrame({"total normalised performance": total})
    jobs_n = int(jobs.groupby(["combo", "workload"])["job"].count().max())
    return _bars(scale.name("configs-throughput"), scale.title(
        f"Multi-job workloads: total normalised performance (bounded by {jobs_n} jobs)"), wide,
        "sum of normalised step rates", outdir, label="config", extra=f"set yrange [0:{jobs_n}]")


# --- Table 5 ----------------------------------------------------------------------------

def cost_table(study, combos: pd.DataFrame, configs: list[str], base: str,
               perf: pd.DataFrame | None, outdir: Path) -> Figure | None:
    """Switches and cables of each configuration's system (all planes) from the generator,
    relative to the baseline's, beside the workloads' total performance. We do not price
    switches or cables (seed 003's Table 5 costs are its authors' procurement estimates)."""
    from t2hx.conf import load_system, system_path
    from t2hx.fabric.cost import system_counts

    systems = combos.drop_duplicates("config").set_index("config")["system"]
    rows = []
    for config in configs:
        try:
            counts = system_counts(load_system(system_path(systems[config])))
        except T2hxError:
            continue
        rows.append({"config": config, "switches": counts["switches"],
                     "cables": counts["cables"]})
    if not rows:
        return None
    table = pd.DataFrame(rows).set_index("config")
    ref = table.loc[base] if base in table.index else table.iloc[0]
    table["switches rel"] = table["switches"] / ref["switches"]
    table["cables rel"] = table["cables"] / ref["cables"]
    if perf is not None and not perf.empty:
        p = perf.set_index("config")["total normalised performance"]
        table["performance"] = p.reindex(table.index)
        table["performance rel"] = table["performance"] / table.loc[ref.name, "performance"]
        table["cables rel / performance rel"] = table["cables rel"] / table["performance rel"]
    stem = outdir / "configs-cost"
    data = stem.with_suffix(".dat")
    out = table.reset_index()
    write_text(data, plots.table_text(list(out.columns), out.to_numpy().tolist(),
                                      "Cost (switch and cable counts) and performance"))
    return Figure("configs-cost", "configs-cost", "Switches, cables and workload performance "
                  "per configuration (seed 003 Table 5)", [], data, out.round(4))
