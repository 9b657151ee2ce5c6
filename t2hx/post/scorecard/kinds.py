"""Computing ours for a claim: one function per ``compute.kind`` (the kinds are described in
the package docstring), chosen from :data:`KINDS`; requirements such as the capacity window
are checked first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pandas as pd

from t2hx.errors import T2hxError
from t2hx.history.sample_routing import REROUTED
from t2hx.post.scorecard.selection import (BASE_SPEC, CELL, NotRun, Ours, agg, best,
                                           cell_gains, draw_gains, draws_of, label, listed,
                                           matches, select, workload_jobs)
from t2hx.post.scorecard.text import where
from t2hx.wire import parse_sim_header

def capacity_windows(logdir: Path | None) -> set[float]:
    """Capacity windows [s] a campaign's raw capacity outputs declare (simulated header)."""
    found: set[float] = set()
    if logdir is None:
        return found
    for path in sorted(Path(logdir).glob("capacity/**/rfm_job.out")):
        try:
            with open(path, errors="replace") as fh:
                head = parse_sim_header(fh.readline())
        except OSError:
            continue
        if head is not None and head.kind == "capacity" and "window" in head.pairs:
            found.add(float(head.pairs["window"]))
    return found


def check_requires(comp: dict[str, Any], context: dict[str, Any]) -> str:
    """A note on requirements met unverified; raises NotRun when one is known to fail."""
    need = (comp.get("requires") or {}).get("capacity_window_s")
    if need is None:
        return ""
    windows = context.get("capacity_windows") or set()
    if not windows:
        return "capacity window not recorded"
    if windows != {float(need)}:
        have = ", ".join(f"{w:g} s" for w in sorted(windows))
        raise NotRun(f"capacity window {have}; the claim is about a {need:g} s window")
    return ""


def compute(results: pd.DataFrame, claim: dict[str, Any], context: dict[str, Any]) -> Ours:
    comp = {"one_switch": context.get("one_switch", 0), **claim["compute"]}
    kind = comp["kind"]
    if kind == "unmeasured":
        raise NotRun(comp.get("needs", "no campaign records it"))
    if kind not in KINDS and kind not in LOG_KINDS:
        raise T2hxError(f"claim {claim['id']}: unknown compute kind {kind!r}",
                        fix="one of " + ", ".join([*KINDS, *LOG_KINDS, "unmeasured"]))
    check_requires(comp, context)
    if kind in LOG_KINDS:
        return LOG_KINDS[kind](comp, context)
    df = select(results, comp)
    if df.empty:
        raise NotRun("no such runs in the log")
    base, sm = comp.get("base", BASE_SPEC), bool(comp.get("sum_metrics"))
    ours = KINDS[kind](df, comp, base, sm)
    if BOUNDS & set(claim["published"]):
        ours.control = control_effect(df, comp, base, sm)
    return ours


#: Published forms a model passes by showing no effect at all: judged with a control.
BOUNDS = {"par", "at_least", "at_most"}
#: A rung of at most ``one_switch`` nodes (the claims file's: every placement puts them on
#: one switch) whose every cell's gain is below this is the same fabric twice: it cannot
#: tell combos apart. A zero gain at a larger rung is a result, and stays.
IDENTICAL = 1e-9


def gain_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool) -> Ours:
    """The aggregate gain over the cells of the rungs that can differ, and per rung."""
    g = cell_gains(df, comp["subject"], base, sm)
    how = comp.get("aggregate", "median")
    rungs = {int(n): r for n, r in g.groupby("nodes")} if g["nodes"].notna().all() else {}
    same = sorted(n for n, r in rungs.items()
                  if n <= comp["one_switch"] and (r["gain"].abs() < IDENTICAL).all())
    used = g[~g["nodes"].isin(same)] if len(same) < len(rungs) else g
    d = draw_gains(df, comp["subject"], base, sm)
    per = {n: Ours(agg(r["gain"], how), list(r["gain"]), where=where(comp, r),
                   draws=draws_of(d[d["nodes"] == n], how))
           for n, r in rungs.items()} if len(rungs) > 1 else {}
    return Ours(agg(used["gain"], how), list(used["gain"]), where=where(comp, used),
                rungs=per, identical=same if len(same) < len(rungs) else [],
                draws=draws_of(d[d["nodes"].isin(used["nodes"].unique())] if rungs else d, how))


