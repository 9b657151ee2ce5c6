"""``t2hx campaign run|dry-run|status``: the study through ReFrame, as one named campaign.

``run`` wraps ``reframe -C conf/reframe.py -c checks -r --system SYS`` with the campaign and
study profile in the environment and records provenance (command, git hash, system, the conf
systems it ran on, profile) in ``log/<campaign>/provenance.json``. Rerunning the same
campaign resumes it: cases with a passing perflog record are skipped
(checks/lib/resume.py). ``status`` counts recorded cases against what the campaign's study
and profile imply on the systems it ran on.

--system:
  sim               the study's own systems, simulated: its `system:` and those its combos
                    name (t2hx for the default study)
  sim:NAME[,NAME]   these conf systems (conf/systems/NAME.yaml), simulated: a port
  local             this machine, real Open MPI with the Spack view's binaries
  NAME              the real cluster of conf/systems/NAME.yaml (needs a launcher: section)
A combo whose plane the system lacks, or whose engine the plane's opensm.routing does not
list, is not run there (said once per system).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from t2hx import ROOT, wire
from t2hx.errors import T2hxError
from t2hx.atomic import atomic_write
from t2hx.paths import log_root, work_root
from t2hx.conf import System
from t2hx.paths import hostfiles_root
from t2hx.reframe_site import CAMPAIGN_ENV, NAME_RE, SIM_SYSTEMS_ENV, load_systems
from t2hx.study import (DEFAULT_STUDY, PROFILE_ENV, STUDY_ENV, Study, load_study,
                        study_names, study_path)

SIM = "sim"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("campaign", help="run, dry-run or inspect a ReFrame campaign",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", required=True)
    for verb, text in (("run", "run (or resume) the study on a system"),
                       ("dry-run", "generate every job script without running anything"),
                       ("status", "recorded vs expected cases of a campaign")):
        v = verbs.add_parser(verb, help=text, description=text, epilog=SYSTEM_HELP,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
        v.add_argument("--system", default=SIM,
                       help="sim (the study's own systems, simulated; default), "
                       "sim:NAME[,NAME] (these conf systems, simulated: a port), local, or "
                       "NAME (the real cluster of conf/systems/NAME.yaml)")
        v.add_argument("--campaign", default="default", help="log/<campaign> (default: default)")
        v.add_argument("--profile", default=None,
                       help="study profile: full or quick (default: full; status: the "
                       "campaign's)")
        v.add_argument("--study", default=None,
                       help="a study of conf/studies/ by name, or a study file (default: "
                       f"${STUDY_ENV} or {DEFAULT_STUDY})")
        if verb == "run":
            v.add_argument("--no-report", dest="report", action="store_false",
                           help="do not replay the log into log/<campaign>/paper/ (figures, "
                           "report, scorecard) after a run that finished")
        if verb != "status":
            v.add_argument("reframe_args", nargs=argparse.REMAINDER,
                           help="after --: more reframe options, e.g. -- -n HPL -P num_nodes=7")
        v.set_defaults(func=cmd_campaign)
    r = verbs.add_parser("reroute", help="route a plane for one job (the checks' pre-run "
                         "step: parx/sar re-routes; on a real cluster every combo's engine)",
                         description=REROUTE_DOC)
    r.add_argument("--system", required=True, help="conf/systems/<sys>.yaml")
    r.add_argument("--plane", required=True, help="plane name")
    r.add_argument("--routing", required=True, help="the combo's engine (sim: parx or sar)")
    r.add_argument("--mode", default="sim", choices=("sim", "real"),
                   help="sim: route under ibsim into --out; real: have the plane's OpenSM "
                   "route with it (docs/cluster.md) and record the verified result")
    r.add_argument("--out", default="routing", help="routing directory (default: routing)")
    r.add_argument("--hostfile", action="append", default=[], help="the job's hostfile")
    r.add_argument("--benchmark", action="append", default=[], help="the job's benchmark")
    r.add_argument("--jobs-json", help="capacity.json of the capacity check (several jobs)")
    r.set_defaults(func=cmd_route_job)
    register_capacity(verbs)
    register_workload(verbs, list(ENGINES))


REROUTE_DOC = """Route a plane for one job (docs/routing.md#re-routing). sar: the job file from
the jobs' hostfiles (t2hx demand jobs). parx: the demand file from the benchmark's
communication profile conf/profiles/<benchmark>/<ranks>/<prefix files> (Open MPI
pml_monitoring, t2hx demand build); without a profile PARX keeps its demand-free routing
(said on stderr). --mode sim routes under ibsim into --out. --mode real asks the plane's
OpenSM host to route with the combo's engine and LMC (any engine), waits for OpenSM's own
confirmation and writes --out/route.json; it exits non-zero on any failure (docs/cluster.md)."""


SYSTEM_HELP = __doc__[__doc__.index("--system:"):]


def _env(args: argparse.Namespace) -> dict:
    if not NAME_RE.match(args.campaign):
        raise T2hxError(f"campaign name {args.campaign!r}", field="--campaign",
                        fix="use letters, digits, '-' and '_' only")
    prov = provenance(args.campaign)
    if args.profile is None:       # status: the campaign's own profile
        args.profile = prov.get("profile", "full") if args.verb == "status" else "full"
    select_study(args, prov)
    study = load_study(profile=args.profile)  # fail early, with the study's one-line error
    env = dict(os.environ)
    env[CAMPAIGN_ENV] = args.campaign
    env[PROFILE_ENV] = args.profile
    if args.verb != "status":
        args.rf_system, args.conf_systems = selection(args.system, study)
        check_selection(args, study, prov)
        env.pop(SIM_SYSTEMS_ENV, None)
        if args.rf_system == SIM:
            env[SIM_SYSTEMS_ENV] = ",".join(s.name for s in args.conf_systems)
        say_left_out(study, args.conf_systems)
    return env


def provenance(campaign: str) -> dict:
    path = log_root() / campaign / "provenance.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def select_study(args: argparse.Namespace, prov: dict) -> None:
    """``--study`` for this process and ReFrame's (the checks read $T2HX_STUDY); a campaign
    keeps the study it started with (``status`` without --study reads that one)."""
    name = getattr(args, "study", None)
    was = prov.get("study")
    if not name and args.verb == "status" and was and was in study_names():
        name = was
    if name:
        study_path(name)                      # an unknown name fails here, listing the known
        os.environ[STUDY_ENV] = name
    if was:
        now = load_study(profile=args.profile).name
        if was != now:
            raise T2hxError(f"campaign '{args.campaign}' was run with study '{was}', not "
                            f"'{now}'", field="--study",
                            fix=f"use --study {was} or another --campaign")


def selection(value: str, study: Study) -> tuple[str, list[System]]:
    """The ReFrame system and the conf systems of ``--system`` (module help): ``sim`` is the
    study's own systems, ``sim:A,B`` those, ``local`` none, another name a real cluster
    (``NAME:PLANE`` and ``local:slurm`` pass ReFrame's partition through)."""
    if value.split(":")[0] == "local":
        return value, []
    known = {s.name: s for s in load_systems()}
    if value == SIM or value.startswith(f"{SIM}:"):
        names = study.own_systems() if value == SIM else \
            [n.strip() for n in value[len(SIM) + 1:].split(",") if n.strip()]
        if not names:
            raise T2hxError(f"--system {value} names no system", field="--system",
                            fix="use sim:NAME with NAME a file of conf/systems/, e.g. "
                            f"sim:{next(iter(known))}")
        rf = SIM
    else:
        names, rf = [value.split(":")[0]], value
    for name in names:
        if name not in known:
            where = "the study's own system" if value == SIM else "--system"
            raise T2hxError(f"no conf system '{name}' ({where})", field="--system",
                            fix="use one of: " + ", ".join(known))
    return rf, [known[n] for n in dict.fromkeys(names)]


def check_selection(args: argparse.Namespace, study: Study, prov: dict) -> None:
    """One-line errors before ReFrame starts: a simulated system without hostfiles, a system
    the study's combos cannot use, and (run) a campaign that would mix systems its study
    does not compare."""
    names = [s.name for s in args.conf_systems]
    if study.systems():           # a study that compares systems runs only on those
        bad = [n for n in names if n not in study.own_systems()]
        if bad:
            raise T2hxError(f"study '{study.name}' runs on its own systems "
                            f"({', '.join(study.own_systems())}), not '{bad[0]}'",
                            field="--system", fix=f"use --system {SIM} or another --study")
    else:
        # A study that compares combos on one machine: one system per campaign, so its
        # report and scorecard never pool two machines' runs.
        if len(names) > 1:
            raise T2hxError(f"study '{study.name}' compares combos on one system, not "
                            f"{len(names)} ({', '.join(names)})", field="--system",
                            fix=f"one campaign per system, e.g. --system {SIM}:{names[0]}")
        was = [n for n in prov.get("systems", []) if n not in names]
        if args.verb == "run" and names and was:
            raise T2hxError(f"campaign '{args.campaign}' ran on {', '.join(was)}, not "
                            f"{', '.join(names)}", field="--system",
                            fix=f"use --system {SIM}:{was[0]} or another --campaign")
    if args.rf_system == SIM:
        for name in names:
            if not (hostfiles_root() / name).is_dir():
                raise T2hxError(f"system '{name}' has no hostfiles in {hostfiles_root()}",
                                field="--system", fix=f"run/t2hx hostfiles --system {name}")


def say_left_out(study: Study, systems: list[System]) -> None:
    """Once per system: the study's combos it cannot run (a plane it lacks, an engine its
    plane does not route with); ReFrame then generates none of their cases there."""
    for system in systems:
        by_reason: dict[str, list[str]] = {}
        for combo, why in study.left_out(system).items():
            by_reason.setdefault(why, []).append(combo)
        for why, combos in by_reason.items():
            print(f"campaign: {system.name}: not run: {', '.join(combos)} ({why})",
                  file=sys.stderr)


def dry_run_dir(campaign: str) -> Path:
    """Where a dry run's job scripts' perflog records go (never log/<campaign>/)."""
    return work_root() / "reframe" / campaign / "dry-run" / "perflogs"


def _reframe_cmd(args: argparse.Namespace, action: str) -> list[str]:
    extra = [a for a in args.reframe_args if a != "--"]
    if action == "-r":      # the session report belongs to the campaign's records
        report = log_root() / args.campaign / "reframe" / "report-{sessionid}.json"
        extra.insert(0, f"--report-file={report}")
    else:                   # ReFrame logs a valueless record per dry-run case: not ours
        extra.insert(0, f"--perflogdir={dry_run_dir(args.campaign)}")
    return [str(Path(sys.executable).parent / "reframe"), "-C", str(ROOT / "conf" / "reframe.py"),
            "-c", str(ROOT / "checks"), "--system", args.rf_system, action, *extra]


def cmd_campaign(args: argparse.Namespace) -> int:  # run | dry-run | status
    env = _env(args)
    if args.verb == "status":
        return status(args)
    cmd = _reframe_cmd(args, "--dry-run" if args.verb == "dry-run" else "-r")
    if args.verb == "run":
        write_provenance(args, cmd)
    out = subprocess.run(cmd, env=env, cwd=ROOT,
                         stdout=subprocess.DEVNULL if args.quiet else None)
    if args.verb == "run" and out.returncode == 0 and getattr(args, "report", False):
        from t2hx.post.replay import replay

        # The figures and report of the study that produced the log (its figure set).
        done = replay(log_root() / args.campaign, quiet=args.quiet or None)
        print(f"campaign {args.campaign}: figures and report in {done.out}")
    return out.returncode


def _git_hash() -> str:
    out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "unknown"


LOCAL_BINARIES = "the Spack view of spack-env (T2HX_SPACK_VIEW)"


def portable(arg: str) -> str:
    """A command argument relative to the checkout: provenance travels with the log, and
    this machine's paths mean nothing elsewhere."""
    return arg.replace(f"{ROOT}/", "")


def write_provenance(args: argparse.Namespace, cmd: list[str]) -> None:
    study = load_study(profile=args.profile)
    logdir = log_root() / args.campaign
    path = logdir / "provenance.json"
    prov = json.loads(path.read_text()) if path.is_file() else {}
    runs = prov.get("runs", [])
    names = [s.name for s in args.conf_systems]
    run = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "command": [portable(a) for a in cmd], "git_hash": _git_hash(),
           "system": args.system, "conf_systems": names, "profile": args.profile}
    if args.rf_system.split(":")[0] == "local":
        run["binaries"] = LOCAL_BINARIES
    runs.append(run)
    # The conf systems of every run: the report names them, status counts their cases.
    systems = list(dict.fromkeys([*prov.get("systems", []), *names]))
    # ... and the study's combos each cannot run (the report lists them beside the system).
    left_out = {**prov.get("left_out", {}),
                **{s.name: study.left_out(s) for s in args.conf_systems}}
    prov.update(campaign=args.campaign, baseline=study.baseline, study=study.name,
                study_file=portable(str(study.path.resolve())),
                profile=args.profile, git_hash=runs[-1]["git_hash"],
                simulated=args.rf_system == SIM, systems=systems,
                left_out={k: v for k, v in left_out.items() if v}, runs=runs)
    logdir.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(prov, indent=2) + "\n")


