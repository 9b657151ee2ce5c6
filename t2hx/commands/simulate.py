"""``t2hx simulate``: run a benchmark on the flow model of a routed plane and print its
output in the upstream benchmark's own format (first line ``# t2hx-simulated: …``)."""

from __future__ import annotations

import argparse
import sys

from t2hx.paths import work_root
from t2hx.atomic import atomic_write
from t2hx.errors import WorkloadError
from t2hx.routing.parx import DEFAULT_THRESHOLD

BENCHMARKS = ("mpigraph", "ebb", "imb", "barrier", "bcast", "gather", "scatter", "reduce",
              "allreduce", "alltoall", "ring-allreduce", "mupp", "emdl")
DEFAULT_ELEMENTS = "0,32,256,1024,4096,16384,65536,262144,1048576,8388608,67108864"


def register(sub: argparse._SubParsersAction) -> None:
    from t2hx.flowsim.apps import APPS

    p = sub.add_parser("simulate", help="simulate a benchmark on a routed plane (flow model)",
                       description=__doc__)
    p.add_argument("--system", required=True, help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", required=True, help="plane name in the system conf")
    p.add_argument("--routing", required=True, help="OpenSM routing engine, e.g. dfsssp")
    p.add_argument("--hostfile", required=True, help="one hostname per line; rank i = line i")
    p.add_argument("--benchmark", required=True,
                   help=f"one of: {', '.join(BENCHMARKS + APPS)}")
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
    p.add_argument("--collectives", default="Barrier,Bcast,Gather,Scatter,Reduce,Allreduce,"
                   "Alltoall", help="IMB benchmarks for --benchmark imb")
    p.add_argument("--elements", default=DEFAULT_ELEMENTS,
                   help="ring-allreduce sizes (float elements), comma separated")
    p.add_argument("--compute-scale", type=float, default=1.0,
                   help="apps: compute runs this many times faster (seed 003: 2, 10, 25, 50)")
    p.add_argument("--iterations", type=int, default=None, help="apps: solver iterations")
    p.add_argument("--output", "-o", default=None, help="write here instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx.flowsim.network import open_network

    net = open_network(args.system, args.plane, args.routing, args.hostfile, work=args.work,
                       lmc=args.lmc, routing=args.routing_dir, quiet=args.quiet,
                       demand=args.demand, jobs=args.jobs, parx_threshold=args.parx_threshold)
    text = render(net, args)
    if args.output:
        atomic_write(args.output, text)
    else:
        sys.stdout.write(text)
    return 0


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise WorkloadError(f"not a list of integers: {text!r}", field=what,
                            fix="write e.g. 0,1024,1048576") from None


def _msglog(text: str) -> list[int]:
    from t2hx.flowsim.output import msglog_sizes

    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="write LO:HI, "
                            "e.g. 0:22") from None
    if not 0 <= lo <= hi <= 31:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="0 <= LO <= HI <= 31")
    return msglog_sizes(lo, hi)


def render(net, args: argparse.Namespace) -> str:
    from t2hx.flowsim import apps, collectives, output, patterns

    name = args.benchmark.lower()
    if name not in BENCHMARKS + apps.APPS + ("baidu", "allreduce-ring", "qball", "qb@ll"):
        raise WorkloadError(f"unknown benchmark '{args.benchmark}'", field="--benchmark",
                            fix=f"use one of: {', '.join(BENCHMARKS + apps.APPS)}")
    head = output.header(net)
    n = net.ranks
    if name == "mpigraph":
        g = patterns.mpigraph(net, args.size, args.times, args.window)
        return head + output.mpigraph_text(net, g)
    if name == "ebb":
        e = patterns.ebb(net, args.size, args.rounds, args.reps, args.seed)
        return head + output.ebb_text(net, e, f"netgauge -s {args.size} -m mpi -x ebb "
                                      f"-r {args.rounds}")
    if name in ("imb", "emdl") or name.capitalize() in collectives.COLLECTIVES:
        sizes = _msglog(args.msglog)
        if name == "emdl":
            names = ["SleepyAllreduce"]
        elif name == "imb":
            names = [collectives.canonical(c.strip()) for c in args.collectives.split(",")
                     if c.strip()]
        else:
            names = [collectives.canonical(name)]
        cmd = f"IMB-MPI1 -msglog {args.msglog} " + " ".join(names)
        body = output.imb_preamble(names, cmd)
        for c in names:
            rows = (patterns.emdl(net, sizes) if c == "SleepyAllreduce"
                    else patterns.imb(net, c, sizes))
            body += output.imb_table(c, n, rows)
        return head + body + output.imb_footer()
    if name == "mupp":
        rows = patterns.multi_pingpong(net, _msglog(args.msglog))
        cmd = f"IMB-MPI1 -multi 0 -msglog {args.msglog} PingPong"
        return (head + output.imb_preamble(["Multi-PingPong"], cmd)
                + output.multi_pingpong_table(n, rows) + output.imb_footer())
    if name in ("ring-allreduce", "baidu", "allreduce-ring"):
        rows = [(e, patterns.ring_allreduce(net, e)) for e in _ints(args.elements, "elements")]
        return head + output.baidu_lines(rows)
    res = apps.run_app(net, name, args.compute_scale, args.iterations)
    return (output.header(net, compute_scale=args.compute_scale)
            + apps.text(res, n))
