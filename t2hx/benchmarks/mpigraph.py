"""mpiGraph (seed 000 Fig 1): the sender x receiver bandwidth matrix; the metric is the
"Send avg" (MiB/s): message size over the mean time per message, as mpiGraph.c computes it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from t2hx import argtypes as A
from t2hx.benchmarks.base import Benchmark, Workload, option
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim.models import SimNetwork


@dataclass(frozen=True)
class MpiGraphOutput:
    hosts: list[str]                  # rank -> host
    size: int
    times: int
    window: int
    send: list[list[float]]           # MiB/s, row = sender, col = receiver; the receive
    #                                   matrix is its transpose (the same flows)


def run(request: SimRequest, net: SimNetwork) -> MpiGraphOutput:
    from t2hx.flowsim import patterns

    opts = request.options
    g = patterns.mpigraph(net, opts.size, opts.times, opts.window)
    return MpiGraphOutput(list(net.hosts), g.size, g.times, g.window, g.send.tolist())


def render(out: MpiGraphOutput) -> str:
    """mpiGraph v1.5's report: progress, then per direction max, avg and the matrix."""
    import numpy as np

    from t2hx.flowsim.mpigraph_mean import average

    send = np.array(out.send)
    n = len(send)
    names = [f"{h}:{i}" for i, h in enumerate(out.hosts)]
    lines = [f"START mpiGraph v1.5\nMsgSize\t{out.size}\nTimes\t{out.times}\n"
             f"Window\t{out.window}\nProcs\t{n}\n\n"]
    lines += [f"{i} of {n} ({100.0 * i / n:.1f}%)\n" for i in range(1, n)]
    lines.append("Gathering results\n\n")
    for kind, m, verb in (("Send", send, "to"), ("Recv", send.T, "from")):
        off = m[~np.eye(n, dtype=bool)] if n > 1 else np.zeros(1)
        lines.append(f"{kind} max\t{off.max():.6f}\n{kind} avg\t{average(m):.6f}\n\n")
        lines.append(kind + "\t" + "".join(f"{x}\t" for x in names) + "\n")
        for i in range(n):
            lines.append(f"{names[i]} {verb}\t" + "".join(f"{v:.3f}\t" for v in m[i]) + "\n")
        lines.append("\n")
    lines[-1] = "END mpiGraph\n"
    return "".join(lines)


def perturb(out: MpiGraphOutput, f: float) -> MpiGraphOutput:
    """Every bandwidth divides by the factor."""
    return replace(out, send=[[v / f for v in row] for row in out.send])


def sim_options(inp: dict[str, Any]) -> list[str]:
    return [*option(inp, "size", "--size", A.non_negative_int),
            *option(inp, "iters", "--times", A.positive_int),
            *option(inp, "window", "--window", A.positive_int)]


BENCHMARK = Benchmark(
    "mpigraph", "mpiGraph", "network", "MpiGraph", parser="mpigraph", metric="send_avg",
    unit="MiB/s", spack_spec="mpigraph", markers=(r"END mpiGraph",),
    workload=Workload(MpiGraphOutput, run, render, perturb), local_binary="mpiGraph",
    sim_options=sim_options)
