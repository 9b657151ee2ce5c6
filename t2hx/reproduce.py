"""The main job (``run/reproduce``): the study on the embedded simulated cluster, end to end.

1. **Routing analysis** of every plane of the system (by default every system the study was
   written for: seed 001's three networks) with every engine its conf lists (real
   OpenSM under ibsim, the routing cache the simulated checks share): hop counts, EFI, VLs,
   into ``log/<campaign>/analysis/`` (per-link EFI CSV + summary JSON, t2hx.post.routing;
   ``<system>-<plane>-<engine>`` when there are several systems).
2. **Campaign**: ``t2hx campaign run --system sim:<system> --profile quick|full`` (``sim``
   for several systems) — ReFrame
   runs every check of ``checks/`` on the system's ``sim`` partitions (flow model on the real
   routing).
3. **Figures**: ``t2hx.post`` replays the campaign into ``paper/`` (figures, tables, report).
4. **Checks of the outcome**: the Fig 1 equivalent, like for like (mpiGraph on the same 28
   nodes of one rack — linear placement — under FT/ftree, HX/DFSSSP and HX/PARX: FT > HX/DFSSSP
   and HX/PARX > HX/DFSSSP; "not run" when the campaign lacks one of them) and, when the
   campaign had a complete earlier run (the committed ``log/reference``), the largest
   difference to it.
5. **Scorecard** (t2hx.post.scorecard): every quantitative statement of seed 000 §5 and Fig 1 with
   ours and a verdict; the verdict counts are printed, labelled with the profile, and the
   contract file ``log/<campaign>/scorecard.json`` is written atomically (for the paper
   profile's ``paper-scale`` campaign: ``bench/results/scorecard.json``, the README's).

Rerunning resumes an interrupted campaign (ReFrame skips recorded cases). A campaign that
completed is started afresh: the old records move to ``log/.<campaign>.previous`` until the
new run completes, and serve as the comparison.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict

import numpy as np

from t2hx import ROOT
from t2hx.routing import analysis
from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from t2hx.atomic import atomic_write
from t2hx.routing.cache import ensure_routing
from t2hx.progress import Progress

COMPLETE = "complete.json"        # written last: the campaign ran through
# Seed 000 Fig 1: the same 28 nodes of one rack (linear placement: rack r01 on t2hx) under
# each fabric/routing, mpiGraph's average send bandwidth at its 1 MiB input, best of N.
Fig1Combo = Literal["ft", "dfsssp", "parx"]


class Fig1(TypedDict):
    benchmark: str
    metric: str
    nodes: int
    msg_size: int
    placement: str
    ft: tuple[str, str]               # (topology, routing) of each combo
    dfsssp: tuple[str, str]
    parx: tuple[str, str]


FIG1: Fig1 = {"benchmark": "mpigraph", "metric": "send_avg", "nodes": 28, "msg_size": 1048576,
              "placement": "linear", "ft": ("fattree", "ftree"), "dfsssp": ("hyperx", "dfsssp"),
              "parx": ("hyperx", "parx")}
FIG1_COMBOS: tuple[Fig1Combo, ...] = ("ft", "dfsssp", "parx")
SCORECARD = ROOT / "bench" / "results" / "scorecard.json"
PAPER_CAMPAIGN = "paper-scale"     # log/paper-scale: the paper profile's committed campaign


@dataclass
class Options:
    system: System
    profile: str = "quick"
    campaign: str = "reference"
    out: Path | None = None        # None: paper/ for log/reference (t2hx.post.replay)
    logs: Path = ROOT / "log"
    work: Path = ROOT / "work"
    quiet: bool = False
    reframe_args: list[str] = field(default_factory=list)
    study: str | None = None       # None: $T2HX_STUDY or the default study
    also: list[System] = field(default_factory=list)   # the study's further systems (seed 001)

    @property
    def systems(self) -> list[System]:
        return [self.system, *self.also]

    @property
    def logdir(self) -> Path:
        return self.logs / self.campaign

    @property
    def scorecard(self) -> Path:
        """The contract file of the paper-scale campaign (the README's headline), else one in
        the campaign's log."""
        return SCORECARD if self.campaign == PAPER_CAMPAIGN else self.logdir / "scorecard.json"


def reproduce(opts: Options) -> int:
    """The whole pipeline; 0 when the campaign completed and the Fig 1 checks hold."""
    previous = start(opts.logdir)
    before_contract(opts.logdir, opts.scorecard)     # before the report reads it
    names = ", ".join(s.name for s in opts.systems)
    with Progress(f"reproduce {names} ({opts.profile})", total=3,
                  quiet=opts.quiet) as progress:
        progress.step("routing analysis of every plane and engine (real OpenSM under ibsim)")
        rows = routing_analysis(opts, progress)
        progress.step(f"campaign '{opts.campaign}' through ReFrame on the simulated cluster")
        ran = run_campaign(opts)
        progress.step("figures and report (t2hx.post)")
        results = render(opts)
    print_routing(rows)
    verdicts = fig1_verdicts(results) if seed_000(opts) else []
    for line in verdicts:
        print(line)
    if previous is not None:
        print(compare(results, previous))
    print(scorecard(results, opts.logdir, opts.scorecard, opts.profile, opts.study))
    if ran != 0:
        print(f"reproduce: ReFrame reported failures (exit {ran}); rerun to resume the "
              f"campaign, see {opts.logdir}", file=sys.stderr)
        return ran
    part = selecting(opts.reframe_args)
    if part:
        # Marked complete, the next run would move it aside and start over from nothing.
        print(f"reproduce: ReFrame ran part of the profile ({' '.join(part)}): the campaign "
              "is not marked complete; rerun without it to finish", file=sys.stderr)
        return 0
    atomic_write(opts.logdir / COMPLETE, json.dumps({"profile": opts.profile}) + "\n")
    if previous is not None:
        shutil.rmtree(previous.parent, ignore_errors=True)
    bad = [v for v in verdicts if v.startswith("FAIL")]   # "not run" is no failure
    return 1 if bad or any(r.get("error") for r in rows) else 0


#: ReFrame options that select a subset of the cases (ReFrame 4's test filtering options).
SELECTING = ("-n", "--name", "-x", "--exclude", "-t", "--tag", "-T", "--exclude-tag",
             "-p", "--prgenv", "-P", "--parameterize", "-E", "--filter-expr", "--failed",
             "--maintainer", "--cpu-only", "--gpu-only")


def selecting(args: list[str]) -> list[str]:
    """The options of ``args`` that run only part of the cases (``-x NetgaugeEBB``,
    ``-nHPL``, ``--name=HPL``), with their values."""
    out = []
    for k, arg in enumerate(args):
        hit = next((f for f in SELECTING if arg == f or arg.startswith(f + "=") or
                    (len(f) == 2 and arg.startswith(f) and not arg.startswith("--"))), None)
        if hit:
            attached = arg != hit
            out += [arg] if attached or k + 1 >= len(args) else [arg, args[k + 1]]
    return out


def start(logdir: Path) -> Path | None:
    """Prepare the campaign directory; returns the results of the previous complete run
    (a parquet table) to compare with, if any. An interrupted campaign resumes, unless its
    runs came from another model, system or study (t2hx/post/freshness.py): resuming would
    keep their cases beside today's, so it starts over like a complete one."""
    aside = logdir.with_name(f".{logdir.name}.previous")
    if (logdir / COMPLETE).is_file() or _stale(logdir):
        shutil.rmtree(aside, ignore_errors=True)
        aside.mkdir(parents=True)
        os.replace(logdir, aside / logdir.name)
    table = aside / "results.parquet"
    if aside.is_dir() and not table.is_file():
        from t2hx.post.ingest import ingest

        ingest(aside / logdir.name).results.to_parquet(table)
    return table if table.is_file() else None


def _stale(logdir: Path) -> bool:
    from t2hx.post.freshness import freshness

    if not (logdir / "provenance.json").is_file():
        return False
    state = freshness(logdir)
    if state.state == "stale":
        print(f"reproduce: {state.line}; starting over (the old log goes to "
              f"{logdir.with_name(f'.{logdir.name}.previous')})", file=sys.stderr)
    return state.state == "stale"


def analysis_only(opts: Options) -> int:
    """Step 1 alone, into an existing or new campaign directory (nothing moved aside)."""
    with Progress(f"routing analysis {', '.join(s.name for s in opts.systems)}", total=1,
                  quiet=opts.quiet) as progress:
        progress.step("every plane and engine (real OpenSM under ibsim)")
        rows = routing_analysis(opts, progress)
    print_routing(rows)
    return 1 if any("error" in r for r in rows) else 0


# -- 1. routing analysis -----------------------------------------------------------------------
def routing_analysis(opts: Options, progress: Progress) -> list[dict]:
    """Every plane and engine of the study's systems, in that order: side by side on the
    machine's cores (a large fabric's analysis takes minutes on one core; the routing cache
    lets side-by-side runs of one routing wait for each other)."""
    several = len(opts.systems) > 1
    # Several systems may name their planes alike (seed 001's "shortcut"): then the system
    # names the row and the analysis files.
    tasks = [(opts, system, plane, engine, f"{system.name}-{plane}" if several else plane)
             for system in opts.systems for plane in system.planes
             for engine in system.plane(plane).opensm["routing"]]
    workers = min(len(tasks), os.cpu_count() or 1)
    if workers < 2:
        return [_analysed(task, progress) for task in tasks]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(_analysed, task) for task in tasks]
        rows = []
        for task, future in zip(tasks, futures):
            rows.append(future.result())
            progress.say(f"  {task[4]}: {task[3]}")
        return rows