def status(args: argparse.Namespace) -> int:
    """Recorded cases of the campaign on one ReFrame system against the cases its study and
    profile have on the conf systems it ran on there (provenance), each with its own ladder
    clip, planes and engines (Study.cases_on); a campaign not run yet: on ``--system``'s."""
    from t2hx.post.perflog import CASE_KEY, recorded_cases

    study = load_study(profile=args.profile)
    rf, systems = selection(args.system, study)
    rf = rf.split(":")[0]                  # perflogs/<ReFrame system>/<partition>/
    folder = log_root() / args.campaign / "perflogs" / rf
    keys = recorded_cases(folder, ("partition", *CASE_KEY))
    if rf == "local":      # which checks have a local binary is the checks' business
        print(f"campaign {args.campaign} on local: {len(keys)} cases recorded")
        return 0
    ran = [n for run in provenance(args.campaign).get("runs", [])
           if run.get("system", "").split(":")[0] == rf for n in run.get("conf_systems", [])]
    if ran:
        known = {s.name: s for s in load_systems()}
        missing = [n for n in ran if n not in known]
        if missing:
            raise T2hxError(f"campaign '{args.campaign}' ran on '{missing[0]}', which has no "
                            "conf file here", field="--system",
                            fix=f"restore conf/systems/{missing[0]}.yaml")
        systems = [known[n] for n in dict.fromkeys(ran)]
    expected = sum(study.cases_on(s, simulated=rf == SIM) for s in systems)
    names = ", ".join(s.name for s in systems)
    print(f"campaign {args.campaign} on {rf} ({names}; profile {args.profile}): "
          f"{len(keys)} of {expected} cases recorded")
    return 0