def control_effect(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                   sm: bool) -> float | None:
    """The largest effect the claim's cells show anywhere: any combo's gain over the base in
    a cell (values: any combo's relative difference from the subject's), or the subject's
    gain changing from cell to cell. None: the cells hold nothing to contrast."""
    combos = df[["topology", "routing", "placement"]].drop_duplicates().to_dict("records")
    effects: list[float] = []
    if comp["kind"] == "value":
        subject = best(df, comp["subject"], sm)[CELL + ["value"]]
        for spec in combos:
            other = best(df, spec, sm)[CELL + ["value"]]
            m = subject.merge(other, on=CELL, suffixes=("", "_o"))
            effects += list((m["value_o"] / m["value"] - 1).abs())
    else:
        for spec in combos:
            if spec == {k: base.get(k) for k in spec}:
                continue
            try:
                g = cell_gains(df, spec, base, sm)["gain"]
            except NotRun:
                continue
            effects += list(g.abs()) + [float(g.max() - g.min())]
    return max(effects) if effects else None


def value_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool) -> Ours:
    b = best(df, comp["subject"], sm, worst=comp.get("of") == "worst")
    if b.empty:
        raise NotRun(f"no {label(comp['subject'])} runs")
    return Ours(agg(b["value"], comp.get("aggregate", "median")) * comp.get("scale", 1.0),
                where=where(comp, b))


def rank_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool) -> Ours:
    """The subject's place among ``combos`` by median gain over the cells all of them have."""
    per, common = {}, None
    for spec in comp["combos"]:
        if not matches(df, spec).any():
            raise NotRun(f"no {label(spec)} runs")
        per[label(spec)] = (cell_gains(df, spec, base, sm) if spec != base else
                            best(df, base, sm)[CELL].assign(gain=0.0))
        keys = set(map(tuple, per[label(spec)][CELL].astype(str).to_numpy()))
        common = keys if common is None else common & keys
    if not common:
        raise NotRun("the ranked combos share no cell")
    scores = {}
    for name, g in per.items():
        keep = [tuple(r) in common for r in g[CELL].astype(str).to_numpy()]
        scores[name] = float(g.loc[keep, "gain"].median())
    order = sorted(scores, key=lambda k: -scores[k])
    subject = label(comp["subject"])
    draws = rank_draws(df, comp, base, sm, common)
    return Ours(scores[subject], list(scores.values()), rank=order.index(subject) + 1,
                of=len(order), where=where(comp, next(iter(per.values()))),
                draws=[d[subject] for d in draws], draw_cells=[list(d.values()) for d in draws])


def rank_draws(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool,
               common: set) -> list[dict[str, float]]:
    """Every ranked combo's score draw by draw (repetition r of each against repetition r of
    the base, over the common cells), for the repetitions all of them have; empty below two."""
    per = {}
    for spec in comp["combos"]:
        d = draw_gains(df, spec, base, sm)
        keep = [tuple(r) in common for r in d[CELL].astype(str).to_numpy()]
        rows = d.loc[pd.Series(keep, index=d.index, dtype=bool)]
        per[label(spec)] = rows.groupby("repetition")["gain"].median()
    reps = sorted(set.intersection(*(set(s.index) for s in per.values()))) if per else []
    if len(reps) < 2:
        return []
    return [{name: float(s[r]) for name, s in per.items()} for r in reps]