def _analysed(task: tuple, progress: Progress | None = None) -> dict:
    opts, system, plane, engine, label = task
    if progress is not None:
        progress.say(f"  {label}: {engine}")
    try:
        return analyse(opts, system, build_plane(system, plane), plane, engine, label)
    except T2hxError as err:
        return {"plane": label, "engine": engine, "error": err.line()}


def analyse(opts: Options, system: System, fabric, plane: str, engine: str,
            label: str) -> dict:
    # lmc None: the plane's, or the one our engines' LID policy fixes (PARX: 2).
    where = ensure_routing(system, plane, engine, None, opts.work, fabric)
    tables = load_tables(fabric, where)
    run = json.loads((where / "opensm-run.json").read_text())
    report = {"plane": label, **analysis.summary(tables, run)}
    report.pop("errors", None)
    mask = analysis.inter_switch_mask(tables)
    efi = analysis.edge_forwarding_index(tables)[mask]
    report["dark_fiber"] = float((efi == 0).mean()) if efi.size else 0.0
    report.update(fig1_streams(system, tables))
    stem = opts.logdir / "analysis" / f"{label}-{engine}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    links = np.flatnonzero(mask)
    atomic_write(stem.with_suffix(".csv"), "link,efi\n" + "".join(
        f"{k},{int(e)}\n" for k, e in zip(links, efi)))
    atomic_write(stem.with_suffix(".json"), json.dumps(report, indent=2) + "\n")
    return report