def _jobs(args: argparse.Namespace) -> list:
    """The jobs to route for: the capacity check's jobs, or one per --hostfile."""
    from t2hx.routing.reroute import JobSpec

    if args.jobs_json:
        data = json.loads(Path(args.jobs_json).read_text())
        return [JobSpec(app, job["benchmark"], Path(job["hostfile"]).resolve())
                for app, job in data.items()]
    if len(args.hostfile) != len(args.benchmark) or not args.hostfile:
        raise T2hxError("give one --benchmark per --hostfile", field="--hostfile",
                        fix="e.g. --hostfile hostfiles/t2hx/linear/7.txt --benchmark hpl")
    return [JobSpec(f"job{i}", b, Path(h).resolve())
            for i, (b, h) in enumerate(zip(args.benchmark, args.hostfile))]


def cmd_route_job(args: argparse.Namespace) -> int:
    from t2hx.conf import load_system, system_path
    from t2hx.routing.reroute import reroute_for_jobs, route_real

    system = load_system(system_path(args.system))
    out = Path(args.out).resolve()
    if args.mode == "real":
        jobs = _jobs(args) if args.hostfile or args.jobs_json else []
        result = route_real(system, args.plane, args.routing, jobs, out=out,
                            quiet=args.quiet or None)
        print(f"{result['host']}: plane {args.plane} routed with {result['engine_used']}, "
              f"LMC {result['lmc']} (verified from OpenSM's log and dumps)")
        return 0
    if args.routing not in ("parx", "sar"):
        raise T2hxError(f"{args.routing} is not re-routed per job in simulation",
                        field="--routing", fix="use parx or sar (or --mode real)")
    reroute_for_jobs(system, args.plane, args.routing, _jobs(args), out=out,
                     quiet=args.quiet or None)
    return 0