def trend_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool) -> Ours:
    g = cell_gains(df, comp["subject"], base, sm)
    along = comp.get("along", "msg_size")
    xs = sorted(g[along].dropna().unique())
    if len(xs) < 3:
        raise NotRun(f"fewer than 3 {along} values for a trend")
    third = max(1, len(xs) // 3)
    lo = g[g[along].isin(xs[:third])]["gain"].median()
    hi = g[g[along].isin(xs[-third:])]["gain"].median()
    return Ours(float(hi - lo), where=where(comp, g))


def routing_kind(comp: dict[str, Any], context: dict[str, Any]) -> Ours:
    """A field of the campaign's routing analysis of one plane and engine
    (``log/<campaign>/analysis/<plane>-<engine>.json``, t2hx.post.routing), e.g. its VLs."""
    logdir = context.get("logdir")
    name = f"{comp['plane']}-{comp['engine']}"
    path = Path(logdir) / "analysis" / f"{name}.json" if logdir else None
    if path is None or not path.is_file():
        raise NotRun(f"no routing analysis {name} in the log")
    value = json.loads(path.read_text()).get(comp["field"])
    if not isinstance(value, (int, float)):
        raise NotRun(f"the routing analysis {name} has no number {comp['field']!r}")
    return Ours(float(value), where=f"routing analysis {name}")


def history_kind(comp: dict[str, Any], context: dict[str, Any]) -> Ours:
    """A cell of seed 004's Table 1 from the campaign's job-history rows
    (``log/<campaign>/histories/``, t2hx.post.histories): SAR's improvement over ``vs`` in
    ``metric``, ``stat`` one of max, max_pct, avg, avg_pct (t2hx.history.sample_routing.improvements).
    Percentages, and θ's percentage points, are returned as fractions (50.8 % -> 0.508)."""
    from t2hx.history.sample_routing import improvements
    from t2hx.post.histories import load_rows

    logdir = context.get("logdir")
    if logdir is None:
        raise NotRun("no log directory")
    if "history_rows" not in context:
        context["history_rows"] = load_rows(Path(logdir))
    rows = context["history_rows"]
    scale = 0.01 if comp["stat"].endswith("_pct") or comp["metric"] == "dark_fiber" else 1.0
    if comp["metric"] == "reroutes" and comp["stat"] not in ("median", "mean", "max", "min"):
        raise T2hxError(f"history metric reroutes with stat {comp['stat']!r}",
                        field="compute.stat", fix="one of median, mean, max, min (per day)")
    span = comp.get("span")
    cells, days, samples, others = [], 0, 0, []
    # Several combos or engines (a statement over both systems or every routing): one cell
    # each, ours the median, every cell judged by a range.
    for combo in listed(comp["combo"]):
        every = rows[rows["combo"] == combo] if len(rows) else rows
        if every.empty:
            raise NotRun(f"no job-history rows of {combo} in the log")
        sub = _in_span(every, span)
        days, samples = days + sub["day"].nunique(), samples + int(sub["engine"].isin(REROUTED).sum())

        def cell(part: pd.DataFrame, vs: str) -> float:
            if comp["metric"] == "reroutes":
                return float(agg(reroutes_per_day(part), comp["stat"]))
            return improvements(part.to_dict("records"), comp["metric"], vs)[comp["stat"]] * scale

        cells += [cell(sub, vs) for vs in listed(comp["vs"])]
        if span:        # the same statistic over the log's other whole spans of that length
            others += [cell(part, vs) for part in _other_spans(every, span)
                       for vs in listed(comp["vs"])]
    where_ = f"{', '.join(listed(comp['combo']))}: {days} day(s), {samples} samples"
    if span:
        first, length = int(span["first_day"]), int(span["days"])
        where_ += f" of days {first}-{first + length - 1}"
        if others:
            where_ += (f"; other {length}-day spans {min(others):+.3f} to {max(others):+.3f} "
                       f"({len(others)})")
    return Ours(float(pd.Series(cells).median()), cells if len(cells) > 1 else None,
                where=where_)


def reroutes_per_day(rows: pd.DataFrame) -> pd.Series:
    """SAR's re-routings per replayed day (§4.3.2's "reconfigurations per day"): samples whose
    multi-switch job set differs from the sample before. A day is replayed on its own, so its
    first sample has no sample before and is not counted (at most one too few a day)."""
    sar = rows[rows["engine"].isin(REROUTED)].sort_values(["day", "t"])
    first = sar.groupby("day")["t"].transform("min") == sar["t"]
    return (sar["rerouted"].astype(bool) & ~first).groupby(sar["day"]).sum()


def _in_span(rows: pd.DataFrame, span: dict[str, Any] | None) -> pd.DataFrame:
    """The rows of the days a claim's sentence names (``span: {first_day, days}``: seed
    004's "over the month"), or all of them."""
    if not span:
        return rows
    first, length = int(span["first_day"]), int(span["days"])
    sub = rows[(rows["day"] >= first) & (rows["day"] < first + length)]
    if sub.empty:
        raise NotRun(f"no job-history rows in days {first}-{first + length - 1} (the claim's "
                     f"span); the log holds days {int(rows['day'].min())}-"
                     f"{int(rows['day'].max())}")
    return sub


def _other_spans(rows: pd.DataFrame, span: dict[str, Any]) -> list[pd.DataFrame]:
    """The log's other whole spans of the claim's length, back to back from its first day."""
    first, length = int(span["first_day"]), int(span["days"])
    lo, hi = int(rows["day"].min()), int(rows["day"].max())
    out = []
    for start in range(lo + (first - lo) % length, hi - length + 2, length):
        if start != first:
            part = rows[(rows["day"] >= start) & (rows["day"] < start + length)]
            if part["day"].nunique() == length:
                out.append(part)
    return out


def network_kind(comp: dict[str, Any], context: dict[str, Any]) -> Ours:
    """A metric of seed 001's generated networks (``log/<campaign>/networks/``,
    t2hx.post.generated_networks): the ``subject`` network's (``{kind:, mapping:}``) relative to the
    ``base`` network's (subject/base − 1) at each size of ``switches`` (or mapped node
    count of ``nodes``), or the subject's own value without a base; aggregated by ``stat``
    (median, max or min). Metrics: diameter, aspl, cable_mean_m (per network); hops and
    hops_per_message of ``collective`` (per mapping); mean_hops (point to point, per mapped
    node count); reduction (the two-opt tables: final/initial − 1 of ``collective``);
    total_hops and cpu_s (§3.5's Broadcast by method: ``mapping`` conv, two-opt, sa-<k>)."""
    from t2hx.post import generated_networks

    logdir = context.get("logdir")
    if logdir is None:
        raise NotRun("no log directory")
    if "network_tables" not in context:
        context["network_tables"] = generated_networks.frames(generated_networks.load(Path(logdir)))
    tables = context["network_tables"]
    if comp["metric"] == "crossover":
        cells = _crossovers(tables, comp)
    else:
        subject = _network_cells(tables, comp, comp["subject"])
        base = _network_cells(tables, comp, comp["base"]) if comp.get("base") else None
        cells = subject if base is None else (subject / base - 1.0).dropna()
    if cells.empty:
        raise NotRun("no size the subject and the base both have")
    value = {"median": cells.median(), "max": cells.max(), "min": cells.min(),
             "absmax": cells.abs().max()}[comp.get("stat", "median")]
    axis = "nodes" if comp["metric"] in P2P_METRICS else "switches"
    return Ours(float(value), [float(c) for c in cells] if len(cells) > 1 else None,
                where=f"{axis} {','.join(str(int(i)) for i in cells.index)}",
                control=_network_control(tables, comp, cells))


def _network_control(tables: dict[str, pd.DataFrame], comp: dict[str, Any],
                     cells: pd.Series) -> float:
    """The largest effect the claim's cells could have shown: its own, or for a mapping's
    relative metric (e.g. §5.4's mix change) that of any mapping of the same network, so an
    "on par" holds only where another mapping shows the model can tell them apart."""
    effects = [float(cells.abs().max())]
    rows = tables.get("p2p", pd.DataFrame())
    if comp["metric"] == "mix_change" and not comp.get("base") and len(rows):
        for mapping in rows.loc[rows["kind"] == comp["subject"]["kind"], "mapping"].unique():
            other = {**comp["subject"], "mapping": mapping}
            effects.append(float(_network_cells(tables, comp, other).abs().max()))
    return max(effects)


#: Metrics of the point-to-point rows (per mapped node count): Figs 5.12, 5.13 and §5.4's
#: mixes.
P2P_METRICS = ("mean_hops", "p2p_time_us", "alltoall_hops", "mix_change", "crossover")


def _crossovers(tables: dict[str, pd.DataFrame], comp: dict[str, Any]) -> pd.Series:
    """§5.4: per mapped node count, the Alltoall share above which the subject's mix takes
    fewer hops than the base's (t2hx.post.generated_networks.crossover)."""
    from t2hx.post.generated_networks import crossover

    parts = [pd.concat([_network_cells(tables, {**comp, "metric": m}, comp[side])
                        for m in ("mean_hops", "alltoall_hops")], axis=1,
                       keys=[f"{side}-p2p", f"{side}-a2a"])
             for side in ("subject", "base")]
    both = pd.concat(parts, axis=1, join="inner")
    return pd.Series([crossover(tuple(r[:2]), tuple(r[2:])) for r in both.to_numpy()],
                     index=both.index).dropna()


def _network_cells(tables: dict[str, pd.DataFrame], comp: dict[str, Any],
                   spec: dict[str, str]) -> pd.Series:
    """The metric of one network (and mapping) per size, indexed by switches or nodes."""
    metric = comp["metric"]
    part = {"hops": "collectives", "hops_per_message": "collectives", "reduction": "twoopt",
            "total_hops": "annealing", "cpu_s": "annealing",
            **{m: "p2p" for m in P2P_METRICS}}.get(metric, "networks")
    rows = tables.get(part, pd.DataFrame())
    if rows.empty:
        raise NotRun(f"no {part} rows of generated networks in the log")
    rows = rows[rows["kind"] == spec["kind"]]
    if "mapping" in spec:
        rows = rows[rows["mapping"] == spec["mapping"]]
    if comp.get("collective"):
        rows = rows[rows["collective"] == comp["collective"]]
    axis = "nodes" if part == "p2p" else "switches"
    want = listed(comp.get("nodes" if part == "p2p" else "switches") or [])
    if want:
        rows = rows[rows[axis].isin(want)]
    if part == "p2p" and comp.get("switches"):
        rows = rows[rows["switches"].isin(listed(comp["switches"]))]
    if rows.empty:
        raise NotRun(f"no {label_of(spec)} rows at {axis} {want or 'any'}")
    values = {"hops_per_message": lambda r: r["hops"] / r["messages"],
              "reduction": lambda r: r["final"] / r["initial"] - 1.0,
              "mix_change": lambda r: r["alltoall_hops"] / r["mean_hops"] - 1.0}.get(
        metric, lambda r: r[metric])(rows)
    return pd.Series(values.to_numpy(dtype=float), index=rows[axis].to_numpy())


def label_of(spec: dict[str, str]) -> str:
    return " ".join(str(v) for v in spec.values())


def extremes_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                  sm: bool) -> Ours:
    """The named benchmark's place among ``benchmark`` by the span of its cells' gains
    (highest minus lowest, over every subject combo): "the highest spikes in both
    directions". Scores are spans, so rank ties use the dead band like ranks of gains."""
    spans = {}
    for bench in listed(comp["benchmark"]):
        sub = df[df["benchmark"] == bench]
        if not matches(sub, base).any():
            continue
        parts = [cell_gains(sub, spec, base, sm)["gain"]
                 for spec in listed(comp["subject"]) if matches(sub, spec).any()]
        if parts:
            gains = pd.concat(parts)
            spans[bench] = float(gains.max() - gains.min())
    target = comp["of_benchmark"]
    if target not in spans:
        raise NotRun(f"no {target} runs")
    order = sorted(spans, key=lambda k: -spans[k])
    return Ours(spans[target], list(spans.values()), rank=order.index(target) + 1,
                of=len(order), where=where(comp, df))


