"""Regenerate every data table, figure and the report from a log directory alone.

Output layout (``--out``; default ``paper/`` for ``log/reference``, else ``<logdir>/paper``)::

    data/results.{parquet,csv}   tidy table (t2hx.post.ingest.COLUMNS), byte-identical on replay
    data/matrices.{parquet,csv}  mpiGraph matrix cells
    data/stats.{parquet,csv}     best/min/q1/median/q3/max and gain per cell
    data/summary.json            what was read, skipped (and why), figures that failed
    figures/<name>.{png,pdf,dat} every figure with its gnuplot data file
    report.md, report.html
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple
from collections.abc import Callable

import pandas as pd

from t2hx import ROOT
from t2hx.errors import T2hxError
from t2hx.post.freshness import freshness
from t2hx.post import figures as F
from t2hx.post import scorecard
from t2hx.post import flow_vs_packet, reference, report, routing
from t2hx.post.gain import choose_baseline, gains
from t2hx.post.ingest import (MATRIX_COLUMNS, companion_results, ingest, known_systems, log_systems,
                              require_logdir, require_provenance, require_results, row_systems)
from t2hx.post.stats import summarize
from t2hx.post.store import canonical, write_json, write_table
from t2hx.progress import Progress
from t2hx.routing.reroute import demand_sources
from t2hx.wire import COMPANION_ENGINE, NETWORK_BENCHMARK

REPO = ROOT


@dataclass
class ReplayResult:
    out: Path
    figures: list[F.Figure]
    summary: dict[str, Any]


ENGINES_JSON = "engines.json"        # data/: the flow-vs-packet comparison, when the log has one


def default_out(logdir: Path) -> Path:
    if Path(logdir).resolve() == (REPO / "log" / "reference").resolve():
        return REPO / "paper"
    return Path(logdir) / "paper"


def combo_order(results: pd.DataFrame, prov: dict[str, Any], baseline: str | None) -> list[str]:
    present = sorted(results["combo"].dropna().unique())
    wanted = [c for c in prov.get("combos", []) if c in present] if isinstance(
        prov.get("combos"), list) else []
    rest = [c for c in present if c not in wanted and c != baseline]
    head = [baseline] if baseline in present and baseline not in wanted else []
    return head + wanted + rest


def replay(logdir: Path, out: Path | None = None, quiet: bool | None = None) -> ReplayResult:
    logdir = require_replayable(logdir)     # before any progress line: errors stay one line
    out = Path(out) if out is not None else default_out(logdir)
    data_dir, fig_dir = out / "data", out / "figures"
    with Progress("replay", quiet=quiet) as prog:
        prog.say(f"reading {logdir}")
        ing = ingest(logdir)
        require_results(ing, logdir)    # before anything is written: nothing to replay
        # Seed 001's generated-network analyses are graph metrics, not benchmark runs: their
        # figures come from the kept analyses (t2hx.post.generated_networks), never gain grids.
        results = ing.results[ing.results["benchmark"] != NETWORK_BENCHMARK]
        summary = ing.summary
        baseline = choose_baseline(results, ing.provenance)
        combos = combo_order(results, ing.provenance, baseline)
        stats = summarize(results[results["unit"] != "runs"])
        g = gains(stats, baseline) if baseline else stats.assign(base=float("nan"),
                                                                   gain=float("nan"))
        prog.say(f"{len(results)} rows, {len(combos)} combos; writing tables")
        write_table(results, data_dir / "results")
        write_table(canonical(ing.matrices, MATRIX_COLUMNS), data_dir / "matrices")
        write_table(canonical(g, list(g.columns)), data_dir / "stats")
        # One combo (e.g. the `local` system): nothing to compare, so no gain figures, no
        # scorecard; the report lists the measured values instead.
        single = len(combos) == 1
        study = _study(ing.provenance, summary)
        figure_set = FIGURE_SETS[study.figures if study is not None else "capability"]
        figs = figure_set.draw(FigureInputs(results, ing.matrices, g, combos, baseline, logdir,
                                            fig_dir, summary, prog, study, ing.provenance,
                                            single))
        if study is not None and study.networks:
            from t2hx.post import collective_times, generated_networks

            prog.say("generated networks (seed 001 Figs 5.1-5.5, 5.12, 5.19, Tables 3.4-3.6)")
            figs += generated_networks.figures(logdir, fig_dir)
            prog.say("collective times per message size (seed 001 Figs 3.10-3.12, 4.6-4.8, 5.6-5.11)")
            figs += collective_times.figures(g, study, combos, fig_dir)
        sim = bool(results["simulated"].any()) or bool(ing.provenance.get("simulated"))
        # The seed's numbers and claims are about the study's own systems: compared only
        # with their runs; another system (a port) gets its portable claims only.
        systems = row_systems(results, known_systems(ing.provenance))
        own = scorecard.study_systems(ing.provenance)
        mine = (systems.isin(own) | (systems == "")) if own is not None else \
            pd.Series(True, index=results.index)
        ref = None
        if sim and figure_set.seed_reference and mine.any():   # seed 000's numbers
            efi = next((f.table for f in figs if f.name == "routing-efi-histogram"), None)
            dark = next((f.table for f in figs if f.name == "routing-dark-fiber"), None)
            ref = reference.comparison(results[mine], efi, dark)
        if not single:
            prog.say("scorecard and report")
        scores = [] if single else _scorecard(results, systems, own, logdir, summary,
                                              ing.provenance.get("study"))
        engine_cmp = _engines(results, logdir, own, ing.provenance, summary)
        sc = next((x.frame for x in scores if x.own), None)
        others = [(x.system, x.frame) for x in scores if not x.own]
        names = log_systems(results, ing.provenance)
        table = report.systems_table(results, systems, names, own, scores,
                                     ing.provenance.get("study"),
                                     ing.provenance.get("left_out"))
        pictures = _pictures(sc, engine_cmp, combos, fig_dir, summary)
        summ = summary.as_dict()
        summ["model"] = freshness(Path(logdir)).line    # which model the runs came from
        if any((sources := demand_sources(logdir)).values()):   # what PARX was routed with
            summ["parx_demand"] = sources
        write_json(data_dir / "summary.json", summ)
        if engine_cmp is not None:
            write_json(data_dir / ENGINES_JSON, flow_vs_packet.as_dict(engine_cmp))
        campaign = str(ing.provenance.get("campaign") or
                       (results["campaign"].iloc[0] if len(results) else logdir.resolve().name))
        windows = [json.loads(p.read_text())
                   for p in sorted(Path(logdir).glob("capacity/**/window.json"))]
        bl = report.blocks(report.ReportInputs(
            campaign, ing.provenance, summ, baseline, figs, sim, ref, out, sc, windows,
            values=report.measured_values(results) if single else None, systems=table,
            others=others, own=own, engines=engine_cmp, ran=_ran(results, summ),
            pictures=pictures))
        if sc is not None:
            bl += report.moves_blocks(Path(logdir), sc)
        report.write_report(out, bl, f"t2hx report — {campaign}" + report.on_systems(names))
        stale = drop_stale(fig_dir, figs + list(pictures.values()))
        prog.say(f"{len(figs)} figures, {len(summ['skipped'])} skipped input(s)"
                 + (f", {stale} stale file(s) of an earlier replay removed" if stale else "")
                 + f"; report in {out}")
    return ReplayResult(out, figs, summ)


def require_replayable(logdir: Path) -> Path:
    """A campaign's log directory with its provenance, or one line: a report that cannot
    name the study, conf and commit of its runs is not the campaign's report."""
    logdir = require_logdir(logdir)
    require_provenance(logdir)
    return logdir