# --- capacity on the simulated cluster -----------------------------------------------------

REPEATS = 100000            # "thousands of runs": more than any window can finish


#: Fluid engines of the capacity model (docs/modelling.md, capacity runs).
ENGINES = {"fast": ("t2hx.flowsim.fluid_fast", "run_jobs_fast"),
           "exact": ("t2hx.flowsim.fluid", "run_jobs")}


def _engine(name: str) -> Callable:
    import importlib

    module, func = ENGINES[name]
    return getattr(importlib.import_module(module), func)


def register_capacity(verbs: argparse._SubParsersAction) -> None:
    c = verbs.add_parser("simulate-capacity", help="capacity mode on the flow model",
                         description="All capacity apps at once on their node sets "
                         "(capacity.json of checks/capacity.py) in the event-driven fluid "
                         "model until the simulated window closes; prints one line per "
                         "finished run, then the window's end (the check's record format).")
    c.add_argument("--system", required=True)
    c.add_argument("--plane", required=True)
    c.add_argument("--routing", required=True)
    c.add_argument("--capacity", required=True, help="capacity.json")
    c.add_argument("--window", type=float, required=True, help="simulated seconds")
    c.add_argument("--work", default=str(work_root()), help="routing cache (work/)")
    c.add_argument("--routing-dir", help="OpenSM dumps from a re-route")
    c.add_argument("--lmc", type=int, help="LMC (default: the plane's conf; parx needs 2)")
    c.add_argument("--engine", choices=list(ENGINES), default="fast",
                   help="fluid engine: fast (compiled event loop, t2hx/flowsim/kernel; default) or exact "
                   "(the reference it is checked against)")
    c.set_defaults(func=cmd_simulate_capacity)