def spread_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str], sm: bool) -> Ours:
    s, b = best(df, comp["subject"], sm), best(df, base, sm)
    m = s.merge(b[CELL + ["spread"]], on=CELL, suffixes=("", "_base")).dropna(
        subset=["spread", "spread_base"])
    if m.empty:
        raise NotRun(f"no cells with ≥ 2 runs of {label(comp['subject'])} and {label(base)}")
    if (m["spread"] == 0).all() and (m["spread_base"] == 0).all():
        raise NotRun("every repetition identical (deterministic campaign): variability "
                     "needs real runs")
    if "simulated" in df and df["simulated"].fillna(False).astype(bool).all():
        # The noise model draws every combo's factors from the same distribution
        # (docs/modelling.md#run-to-run-noise): a difference in spread is chance.
        raise NotRun("simulated runs only: their spread is the noise model's, the same "
                     "for every combo; which fabric varies less needs real runs")
    return Ours(float(m["spread_base"].median() - m["spread"].median()), where=where(comp, m))


def scaling_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                 sm: bool) -> Ours:
    """Seed 003 Fig 8: per benchmark, a combo's speedup from the fewest to the most nodes of
    the claim's ``nodes`` (t(few) / t(many); for a higher-is-better metric the other way)
    over the base's, minus 1: positive, the subject scales better. Several subjects: the
    best per benchmark; the benchmarks' gains aggregated (``aggregate``) and kept as cells."""
    few, many = min(comp["nodes"]), max(comp["nodes"])

    def speedups(spec: dict[str, str]) -> pd.Series:
        b = best(df, spec, sm)
        wide = b.pivot_table(index=["benchmark", "metric", "better"], columns="nodes",
                             values="value")
        if few not in wide.columns or many not in wide.columns:
            return pd.Series(dtype=float)
        higher = wide.index.get_level_values("better") == "higher"
        ratio = (wide[few] / wide[many]).where(~higher, wide[many] / wide[few])
        return ratio.droplevel("better").dropna()

    s_base = speedups(base)
    if s_base.empty:
        raise NotRun(f"no {label(base)} runs at both {few} and {many} nodes")
    per = [speedups(spec) / s_base - 1.0 for spec in listed(comp["subject"])]
    gains = pd.concat(per, axis=1).max(axis=1).dropna() if per else pd.Series(dtype=float)
    if gains.empty:
        raise NotRun(f"no {' or '.join(label(x) for x in listed(comp['subject']))} runs at "
                     f"both {few} and {many} nodes")
    shown = ", ".join(f"{b} {g:+.1%}" for (b, _), g in gains.items())
    return Ours(agg(gains, comp.get("aggregate", "median")), [float(g) for g in gains],
                where=f"speedup {few} -> {many} nodes over the base's: {shown}")


