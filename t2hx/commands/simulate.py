"""``t2hx simulate``: run a benchmark on the flow model of a routed plane and print its
output in the upstream benchmark's own format (first line ``# t2hx-simulated: …``).

The command line becomes a typed request (t2hx/simrequest.py) for the simulator
(t2hx/simulation.py); names resolve through the benchmark registry (t2hx/benchmarks/), whose
module of the benchmark runs it. The flow model is imported only when a simulation runs, so
``t2hx --help`` stays fast.

A deterministic case is simulated once: later repetitions reuse its numbers from the run
cache (t2hx/flowsim/runcache.py) and say so in the first line (``cache=hit
repeat_of=<k>``). ``--noise slowdown|lognormal`` then multiplies the run's reported times (rates
divide) by a seeded factor of (``--noise-seed``, case, ``--repetition``)
(t2hx/flowsim/noise.py, docs/modelling.md#run-to-run-noise)."""

from __future__ import annotations

import argparse
from dataclasses import replace
import json
import os
import sys
from t2hx import argtypes as A

from t2hx import benchmarks
from t2hx.benchmarks import imbtext
from t2hx.atomic import atomic_write
from t2hx.conf import ENGINES, PARX_THRESHOLD as DEFAULT_THRESHOLD
from t2hx.routing_engines import RoutingInput
from t2hx.errors import WorkloadError
from t2hx.paths import work_root
from t2hx.simrequest import (DEFAULT_ELEMENTS, FLOW_MODEL, NETWORK_MODELS, BenchmarkOptions,
                             NetworkOptions, SimRequest)

NO_CACHE_ENV = "T2HX_NO_SIM_CACHE"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate a benchmark on a routed plane (flow model)",
                       description=__doc__)
    p.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", required=True, type=A.name, help="plane name in the system conf")
    p.add_argument("--routing", required=True, choices=ENGINES, metavar="ROUTING",
                   help="OpenSM routing engine, e.g. dfsssp")
    p.add_argument("--hostfile", required=True, type=A.input_file,
                   help="one hostname per line; rank i = line i")
    p.add_argument("--benchmark", required=True, type=A.name,
                   help="a benchmark of t2hx/benchmarks/: "
                   f"{', '.join(benchmarks.BY_KEY)}, an alias or e.g. imb-bcast")
    p.add_argument("--model", "--engine", dest="model", choices=NETWORK_MODELS,
                   default=FLOW_MODEL, help="network model: flow (max-min fluid model, the default) or packet "
                   "(MTU packets with credit flow control, docs/modelling.md#packet-engine)")
    p.add_argument("--lmc", type=A.lmc, default=None,
                   help="LMC (default: the plane's conf; parx always routes with 2)")
    p.add_argument("--routing-dir", default=None, type=A.input_dir,
                   help="use these OpenSM dumps (guid2lid, opensm-lfts.dump) instead of routing")
    given = p.add_mutually_exclusive_group()
    given.add_argument("--demand", default=None, type=A.input_file,
                       help="parx: route with this demand file")
    given.add_argument("--jobs", default=None, type=A.input_file,
                       help="sar: route with this job file")
    p.add_argument("--ranks-per-node", type=A.positive_int, default=1, metavar="N",
                   help="ranks per hostfile line, as Open MPI's --map-by ppr:N:node places "
                   "them (flow model; default 1)")
    p.add_argument("--parx-threshold", type=A.non_negative_int, default=DEFAULT_THRESHOLD,
                   help="parx: messages of fewer bytes use Table 1a, others 1b "
                   f"(default {DEFAULT_THRESHOLD})")
    p.add_argument("--work", default=str(work_root()), type=A.output_dir,
                   help="work dir; routing runs are cached in <work>/routing/")
    p.add_argument("--size", type=A.non_negative_int, default=1 << 20,
                   help="message bytes (mpiGraph, eBB)")
    p.add_argument("--times", type=A.positive_int, default=10, help="mpiGraph iterations")
    p.add_argument("--window", type=A.positive_int, default=10, help="mpiGraph window")
    p.add_argument("--rounds", type=A.positive_int, default=100, help="eBB random bisections")
    p.add_argument("--reps", type=A.positive_int, default=20, help="eBB repetitions per round")
    p.add_argument("--seed", type=A.non_negative_int, default=1, help="seed (eBB bisections)")
    p.add_argument("--msglog", default="0:22", type=A.msglog, help="IMB -msglog LO:HI")
    p.add_argument("--imb-iter", default=None, type=imbtext.iter_arg,
                   help="IMB -iter N[,MiB]: repetitions (and MiB) per size at most")
    p.add_argument("--iter-policy", default=imbtext.DEFAULT_POLICY,
                   choices=imbtext.POLICIES, help="IMB -iter_policy")
    p.add_argument("--imb-time", type=A.seconds, default=imbtext.SECS_PER_SAMPLE,
                   help="IMB -time: seconds per size")
    p.add_argument("--collectives", default=",".join(benchmarks.IMB_COLLECTIVES), type=A.text_line,
                   help="IMB benchmarks for --benchmark imb")
    p.add_argument("--elements", default=DEFAULT_ELEMENTS, type=A.non_negative_int_list,
                   help="ring-allreduce sizes (float elements), comma separated")
    p.add_argument("--compute-scale", type=A.non_negative_float, default=1.0,
                   help="apps: compute runs this many times faster (seed 003: 2, 10, 25, 50; "
                   "0: communication only)")
    p.add_argument("--iterations", type=A.positive_int, default=None,
                   help="apps: solver iterations")
    p.add_argument("--input", default=None,
                   help="apps and x500: the run's study input as JSON, e.g. "
                   "'{\"gib_per_rank\": 1.0, \"nb\": 192}' (default: the study's input "
                   "at this rank count, conf/studies/<study>.yaml)")
    p.add_argument("--repetition", type=A.non_negative_int, default=0,
                   help="repetition index of this run (noise draw; recorded in the first line)")
    p.add_argument("--noise", choices=("none", "lognormal", "slowdown"), default="none",
                   help="run-to-run noise model (default none: every repetition identical)")
    p.add_argument("--noise-cv", type=A.non_negative_float, default=0.0,
                   help="coefficient of variation of the noise factor, e.g. 0.05")
    p.add_argument("--noise-seed", type=A.non_negative_int, default=0,
                   help="seed of the noise draws")
    p.add_argument("--no-cache", action="store_true",
                   default=os.environ.get(NO_CACHE_ENV, "") not in ("", "0"),
                   help=f"simulate even if the run cache holds this case (default: set "
                   f"{NO_CACHE_ENV}=1 to bypass it for a whole campaign)")
    p.add_argument("--output", "-o", default=None, type=A.output_file,
                   help="write here instead of stdout")
    p.add_argument("--companion-output", default=None, type=A.output_file, metavar="FILE",
                   help="also simulate the case on the flow model (same repetition and noise "
                   "draw) and write that output here: the report's engine comparison")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx import simulation
    from t2hx.flowsim.noise import Noise
    from t2hx.flowsim.runcache import RunCache

    check_ranges(args)
    request = request_of(args)
    noise = Noise(args.noise, args.noise_cv, args.noise_seed)
    cache = None if args.no_cache else RunCache(args.work)
    text = simulation.simulate(request, noise, cache)
    if args.companion_output:       # one process for both engines: a start-up saved per case
        flow = simulation.simulate(replace(request, model=FLOW_MODEL), noise, cache)
        atomic_write(args.companion_output, flow)
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