def fig1_streams(system: System, tables) -> dict:
    """Fig 1's "traffic streams sharing one cable": mpiGraph's shift pattern on the Fig 1
    hostfile of the system (linear, 28 nodes: rack r01 on t2hx), when it has one."""
    from t2hx.flowsim.network import read_hostfile
    from t2hx.paths import hostfiles_root

    path = hostfiles_root() / system.name / FIG1["placement"] / f"{FIG1['nodes']}.txt"
    if not path.is_file():
        return {}
    hosts = [tables.fabric.index(h) for h in read_hostfile(path, system)]
    return {"fig1_shift_streams": analysis.shift_streams(tables, hosts),
            "fig1_hosts": f"{FIG1['placement']} {FIG1['nodes']}"}


def print_routing(rows: list[dict]) -> None:
    head = f"{'plane':9} {'engine':7} {'lmc':>3} {'VLs':>3} {'hops max/avg':>12} " \
           f"{'EFI max/mean':>14} {'unused':>8} {'CDG(1 VL)':>9}"
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['plane']:9} {r['engine']:7} ERROR {r['error']}")
            continue
        print(f"{r['plane']:9} {r['engine']:7} {r['lmc']:>3} {r['vls']:>3} "
              f"{r['max_switch_hops']:>5}/{r['avg_switch_hops']:<6.3f} "
              f"{r['max_efi']:>6}/{r['mean_efi']:<7.1f} "
              f"{r['unused_links']:>4}/{r['inter_switch_links']:<4}"
              f"{'acyclic' if r['cdg_acyclic_single_vl'] else 'cyclic':>9}")