def drop_stale(fig_dir: Path, figs: list[F.Figure]) -> int:
    """Remove the files of figures an earlier replay drew and this one did not (a renamed or
    dropped figure would otherwise stay in the report's folder and a committed log)."""
    if not fig_dir.is_dir():
        return 0
    keep = {Path(p).stem for f in figs for p in [*f.files, *([f.data] if f.data else [])]}
    keep |= {f.name for f in figs}
    stale = [p for p in fig_dir.iterdir() if p.is_file() and p.stem not in keep]
    for p in stale:
        p.unlink()
    return len(stale)


def _ran(results: pd.DataFrame, summary: dict[str, Any]) -> dict[str, int]:
    return {"runs": int(summary.get("runs_used", 0)), "records": len(results),
            "benchmarks": int(results["benchmark"].nunique()) if len(results) else 0,
            "combos": int(results["combo"].nunique()) if len(results) else 0}


def _study(prov: dict[str, Any], summary):
    """The study that produced the log (its figure set), or None when it is not here."""
    from t2hx.study import load_study, study_names

    name, file = prov.get("study"), prov.get("study_file")
    if name in study_names():
        where = name
    elif file and (Path(file).is_file() or (REPO / file).is_file()):
        where = file if Path(file).is_file() else str(REPO / file)   # a study kept elsewhere
    else:
        return None
    try:
        return load_study(where, "full")
    except T2hxError as err:
        summary.skip("study", str(name), err.message)
        return None