def _workload_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                   kind: str) -> Ours:
    """Seed 003 §6 from the workload records. ``interference``: the base's median slowdown
    (step time in the workload / alone - 1) minus the subject's (positive: the subject
    suffers less). ``throughput``: the subject's total normalised performance (Fig 10: sum
    over jobs of the step rate over the best configuration's, mean over workloads) over
    the base's, minus 1."""
    jobs = workload_jobs(df)
    subject = comp["subject"]
    if kind == "app_gain":
        return _app_gain(df, jobs, comp, base)
    pick = {}
    for name, spec in (("subject", subject), ("base", base)):
        # a list of specs is their union (a claim over several configurations)
        combos = {c for one in listed(spec) for c in df[matches(df, one)]["combo"]}
        pick[name] = jobs[jobs["combo"].isin(combos)]
        if pick[name].empty:
            raise NotRun(f"no workload records of {', '.join(map(label, listed(spec)))}")
    text = f"{len(jobs[['workload', 'job']].drop_duplicates())} jobs"
    if kind == "interference":
        if comp.get("most"):
            return _most_hurt(pick["subject"], listed(comp["most"]))
        if comp.get("per") == "app":       # the paper's Fig 9b: one bar per application
            return _interference_per_app(pick)
        slow = {k: float((v["mix"] / v["alone"] - 1).median()) for k, v in pick.items()}
        return Ours(slow["base"] - slow["subject"], where=f"workload, {text}")
    rate = jobs.assign(rate=1.0 / jobs["mix"])
    rate["norm"] = rate["rate"] / rate.groupby(["workload", "job"])["rate"].transform("max")
    total = rate.groupby(["combo", "workload"])["norm"].sum().groupby("combo").mean()
    perf = {k: float(total[total.index.isin(set(v["combo"]))].mean()) for k, v in pick.items()}
    return Ours(perf["subject"] / perf["base"] - 1.0, where=f"workload, {text}")