def cmd_simulate_capacity(args: argparse.Namespace) -> int:
    """Each app's fluid job comes from its benchmark module's workload (t2hx/benchmarks/),
    so a new capacity app needs no change here."""
    import numpy as np

    from t2hx import benchmarks
    from t2hx.flowsim.appmodel import system_node
    from t2hx.flowsim.network import open_network
    from t2hx.simulation import capacity_jobs

    run_jobs = _engine(args.engine)
    jobs_in = json.loads(Path(args.capacity).read_text())
    for app, job in jobs_in.items():          # an unknown app: one line naming the file
        benchmarks.get(job.get("benchmark", app), field=f"{args.capacity}: {app}")
    hosts, spans = [], {}
    for app, job in jobs_in.items():
        mine = Path(job["hostfile"]).read_text().split()
        spans[app] = np.arange(len(hosts), len(hosts) + len(mine))
        hosts += mine
    net = open_network(args.system, args.plane, args.routing, hosts=hosts, work=args.work,
                       routing=args.routing_dir, lmc=args.lmc)
    jobs = capacity_jobs(net, spans, load_study(), system_node(args.system), REPEATS)
    run_jobs(net, jobs, until=args.window)
    sys.stdout.write(wire.sim_header({
        "system": args.system, "plane": args.plane, "routing": args.routing,
        "window": f"{args.window:g}", "engine": args.engine}, kind="capacity"))
    for app, job in zip(spans, jobs):
        start = 0.0
        for run, end in enumerate(e for e in job.ends if e <= args.window):
            print(wire.capacity_line("finished", app=app, run=run, start=f"{start:.3f}",
                                     end=f"{end:.3f}"))
            start = end
    print(wire.CAPACITY_CLOSED)
    return 0


