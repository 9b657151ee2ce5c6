"""``t2hx simulate``: run a benchmark on the flow model of a routed plane and print its
output in the upstream benchmark's own format (first line ``# t2hx-simulated: …``).

Names resolve through the benchmark registry (t2hx/benchmarks.py); the entry's ``workload``
picks the renderer in t2hx/flowsim/workloads.py. The flow model is imported only when a
simulation runs, so ``t2hx --help`` stays fast.

A deterministic case is simulated once: later repetitions reuse its output from the run
cache (t2hx/flowsim/runcache.py) and say so in the first line (``cache=hit
repeat_of=<k>``). ``--noise slowdown|lognormal`` then multiplies the run's reported times (rates
divide) by a seeded factor of (``--noise-seed``, case, ``--repetition``)
(t2hx/flowsim/noise.py, docs/modelling.md#run-to-run-noise)."""

from __future__ import annotations

import argparse
import os
import sys

from t2hx import benchmarks
from t2hx.atomic import atomic_write
from t2hx.errors import WorkloadError
from t2hx.paths import work_root
from t2hx.routing.parx import DEFAULT_THRESHOLD

NO_CACHE_ENV = "T2HX_NO_SIM_CACHE"
DEFAULT_ELEMENTS = "0,32,256,1024,4096,16384,65536,262144,1048576,8388608,67108864"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate a benchmark on a routed plane (flow model)",
                       description=__doc__)
    p.add_argument("--system", required=True, help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", required=True, help="plane name in the system conf")
    p.add_argument("--routing", required=True, help="OpenSM routing engine, e.g. dfsssp")
    p.add_argument("--hostfile", required=True, help="one hostname per line; rank i = line i")
    p.add_argument("--benchmark", required=True,
                   help="a benchmark of t2hx/benchmarks.py: "
                   f"{', '.join(benchmarks.BY_KEY)}, an alias or e.g. imb-bcast")
    p.add_argument("--lmc", type=int, default=None,
                   help="LMC (default: the plane's conf; parx always routes with 2)")
    p.add_argument("--routing-dir", default=None,
                   help="use these OpenSM dumps (guid2lid, opensm-lfts.dump) instead of routing")
    p.add_argument("--demand", default=None, help="parx: route with this demand file")
    p.add_argument("--jobs", default=None, help="sar: route with this job file")
    p.add_argument("--parx-threshold", type=int, default=DEFAULT_THRESHOLD,
                   help="parx: messages of fewer bytes use Table 1a, others 1b "
                   f"(default {DEFAULT_THRESHOLD})")
    p.add_argument("--work", default=str(work_root()),
                   help="work dir; routing runs are cached in <work>/routing/")
    p.add_argument("--size", type=int, default=1 << 20, help="message bytes (mpiGraph, eBB)")
    p.add_argument("--times", type=int, default=10, help="mpiGraph iterations")
    p.add_argument("--window", type=int, default=10, help="mpiGraph window")
    p.add_argument("--rounds", type=int, default=100, help="eBB random bisections")
    p.add_argument("--reps", type=int, default=20, help="eBB repetitions per round")
    p.add_argument("--seed", type=int, default=1, help="seed (eBB bisections)")
    p.add_argument("--msglog", default="0:22", help="IMB -msglog LO:HI")
    p.add_argument("--collectives", default=",".join(benchmarks.IMB_COLLECTIVES),
                   help="IMB benchmarks for --benchmark imb")
    p.add_argument("--elements", default=DEFAULT_ELEMENTS,
                   help="ring-allreduce sizes (float elements), comma separated")
    p.add_argument("--compute-scale", type=float, default=1.0,
                   help="apps: compute runs this many times faster (seed 003: 2, 10, 25, 50; "
                   "0: communication only)")
    p.add_argument("--iterations", type=int, default=None, help="apps: solver iterations")
    p.add_argument("--input", default=None,
                   help="apps and x500: the run's study input as JSON, e.g. "
                   "'{\"gib_per_rank\": 1.0, \"nb\": 192}' (default: the study's input "
                   "at this rank count, conf/studies/<study>.yaml)")
    p.add_argument("--repetition", type=int, default=0,
                   help="repetition index of this run (noise draw; recorded in the first line)")
    p.add_argument("--noise", choices=("none", "lognormal", "slowdown"), default="none",
                   help="run-to-run noise model (default none: every repetition identical)")
    p.add_argument("--noise-cv", type=float, default=0.0,
                   help="coefficient of variation of the noise factor, e.g. 0.05")
    p.add_argument("--noise-seed", type=int, default=0, help="seed of the noise draws")
    p.add_argument("--no-cache", action="store_true",
                   default=os.environ.get(NO_CACHE_ENV, "") not in ("", "0"),
                   help=f"simulate even if the run cache holds this case (default: set "
                   f"{NO_CACHE_ENV}=1 to bypass it for a whole campaign)")
    p.add_argument("--output", "-o", default=None, help="write here instead of stdout")
    p.set_defaults(func=run)


# Options that do not change what is simulated (the cache key leaves them out).
NOT_INPUTS = ("func", "quiet", "output", "work", "repetition", "noise", "noise_cv",
              "noise_seed", "no_cache", "seed", "system", "plane", "routing", "hostfile",
              "benchmark", "lmc", "routing_dir", "demand", "jobs", "command")


def run(args: argparse.Namespace) -> int:
    from t2hx.conf import system_path
    from t2hx.flowsim import noise, runcache

    bench, variant = benchmarks.resolve(args.benchmark, field="--benchmark")
    if args.noise_cv < 0:
        raise WorkloadError(f"negative --noise-cv {args.noise_cv}", field="--noise-cv",
                            fix="give a coefficient of variation >= 0, e.g. 0.05")
    inputs = runcache.case_inputs(
        benchmark=bench.name(variant), workload=bench.workload,
        system_file=system_path(args.system), plane=args.plane, engine=args.routing,
        lmc=args.lmc, hostfile=args.hostfile, routing_dir=args.routing_dir,
        demand=args.demand, jobs=args.jobs, seed=args.seed,
        options={k: v for k, v in sorted(vars(args).items()) if k not in NOT_INPUTS})
    case = runcache.digest(inputs)     # by content: the same on every machine and checkout
    make = lambda: simulate(args, bench, variant)  # noqa: E731
    if args.no_cache:
        text, repeat_of = make(), None
    else:
        # The cached text names the system and hostfile as given: they are part of the key.
        key = runcache.digest({"case": case, "code": runcache.code_version(),
                               "names": [args.system, args.hostfile]})
        text, repeat_of = runcache.RunCache(args.work).get_or_make(key, args.repetition, make)
    model = noise.Noise(args.noise, args.noise_cv, args.noise_seed)
    factor = model.factor(noise_key(args, bench, variant), args.repetition)
    head, _, body = text.partition("\n")
    marks = run_marks(args, model, factor, repeat_of)
    text = head + "".join(f" {k}={v}" for k, v in marks.items()) + "\n" + \
        noise.perturb(bench.workload, body, factor)
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def noise_key(args: argparse.Namespace, bench: benchmarks.Benchmark,
              variant: str | None) -> str:
    """What a run's noise draw depends on: the benchmark, its options and its rank count,
    not the fabric, routing or placement. Every combo's repetition k of a case sees the same
    machine state (common random numbers): repetitions spread as on a real machine, while
    the differences between combos stay the fabric's (docs/modelling.md#run-to-run-noise)."""
    from pathlib import Path

    from t2hx.flowsim import runcache

    lines = Path(args.hostfile).read_text().splitlines()
    ranks = sum(1 for line in lines if line.split("#", 1)[0].strip())
    options = {k: v for k, v in sorted(vars(args).items()) if k not in NOT_INPUTS}
    return runcache.digest({"benchmark": bench.name(variant), "options": options,
                            "ranks": ranks})


def run_marks(args: argparse.Namespace, model, factor: float,
              repeat_of: int | None) -> dict[str, object]:
    """What the first line adds about this run (docs/formats.md#simulated-output)."""
    marks: dict[str, object] = {
        "repetition": args.repetition,
        "cache": "off" if args.no_cache else "miss" if repeat_of is None else "hit",
        "noise": model.label()}
    if repeat_of is not None:
        marks["repeat_of"] = repeat_of
    if model.on:
        marks["noise_factor"] = f"{factor:.6f}"
    return marks


def simulate(args: argparse.Namespace, bench: benchmarks.Benchmark,
             variant: str | None) -> str:
    """The noiseless output of one case: header line + the upstream text."""
    from t2hx.flowsim import output, workloads
    from t2hx.flowsim.network import open_network

    net = open_network(args.system, args.plane, args.routing, args.hostfile, work=args.work,
                       lmc=args.lmc, routing=args.routing_dir, quiet=args.quiet,
                       demand=args.demand, jobs=args.jobs, parx_threshold=args.parx_threshold)
    # Skeleton runs depend on the compute scale: the header records it for post.
    extra = {"compute_scale": args.compute_scale} if bench.skeleton else {}
    if bench.skeleton:
        args.app_input = app_input(args, bench, net.ranks)
        args.node = node_rates(args.system)
    return output.header(net, **extra) + workloads.render(net, bench, variant, args)


def app_input(args: argparse.Namespace, bench: benchmarks.Benchmark, ranks: int) -> dict:
    """``--input`` or the study's input of the benchmark at ``ranks`` nodes."""
    import json

    if args.input is None:
        from t2hx.study import load_study

        study = load_study()
        if bench.key not in study.catalog:
            raise WorkloadError(f"no --input and the study has no '{bench.key}'",
                                field="--input", fix="give --input as a JSON object")
        return study.input(bench.key, ranks)
    try:
        value = json.loads(args.input)
    except json.JSONDecodeError as err:
        raise WorkloadError(f"--input is not JSON ({err.msg})", field="--input",
                            fix="give a JSON object, e.g. '{\"cube\": 256}'") from None
    if not isinstance(value, dict):
        raise WorkloadError("--input is not a JSON object", field="--input",
                            fix="give a JSON object, e.g. '{\"cube\": 256}'")
    return value


def node_rates(system: str) -> dict:
    """The conf system's node rates (docs/modelling.md#application-models)."""
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim import appmodel

    return appmodel.node_of(load_system(system_path(system)).nodes)
