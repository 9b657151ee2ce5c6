"""``t2hx simulate``: run a benchmark on the flow model of a routed plane and print its
output in the upstream benchmark's own format (first line ``# t2hx-simulated: …``).

Names resolve through the benchmark registry (t2hx/benchmarks.py); the entry's ``workload``
picks the renderer in t2hx/flowsim/workloads.py. The flow model is imported only when a
simulation runs, so ``t2hx --help`` stays fast."""

from __future__ import annotations

import argparse
import sys

from t2hx import benchmarks
from t2hx.atomic import atomic_write
from t2hx.paths import work_root
from t2hx.routing.parx import DEFAULT_THRESHOLD

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
                   help="apps: compute runs this many times faster (seed 003: 2, 10, 25, 50)")
    p.add_argument("--iterations", type=int, default=None, help="apps: solver iterations")
    p.add_argument("--output", "-o", default=None, help="write here instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx.flowsim import output, workloads
    from t2hx.flowsim.network import open_network

    bench, variant = benchmarks.resolve(args.benchmark, field="--benchmark")
    net = open_network(args.system, args.plane, args.routing, args.hostfile, work=args.work,
                       lmc=args.lmc, routing=args.routing_dir, quiet=args.quiet,
                       demand=args.demand, jobs=args.jobs, parx_threshold=args.parx_threshold)
    # Skeleton runs depend on the compute scale: the header records it for post.
    extra = {"compute_scale": args.compute_scale} if bench.skeleton else {}
    text = output.header(net, **extra) + workloads.render(net, bench, variant, args)
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0