WORKLOAD_DOC = """``t2hx campaign simulate-workload``: one multi-job workload of the study (seed 003 §6) on
the flow model of a routed plane.

The study's ``workloads:`` section says how many jobs of how many nodes, drawn from which
applications, placed in randomized clusters (t2hx/placement/jobs.py), with which compute
scale and simulated window. Workload ``k`` draws its applications and node sets from
(seed, k) alone, so it is the same workload on every configuration: the six seed-003
systems share hostnames. Prints one ``T2HX workload job=...`` line per job
(t2hx/wire.py) and ``T2HX workload window closed``; checks/workload.py records them.
"""


def register_workload(verbs: argparse._SubParsersAction, engines: list[str]) -> None:
    w = verbs.add_parser("simulate-workload", help="a multi-job workload on the flow model",
                         description=WORKLOAD_DOC,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--system", required=True, help="conf/systems/<sys>.yaml or its name")
    w.add_argument("--plane", required=True)
    w.add_argument("--routing", required=True)
    w.add_argument("--workload", type=int, required=True,
                   help="which of the study's workloads (0 .. workloads.count - 1)")
    w.add_argument("--window", type=float, default=None,
                   help="simulated seconds (default: the study's workloads.window)")
    w.add_argument("--work", default=str(work_root()), help="routing cache (work/)")
    w.add_argument("--engine", choices=engines, default="fast",
                   help="fluid engine: fast (default) or exact (the reference)")
    w.set_defaults(func=cmd_simulate_workload)


def cmd_simulate_workload(args: argparse.Namespace) -> int:
    import numpy as np

    from t2hx import benchmarks
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim import multijob
    from t2hx.flowsim.appmodel import system_node
    from t2hx.flowsim.network import open_network
    from t2hx.placement.jobs import draw
    from t2hx.study import load_study, seconds

    study = load_study()
    system = load_system(system_path(args.system))
    apps, sets = draw(study, system, args.workload)
    spec = study.workloads
    window = args.window if args.window is not None else seconds(spec["window"])
    hosts = [h for s in sets for h in s]
    net = open_network(system, args.plane, args.routing, hosts=hosts, work=args.work)
    spans, at = [], 0
    for s in sets:
        spans.append(np.arange(at, at + len(s)))
        at += len(s)
    inputs = [study.input(app, len(s)) for app, s in zip(apps, sets)]
    codes = [benchmarks.app(app, field="workloads.apps") for app in apps]
    results = multijob.run_workload(net, codes, spans, inputs, float(spec["compute_scale"]),
                                    system_node(args.system), window, _engine(args.engine))
    sys.stdout.write(wire.sim_header({
        "system": system.name, "plane": args.plane, "routing": args.routing,
        "workload": args.workload, "window": f"{window:g}",
        "compute_scale": f"{spec['compute_scale']:g}", "engine": args.engine}, kind="workload"))
    for r in results:
        print(wire.workload_line(r))
    print(wire.WORKLOAD_CLOSED)
    return 0