# -- 2. campaign ---------------------------------------------------------------------------------
def run_campaign(opts: Options) -> int:
    from t2hx.campaign import CampaignRequest, run

    # The campaign reads its roots from the environment (ReFrame runs in another process).
    os.environ.update(T2HX_LOG_ROOT=str(opts.logs), T2HX_WORK_ROOT=str(opts.work))
    where = f"sim:{opts.system.name}" if not opts.also else "sim"   # "sim": the study's own
    return run(CampaignRequest("run", system=where, campaign=opts.campaign,
                               profile=opts.profile, study=opts.study,
                               reframe_args=list(opts.reframe_args), quiet=opts.quiet))


# -- 3. figures ----------------------------------------------------------------------------------
def render(opts: Options):
    from t2hx.post.replay import ENGINES_JSON, replay

    result = replay(opts.logdir, opts.out, quiet=opts.quiet or None)
    print(f"{len(result.figures)} figures; report: {result.out / 'report.md'}")
    cmp = result.out / "data" / ENGINES_JSON
    if cmp.is_file():
        data = json.loads(cmp.read_text())
        print(f"packet engine: {data['verdicts_changed']} of {data['claims_scored']} verdicts "
              "differ from the flow model's (report: Network engines)")
    import pandas as pd

    return pd.read_parquet(result.out / "data" / "results.parquet")


# -- 4. outcome checks ---------------------------------------------------------------------------
def _fig1_best(results) -> tuple[dict[Fig1Combo, float], str]:
    """Best of N per Fig 1 combo on the same nodes (NaN where the campaign has none)."""
    from t2hx.post.scorecard import best, select

    sel = select(results, {"benchmark": FIG1["benchmark"], "metric": FIG1["metric"],
                           "nodes": [FIG1["nodes"]], "msg_size": [FIG1["msg_size"]]})
    unit = str(sel["unit"].iloc[0]) if len(sel) else ""
    out = {}
    for k in FIG1_COMBOS:
        spec = dict(zip(("topology", "routing"), FIG1[k]), placement=FIG1["placement"])
        b = best(sel, spec)
        out[k] = float(b["value"].max()) if len(b) else float("nan")
    return out, unit


def _fig1_name(k: Fig1Combo) -> str:
    return "/".join(FIG1[k] + (FIG1["placement"],))


def seed_000(opts: Options) -> bool:
    """Fig 1 is seed 000's: another study (seed 001's networks) has no FT and HX to compare."""
    from t2hx.study import DEFAULT_STUDY, load_study

    return load_study(opts.study).name == DEFAULT_STUDY