@dataclass
class FigureInputs:
    """What a figure set draws from: the log's tables and where the figures go."""
    results: pd.DataFrame
    matrices: pd.DataFrame
    g: pd.DataFrame                # statistics and gains per cell
    combos: list[str]
    baseline: str | None
    logdir: Path
    fig_dir: Path
    summary: Any
    prog: Progress
    study: Any                     # t2hx.study.Study, or None when not known here
    provenance: dict[str, Any]
    single: bool                   # one combo: nothing to compare


def _capability_figures(f: FigureInputs) -> list[F.Figure]:
    return _figures(f.results, f.matrices, f.g, f.combos, f.baseline, f.logdir, f.fig_dir,
                    f.summary, f.prog, comparative=not f.single)


def _config_figures(f: FigureInputs) -> list[F.Figure]:
    """The figures of a study comparing systems (t2hx/post/fattree_configs.py)."""
    from t2hx.post import fattree_configs as configs

    if f.single:
        return _capability_figures(f)
    try:
        figs = configs.figures(f.results, f.study, f.logdir, f.fig_dir)
    except T2hxError as err:
        f.summary.skip("figure", "configs", err.message)
        return []
    for fig in figs:
        f.prog.step(fig.name)
    return figs


def _history_figures(f: FigureInputs) -> list[F.Figure]:
    from t2hx.post import histories as hist

    f.prog.say("history figures (seed 004 Figs 1, 7 and 8, Table 1)")
    return hist.figures(f.logdir, f.fig_dir) + _routing_runs(f.results, f.logdir, f.provenance,
                                                             f.fig_dir)


class FigureSet(NamedTuple):
    draw: Callable[[FigureInputs], list[F.Figure]]
    seed_reference: bool           # the report sets seed 000's reference numbers beside ours


#: The figure set of each kind of study (its conf's ``figures:``, t2hx.study.FIGURE_SETS).
FIGURE_SETS = {"capability": FigureSet(_capability_figures, True),
               "configs": FigureSet(_config_figures, False),
               "histories": FigureSet(_history_figures, False)}


@dataclass
class Scored:
    system: str
    own: bool
    frame: pd.DataFrame | None     # None: no claim to score there (none portable)


def _scorecard(results: pd.DataFrame, systems: pd.Series, own: list[str] | None, logdir: Path,
               summary, study: str | None = None) -> list[Scored]:
    """The claims of the study that produced the log (conf/claims/<study>.yaml), per system:
    all on the study's own systems, the portable ones elsewhere (t2hx.post.scorecard.by_system)."""
    path = scorecard.claims_of(study or scorecard.DEFAULT_CLAIMS_STUDY)
    if path is None:
        summary.skip("scorecard", "conf/claims", f"no claims file for study '{study}'")
        return []
    try:
        defaults, claims = scorecard.load_claims(path)
        scores = scorecard.by_system(results, claims, defaults, systems, own, logdir=logdir)
    except T2hxError as err:
        summary.skip("scorecard", "conf/claims", err.message)
        return []
    return [Scored(x.system, x.own, scorecard.frame(x.verdicts) if x.verdicts else None)
            for x in scores]


def _pictures(sc: pd.DataFrame | None, engine_cmp: flow_vs_packet.ModelComparison | None,
              combos: list[str], fig_dir: Path, summary) -> dict[str, F.Figure]:
    """The summary pictures (t2hx.post.tiles) the report shows in the scorecard and engine
    sections: ``scorecard`` and ``engines``, each when its table exists."""
    from t2hx.post import tiles

    out: dict[str, F.Figure] = {}
    for key, make in (("scorecard", lambda: tiles.scorecard_picture(sc, fig_dir)),
                      ("engines", lambda: tiles.ratio_grid(engine_cmp.side_by_side, combos,
                                                           fig_dir) if engine_cmp else None)):
        try:
            if (fig := make()) is not None:
                out[key] = fig
        except T2hxError as err:
            summary.skip("figure", key, err.message)
    return out


def _routing_runs(results: pd.DataFrame, logdir: Path, prov: dict[str, Any],
                  fig_dir: Path) -> list[F.Figure]:
    """Seed 004 Fig 8: a case under each routing, packet engine and flow companion."""
    from t2hx.post import routing_runs

    known = known_systems(prov)
    flow = companion_results(logdir, COMPANION_ENGINE)
    return routing_runs.figures(results.assign(system=row_systems(results, known)),
                                flow.assign(system=row_systems(flow, known)), fig_dir,
                                _link_rate)


def _link_rate(system: str, partition: str) -> float | None:
    """Bytes/s of the plane a sim partition ``<system>-<plane>`` names (None: unknown)."""
    from t2hx.conf import load_system, system_path

    try:
        plane = load_system(system_path(system)).plane(partition[len(system) + 1:])
    except T2hxError:
        return None
    return plane.gbps * 1e9 / 8


