"""``t2hx campaign run|dry-run|status``: the study through ReFrame, as one named campaign
(t2hx/campaign/); ``reroute``, ``simulate-capacity`` and ``simulate-workload``: the steps
the checks run inside a case.

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
import json
import sys
from pathlib import Path
from t2hx import argtypes as A, routing_engines

from t2hx.campaign.selection import SIM
from t2hx.cli import defer
from t2hx.errors import T2hxError
from t2hx.conf import ENGINES, load_system, system_path
from t2hx.paths import work_root
from t2hx.study import DEFAULT_STUDY, PLACEMENT_POLICIES as POLICIES, STUDY_ENV


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
        v.add_argument("--campaign", default="default", type=A.name,
                       help="log/<campaign> (default: default)")
        v.add_argument("--profile", default=None, type=A.name,
                       help="study profile: full or quick (default: full; status: the "
                       "campaign's)")
        v.add_argument("--study", default=None, type=A.text_line,
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
    r.add_argument("--system", required=True, type=A.system, help="conf/systems/<sys>.yaml")
    r.add_argument("--plane", required=True, type=A.name, help="plane name")
    r.add_argument("--routing", required=True, choices=ENGINES, metavar="ROUTING",
                   help="the combo's engine (sim: parx or sar)")
    r.add_argument("--mode", default="sim", choices=("sim", "real"),
                   help="sim: route under ibsim into --out; real: have the plane's OpenSM "
                   "route with it (docs/cluster.md) and record the verified result")
    r.add_argument("--out", default="routing", type=A.output_dir,
                   help="routing directory (default: routing)")
    r.add_argument("--hostfile", action="append", default=[], type=A.input_file,
                   help="the job's hostfile")
    r.add_argument("--benchmark", action="append", default=[], type=A.name,
                   help="the job's benchmark")
    r.add_argument("--input", action="append", default=[], type=A.json_object,
                   help="the job's study input as JSON (a demand derived from the "
                   "benchmark's pattern when no profile was recorded at its rank count)")
    r.add_argument("--jobs-json", type=A.input_file,
                   help="capacity.json of the capacity check (several jobs)")
    r.add_argument("--background", type=A.input_file, default=None,
                   help="job file of the other jobs running beside these (a job-file engine "
                   "routes for them too; t2hx history background)")
    r.set_defaults(func=cmd_route_job)
    register_capacity(verbs)
    register_workload(verbs)
    register_history(verbs)
    register_network(verbs)


REROUTE_DOC = """Route a plane for one job (docs/routing.md#re-routing). sar: the job file from
the jobs' hostfiles (t2hx demand jobs). parx: the demand file from the benchmark's
communication profile conf/profiles/<benchmark>/<ranks>/<prefix files> (Open MPI
pml_monitoring, t2hx demand build); without a profile PARX keeps its demand-free routing
(said on stderr). --mode sim routes under ibsim into --out. --mode real asks the plane's
OpenSM host to route with the combo's engine and LMC (any engine), waits for OpenSM's own
confirmation and writes --out/route.json; it exits non-zero on any failure (docs/cluster.md)."""


SYSTEM_HELP = __doc__[__doc__.index("--system:"):]


def cmd_campaign(args: argparse.Namespace) -> int:  # run | dry-run | status
    from t2hx.campaign import CampaignRequest, run

    return run(CampaignRequest(
        verb=args.verb, system=args.system, campaign=args.campaign, profile=args.profile,
        study=args.study, reframe_args=list(getattr(args, "reframe_args", [])),
        quiet=args.quiet, report=getattr(args, "report", False)))


def _jobs(args: argparse.Namespace) -> list:
    """The jobs to route for: the capacity check's jobs, or one per --hostfile."""
    from t2hx.routing.reroute import JobSpec

    if args.jobs_json:
        data = json.loads(Path(args.jobs_json).read_text())
        return [JobSpec(app, job["benchmark"], Path(job["hostfile"]).resolve(),
                        job.get("params")) for app, job in data.items()]
    if len(args.hostfile) != len(args.benchmark) or not args.hostfile:
        raise T2hxError("give one --benchmark per --hostfile", field="--hostfile",
                        fix="e.g. --hostfile hostfiles/t2hx/linear/7.txt --benchmark hpl")
    if args.input and len(args.input) != len(args.benchmark):
        raise T2hxError("give one --input per --benchmark, or none", field="--input",
                        fix="e.g. --benchmark mpigraph --input '{\"size\": 1048576}'")
    inputs = args.input or [None] * len(args.benchmark)
    return [JobSpec(f"job{i}", b, Path(h).resolve(), inp)
            for i, (b, h, inp) in enumerate(zip(args.benchmark, args.hostfile, inputs))]


def cmd_route_job(args: argparse.Namespace) -> int:
    from t2hx.traffic import derived_traffic
    from t2hx.conf import load_system, system_path
    from t2hx.routing.reroute import reroute_for_jobs, route_real

    system = load_system(system_path(args.system))
    out = Path(args.out).resolve()
    if args.mode == "real":
        jobs = _jobs(args) if args.hostfile or args.jobs_json else []
        result = route_real(system, args.plane, args.routing, jobs, out=out,
                            quiet=args.quiet or None, derive=derived_traffic,
                            background=args.background)
        print(f"{result['host']}: plane {args.plane} routed with {result['engine_used']}, "
              f"LMC {result['lmc']} (verified from OpenSM's log and dumps)")
        return 0
    if args.routing not in routing_engines.input_aware():
        raise T2hxError(f"{args.routing} is not re-routed per job in simulation",
                        field="--routing", fix=f"use {' or '.join(routing_engines.input_aware())}"
                        " (or --mode real)")
    reroute_for_jobs(system, args.plane, args.routing, _jobs(args), out=out,
                     quiet=args.quiet or None, derive=derived_traffic,
                     background=args.background)
    return 0


def register_capacity(verbs: argparse._SubParsersAction) -> None:
    c = verbs.add_parser("simulate-capacity", help="capacity mode on the flow model",
                         description="All capacity apps at once on their node sets "
                         "(capacity.json of checks/capacity.py) in the event-driven fluid "
                         "model until the simulated window closes; prints one line per "
                         "finished run, then the window's end (the check's record format).")
    c.add_argument("--system", required=True, type=A.system)
    c.add_argument("--plane", required=True, type=A.name)
    c.add_argument("--routing", required=True, choices=ENGINES, metavar="ROUTING")
    c.add_argument("--capacity", required=True, type=A.input_file, help="capacity.json")
    c.add_argument("--window", type=A.seconds, required=True, help="simulated seconds")
    c.add_argument("--work", default=str(work_root()), type=A.output_dir,
                   help="routing cache (work/)")
    c.add_argument("--routing-dir", type=A.input_dir, help="OpenSM dumps from a re-route")
    c.add_argument("--lmc", type=A.lmc, help="LMC (default: the plane's conf; parx needs 2)")
    defer(c, lambda p: fluid_solver_arg(p, "fluid solver: fast (compiled event loop, "
                                        "t2hx/flowsim/kernel; default) or exact (the "
                                        "reference it is checked against)"))
    c.set_defaults(func=cmd_simulate_capacity)


def fluid_solver_arg(p: argparse.ArgumentParser, text: str) -> None:
    from t2hx.jobmix import FLUID_SOLVERS     # numpy: deferred (t2hx/cli.py)

    p.add_argument("--solver", "--engine", dest="solver", choices=list(FLUID_SOLVERS),
                   default="fast", help=text)


def cmd_simulate_capacity(args: argparse.Namespace) -> int:
    from t2hx.jobmix import capacity_text

    sys.stdout.write(capacity_text(args.system, args.plane, args.routing, Path(args.capacity),
                                   args.window, args.work, args.routing_dir, args.lmc,
                                   args.solver))
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


def register_workload(verbs: argparse._SubParsersAction) -> None:
    w = verbs.add_parser("simulate-workload", help="a multi-job workload on the flow model",
                         description=WORKLOAD_DOC,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    w.add_argument("--plane", required=True, type=A.name)
    w.add_argument("--routing", required=True, choices=ENGINES, metavar="ROUTING")
    w.add_argument("--workload", type=A.non_negative_int, required=True,
                   help="which of the study's workloads (0 .. workloads.count - 1)")
    w.add_argument("--window", type=A.seconds, default=None,
                   help="simulated seconds (default: the study's workloads.window)")
    w.add_argument("--compute-scale", type=A.non_negative_float, default=None,
                   help="the jobs' compute scaling, the case's combo's (0: communication "
                   "only; default: the study's workloads.compute_scale, else 1)")
    w.add_argument("--work", default=str(work_root()), type=A.output_dir,
                   help="routing cache (work/)")
    defer(w, lambda p: fluid_solver_arg(p, "fluid solver: fast (default) or exact (the "
                                        "reference)"))
    w.set_defaults(func=cmd_simulate_workload)


def cmd_simulate_workload(args: argparse.Namespace) -> int:
    from t2hx.jobmix import workload_text

    sys.stdout.write(workload_text(args.system, args.plane, args.routing, args.workload,
                                   args.window, args.work, args.solver, args.compute_scale))
    return 0


def register_history(verbs: argparse._SubParsersAction) -> None:
    h = verbs.add_parser("simulate-history", help="one day of a job history replayed under "
                         "updn, ftree, dfsssp and SAR (seed 004 §4.2)")
    h.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    h.add_argument("--plane", required=True, type=A.name)
    h.add_argument("--trace", required=True, type=A.input_file, help="the job trace")
    h.add_argument("--day", required=True, type=A.non_negative_int,
                   help="days after the trace's first job")
    h.add_argument("--interval", type=A.seconds, default=600.0,
                   help="seconds between samples (default 600)")
    h.add_argument("--placement", default="first-fit", choices=POLICIES,
                   help="how a trace without node lists is placed (default first-fit; "
                   "docs/history.md#placement)")
    h.add_argument("--rows", required=True, type=A.as_path(A.output_file),
                   help="the day's rows (JSON) to write")
    h.add_argument("--work", default=str(work_root()), type=A.output_dir,
                   help="routing cache (work/)")
    h.set_defaults(func=cmd_simulate_history)


def cmd_simulate_history(args: argparse.Namespace) -> int:
    from t2hx.history.sample_routing import day_text

    system = load_system(system_path(args.system))
    system.plane(args.plane)
    sys.stdout.write(day_text(system, args.plane, args.trace, args.day, args.interval,
                              Path(args.work), args.rows, args.quiet, args.placement))
    return 0


def register_network(verbs: argparse._SubParsersAction) -> None:
    n = verbs.add_parser("analyse-network", help="diameter, ASPL, collective and point-to-point "
                         "hops, cable length of one generated network (seed 001 Ch. 5)")
    defer(n, network_args)
    n.set_defaults(func=cmd_analyse_network)


def network_args(n: argparse.ArgumentParser) -> None:
    from t2hx.placement.network_analysis import (  # scipy: deferred (t2hx/cli.py)
        KINDS, Annealing, Sweep)

    d = Sweep()
    n.add_argument("--kind", required=True, choices=KINDS)
    n.add_argument("--switches", required=True, type=A.positive_int, help="a power of two")
    n.add_argument("--seed", type=A.non_negative_int, default=d.seed)
    n.add_argument("--iterations", type=A.non_negative_int, default=d.iterations,
                   help=f"two-opt swap trials (default {d.iterations})")
    n.add_argument("--two-opt-up-to", type=A.positive_int, default=d.two_opt_up_to)
    n.add_argument("--p2p-switches", type=A.positive_int, default=d.p2p_switches)
    n.add_argument("--table-switches", type=A.positive_int, default=d.table_switches)
    n.add_argument("--table-ranks", type=A.positive_int, default=d.table_ranks)
    n.add_argument("--table-iterations", type=A.non_negative_int, default=d.table_iterations,
                   help=f"two-opt swap trials of the tables (default {d.table_iterations})")
    n.add_argument("--p2p-system", metavar="NAME|PATH", type=A.system,
                   help="a conf system whose model and link rate time the point-to-point "
                   "exchanges (Fig 5.13); without it, hops only")
    n.add_argument("--p2p-bytes", type=A.positive_int, default=128,
                   help="bytes each way of a point-to-point exchange (default 128, §5.3.2)")
    a = Annealing()
    n.add_argument("--sa-iterations", default=None, metavar="LIST", type=A.positive_int_list,
                   help="§3.5 (Figs 3.17, 3.18) on random shortcut networks: simulated annealing "
                   "with these iterations (each at most 1000000) beside two-opt and the "
                   "conventional Broadcast, e.g. 72,1000,10000 (default: not run); the other "
                   "--sa-* options need it")
    n.add_argument("--sa-degree", type=A.int_range(3, 1024, "degree"), default=None,
                   help=f"degree of §3.5's random network (default {a.degree})")
    n.add_argument("--sa-two-opt-trials", type=A.non_negative_int, default=None,
                   help=f"two-opt's swap trials in §3.5 (default {a.two_opt_trials})")
    n.add_argument("--sa-up-to", type=A.positive_int, default=None,
                   help=f"largest network of §3.5's comparison (default {a.up_to})")
    n.add_argument("--sa-trials-up-to", type=A.int_range(1, 10**9, "trials"), default=None,
                   help="leave out an annealing run of more swap trials (iterations x N; "
                   f"default {a.trials_up_to})")
    n.add_argument("--rows", required=True, type=A.as_path(A.output_file),
                   help="the analysis (JSON) to write")


SA_OPTIONS = ("sa_degree", "sa_two_opt_trials", "sa_up_to", "sa_trials_up_to")


def annealing_of(args: argparse.Namespace):
    """§3.5's comparison from the --sa-* options, or None without --sa-iterations (then any
    other --sa-* option is refused, not ignored)."""
    from t2hx.errors import T2hxError
    from t2hx.placement.network_analysis import Annealing

    given = [o for o in SA_OPTIONS if getattr(args, o) is not None]
    if args.sa_iterations is None:
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise T2hxError(f"{flag} without --sa-iterations", field=flag,
                            fix="add --sa-iterations (e.g. 72,1000,10000) or drop it")
        return None
    counts = tuple(int(x) for x in args.sa_iterations.split(",") if x.strip())
    if max(counts) > 1_000_000:
        raise T2hxError(f"{max(counts)} annealing iterations", field="--sa-iterations",
                        fix="use at most 1000000 per run")
    fields = {o[3:]: getattr(args, o) for o in given}      # sa_degree -> degree, ...
    return Annealing(sa_iterations=counts, **fields)


def cmd_analyse_network(args: argparse.Namespace) -> int:
    import json

    from t2hx import wire
    from t2hx.atomic import atomic_write
    from t2hx.flowsim.exchange import p2p_timing
    from t2hx.placement.network_analysis import Sweep, analyse, summary

    timing = p2p_timing(load_system(system_path(args.p2p_system)),
                        args.p2p_bytes) if args.p2p_system else None
    annealing = annealing_of(args)
    sweep = Sweep(args.seed, args.iterations, args.two_opt_up_to, args.p2p_switches,
                  args.table_switches, args.table_ranks, args.table_iterations, timing,
                  annealing)
    out = analyse(args.kind, args.switches, sweep)
    atomic_write(args.rows, json.dumps(out, indent=1) + "\n")
    print(wire.network_line(summary(out)))
    print(wire.NETWORK_DONE)
    return 0