def fig1_verdicts(results) -> list[str]:
    """Seed 000 Fig 1 on the same 28 nodes of one rack: FT beats HX/DFSSSP and PARX beats
    DFSSSP. FAIL when a relation does not hold or FT/DFSSSP are missing; "not run" when the
    campaign has no like-for-like PARX case (the study's Fig 1 case)."""
    m, unit = _fig1_best(results)
    out = []
    relations: tuple[tuple[Fig1Combo, Fig1Combo, str], ...] = (
        ("ft", "dfsssp", "paper: HX/DFSSSP 0.37x of FT"), ("parx", "dfsssp", "paper: PARX +66 %"))
    for better, worse, paper in relations:
        missing = [k for k in (better, worse) if np.isnan(m[k])]
        if missing:
            tag = "not run" if missing == ["parx"] else "FAIL"
            out.append(f"{tag} Fig 1: no mpiGraph {FIG1['metric']} at {FIG1['nodes']} nodes, "
                       f"{FIG1['msg_size']} B, for {', '.join(map(_fig1_name, missing))} "
                       f"(like for like: the same nodes of one rack, {FIG1['placement']})")
            continue
        ok = m[better] > m[worse]
        out.append(f"{'ok  ' if ok else 'FAIL'} Fig 1: {_fig1_name(better)} {m[better]:.1f} "
                   f"{'>' if ok else '<='} {_fig1_name(worse)} {m[worse]:.1f} {unit} "
                   f"({m[better] / m[worse] - 1:+.0%}; {paper})")
    return out


def scorecard(results, logdir: Path, out: Path, profile: str | None = None,
              study_name: str | None = None) -> str:
    """Score the claims of the campaign's study (conf/claims/<study>.yaml), write the
    contract file, return the counts."""
    from t2hx.post import scorecard as S
    from t2hx.post.ingest import known_systems, row_systems
    from t2hx.post.scorecard import moves
    from t2hx.study import load_study

    study = load_study(study_name)
    claims = S.claims_of(study.name)
    if claims is None:
        return f"scorecard: no claims file for study '{study.name}' in conf/claims/"
    defaults, listed = S.load_claims(claims)
    prov_path = logdir / "provenance.json"
    prov = json.loads(prov_path.read_text()) if prov_path.is_file() else {}
    # The seed's claims are scored on the study's own systems only (a port: the report's
    # portable claims).
    scores = S.by_system(results, listed, defaults, row_systems(results, known_systems(prov)),
                         study.own_systems(), logdir=logdir)
    own = next((x for x in scores if x.own), None)
    if own is None:
        return (f"scorecard: none: the claims of '{study.name}' are about "
                f"{', '.join(study.own_systems())}, not this campaign's systems")
    verdicts = own.verdicts
    before = before_contract(logdir, out)
    atomic_write(out, json.dumps(S.contract(verdicts), indent=2, ensure_ascii=False) + "\n")
    line = f"{S.counts_line(verdicts, profile)} (table: t2hx scorecard {logdir}; {out})"
    if before is not None:
        line += "\n" + moves.summary(moves.moves(moves.read_contract(before),
                                                  moves.read_contract(out)), len(verdicts))
    return line


def before_contract(logdir: Path, out: Path) -> Path | None:
    """The contract this run replaces (the previous model's), kept beside the new one."""
    from t2hx.post.scorecard import moves

    aside = logdir.with_name(f".{logdir.name}.previous") / logdir.name / "scorecard.json"
    return moves.keep_before(logdir, [out, aside])


def compare(results, previous: Path) -> str:
    """The largest relative difference of per-case medians to the previous complete run."""
    import pandas as pd

    key = ["benchmark", "metric", "combo", "nodes", "msg_size"]
    old = pd.read_parquet(previous)
    a = results.groupby(key, dropna=False)["value"].median()
    b = old.groupby(key, dropna=False)["value"].median()
    both = pd.concat([a, b], axis=1, keys=["new", "old"], join="inner").dropna()
    if both.empty:
        return "compared with the previous run: no common cases"
    rel = (both["new"] - both["old"]).abs() / both["old"].abs().where(both["old"] != 0, 1)
    worst = rel.idxmax()
    return (f"compared with the previous complete run: {len(both)} cases, largest relative "
            f"difference {rel.max():.2%} ({' '.join(str(k) for k in worst)})")