#: The numeric options' valid ranges (lowest, highest; None: unbounded). A value outside
#: would still print plausible-looking numbers (a negative size, nan rates), so it is refused.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "size": (0, None), "times": (1, None), "window": (1, None), "rounds": (1, None),
    "reps": (1, None), "iterations": (1, None), "lmc": (0, 7), "repetition": (0, None),
    "seed": (0, None), "noise_seed": (0, None), "noise_cv": (0, None),
    "parx_threshold": (0, None), "ranks_per_node": (1, None),
    "compute_scale": (0, None)}      # 0: communication only (seed 003's *-comm combos)


def check_ranges(args: argparse.Namespace) -> None:
    for name, (low, high) in RANGES.items():
        value = getattr(args, name, None)
        if value is None or not isinstance(value, (int, float)):
            continue
        if (low is not None and value < low) or (high is not None and value > high) \
                or value != value:
            bounds = f">= {low:g}" if high is None else f"in {low:g}..{high:g}"
            option = "--" + name.replace("_", "-")
            raise WorkloadError(f"{option} {value} is out of range", field=option,
                                fix=f"give a value {bounds}")


def request_of(args: argparse.Namespace) -> SimRequest:
    """The command line as a simulation request."""
    bench, variant = benchmarks.resolve(args.benchmark, field="--benchmark")
    network = NetworkOptions(lmc=args.lmc, routing_dir=args.routing_dir,
                             routing_input=RoutingInput.of(args.demand, args.jobs),
                             parx_threshold=args.parx_threshold,
                             work=args.work, quiet=args.quiet,
                             ranks_per_node=args.ranks_per_node)
    options = BenchmarkOptions(
        msglog=args.msglog, imb_iter=args.imb_iter or "", iter_policy=args.iter_policy,
        imb_time=args.imb_time, size=args.size, times=args.times, window=args.window,
        rounds=args.rounds, reps=args.reps, elements=args.elements,
        collectives=args.collectives, compute_scale=args.compute_scale,
        iterations=args.iterations)
    return SimRequest(args.system, args.plane, args.routing, args.hostfile, bench.key,
                      variant, input_for(bench, args), args.seed, args.repetition, network,
                      options, getattr(args, "model", FLOW_MODEL))


def input_for(bench: benchmarks.Benchmark, args: argparse.Namespace) -> dict | None:
    """``--input``, or for a code the model runs, the study's input at the hostfile's rank
    count: resolved here, so the run cache keys on the input the run used and the simulator
    never reads the study file."""
    given = input_of(args.input)
    if given is not None or bench.app is None:
        return given
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim.network import read_hostfile
    from t2hx.study import load_study

    study = load_study()
    if bench.app.key not in study.catalog:
        raise WorkloadError(f"no --input and the study has no '{bench.app.key}'",
                            field="--input", fix="give --input as a JSON object")
    hosts = read_hostfile(args.hostfile, load_system(system_path(args.system)))
    return study.input(bench.app.key, len(hosts))


def input_of(text: str | None) -> dict | None:
    """``--input`` as a JSON object; None: the study's input at the run's rank count."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise WorkloadError(f"--input is not JSON ({err.msg})", field="--input",
                            fix="give a JSON object, e.g. '{\"cube\": 256}'") from None
    if not isinstance(value, dict):
        raise WorkloadError("--input is not a JSON object", field="--input",
                            fix="give a JSON object, e.g. '{\"cube\": 256}'")
    return value