def _interference_per_app(pick: dict[str, pd.DataFrame]) -> Ours:
    """Per application, the base's median slowdown minus the subject's; the median of
    those judged, each app's kept as a cell."""
    slow = {k: (v["mix"] / v["alone"] - 1).groupby(v["app"]).median() for k, v in pick.items()}
    both = slow["base"].index.intersection(slow["subject"].index)
    if both.empty:
        raise NotRun("no application runs in the workloads of both combos")
    diff = (slow["base"][both] - slow["subject"][both]).sort_index()
    shown = ", ".join(f"{app} {d:+.1%}" for app, d in diff.items())
    return Ours(float(diff.median()), [float(d) for d in diff],
                where=f"workload, per app ({len(diff)}): {shown}")


def _most_hurt(jobs: pd.DataFrame, apps: list[str]) -> Ours:
    """Seed 003 Fig 9b's "pF3D and Qbox are impacted more by interference than other
    applications": per application its median slowdown (step time in the workload over
    alone, minus 1) over the subject's configurations; ours is the least-hurt named app's
    minus the most-hurt other app's (positive: the named apps are the most hurt)."""
    slow = (jobs["mix"] / jobs["alone"] - 1).groupby(jobs["app"]).median()
    missing = [a for a in apps if a not in slow.index]
    if missing or len(slow) == len(apps):
        raise NotRun(f"no workload jobs of {', '.join(missing)}" if missing else
                     "no other application to compare with")
    named, others = slow[apps], slow.drop(apps)
    shown = ", ".join(f"{a} {v:+.1%}" for a, v in slow.sort_values(ascending=False).items())
    return Ours(float(named.min() - others.max()), where=f"workload slowdown per app: {shown}")