def _engines(results: pd.DataFrame, logdir: Path, own: list[str] | None,
             prov: dict[str, Any], summary) -> flow_vs_packet.ModelComparison | None:
    """Packet-engine cases beside their flow-model companions (t2hx.post.flow_vs_packet), scored on
    the study's own systems; None when the log has no companion runs."""
    flow = companion_results(logdir, COMPANION_ENGINE)
    if flow.empty:
        return None
    path = scorecard.claims_of(prov.get("study") or scorecard.DEFAULT_CLAIMS_STUDY)
    if path is None:
        return flow_vs_packet.compare(results, flow, lambda frame: [])
    try:
        defaults, claims = scorecard.load_claims(path)
    except T2hxError as err:
        summary.skip("engines", "conf/claims", err.message)
        return None
    known = known_systems(prov)

    def own_verdicts(frame: pd.DataFrame) -> list[scorecard.Verdict]:
        scores = scorecard.by_system(frame, claims, defaults, row_systems(frame, known), own,
                                     logdir=logdir)
        return next((x.verdicts for x in scores if x.own), [])

    return flow_vs_packet.compare(results, flow, own_verdicts)


def _figures(results: pd.DataFrame, matrices: pd.DataFrame, g: pd.DataFrame, combos: list[str],
             baseline: str | None, logdir: Path, fig_dir: Path, summary, prog: Progress,
             comparative: bool = True) -> list[F.Figure]:
    """Every figure the data allows; ``comparative=False`` (one combo) keeps only those that
    need no second combo (mpiGraph matrices, routing analysis)."""
    base = baseline or ""
    jobs: list[tuple[str, Future]] = []
    # gnuplot runs in subprocesses, so threads overlap the drawing on every core.
    pool = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2))

    def attempt(name: str, make: Callable[[], Any]) -> None:
        jobs.append((name, pool.submit(make)))

    for bench in sorted(g["benchmark"].dropna().unique()) if comparative else ():
        sub = g[g["benchmark"] == bench]
        metric = F.primary_metric(bench, sorted(sub["metric"].dropna().unique()))
        if metric is None:          # no metric recorded: the figures would be titled "None" and empty
            continue
        rows = sub[sub["metric"] == metric]
        sizes = rows["msg_size"].dropna().unique()
        if len(sizes) > 1:
            attempt(f"gain-grid-{bench}", partial(F.gain_grid, g, bench, metric, combos, base, fig_dir))
        else:
            attempt(f"whisker-{bench}", partial(F.whisker, g, bench, metric, combos, base, fig_dir))
        if bench == "ring-allreduce":
            for nodes in sorted(rows["nodes"].dropna().unique()):
                attempt(f"ring-allreduce-{nodes}", partial(
                    F.lines, g, "ring-allreduce", metric, "msg_size", combos, fig_dir,
                    f"ring-allreduce-{int(nodes)}", f"Ring allreduce t_avg, {int(nodes)} nodes",
                    where=g["nodes"] == nodes))
    if comparative:
        attempt("ebb-lines", lambda: F.lines(g, "ebb", "bandwidth", "nodes", combos, fig_dir,
                                             "ebb-bandwidth", "Effective bisection bandwidth"))
        attempt("capacity", lambda: F.capacity(results, combos, fig_dir,
                                               F.capacity_lengths(logdir)))
    attempt("mpigraph", lambda: F.mpigraph_heatmaps(results, matrices, combos, fig_dir))
    if comparative:
        attempt("mpigraph-pairs", lambda: F.mpigraph_pairs(results, matrices, combos, fig_dir))
    attempt("routing-efi", lambda: routing.efi_histogram(routing.read_efi(logdir, summary),
                                                         fig_dir))
    attempt("routing-dark-fiber", lambda: routing.dark_fiber_bars(
        routing.read_dark_fiber(logdir, summary), fig_dir))
    return _collect(jobs, pool, summary, prog)


def _collect(jobs: list[tuple[str, Future]], pool: ThreadPoolExecutor, summary,
             prog: Progress) -> list[F.Figure]:
    figs: list[F.Figure] = []
    prog.count, prog.total = 0, len(jobs)      # one step per figure job, "[k/N]"
    with pool:
        for name, job in jobs:  # submission order: deterministic figure list
            try:
                made = job.result()
            except T2hxError as err:
                summary.skip("figure", name, err.message)
                prog.step(f"{name}: skipped")
                continue
            made = made if isinstance(made, list) else [made] if made else []
            figs += made
            prog.step(", ".join(f.name for f in made) if made else f"{name}: nothing to draw")
    prog.total = None
    return figs