def _app_gain(df: pd.DataFrame, jobs: pd.DataFrame, comp: dict[str, Any],
              base: dict[str, str]) -> Ours:
    """One app's mean step time in the workloads on the base over the subject's, minus 1
    (seed 003 Fig 9a's per-application gains); several subjects: the best."""
    app = comp["app"]

    def step(spec: dict[str, str]) -> float:
        combos = set(df[matches(df, spec)]["combo"])
        mine = jobs[jobs["combo"].isin(combos) & (jobs["app"] == app)]["mix"]
        if mine.empty:
            raise NotRun(f"no {app} jobs in the workloads of {label(spec)}")
        return float(mine.mean())

    t_base = step(base)
    gains = [t_base / step(spec) - 1.0 for spec in listed(comp["subject"])]
    n = len(jobs[jobs["app"] == app][["workload", "job"]].drop_duplicates())
    return Ours(max(gains), gains, where=f"workload, {n} {app} jobs")


def app_gain_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                  sm: bool) -> Ours:
    return _workload_kind(df, comp, base, "app_gain")


def interference_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                      sm: bool) -> Ours:
    return _workload_kind(df, comp, base, "interference")


def throughput_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                    sm: bool) -> Ours:
    return _workload_kind(df, comp, base, "throughput")


#: Kinds computed from files of the log directory, not from the results table.
LOG_KINDS: dict[str, Callable[[dict[str, Any], dict[str, Any]], Ours]] = {
    "routing": routing_kind, "history": history_kind, "network": network_kind}
Kind = Callable[[pd.DataFrame, dict[str, Any], dict[str, str], bool], Ours]
KINDS: dict[str, Kind] = {"gain": gain_kind, "value": value_kind, "rank": rank_kind,
                          "trend": trend_kind, "spread": spread_kind,
                          "extremes": extremes_kind, "app_gain": app_gain_kind,
                          "scaling": scaling_kind,
                          "interference": interference_kind, "throughput": throughput_kind}
