"""Netgauge effective bisection bandwidth (seed 000 §4.1: random bisections of 1 MiB
exchanges); the metric is the final average bandwidth [MB/s: netgauge prints bytes per µs
and labels it MiB/s, t2hx/post/parsers/netgauge.py]."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from t2hx import argtypes as A
from t2hx.benchmarks.base import Benchmark, Workload, option
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim.models import SimNetwork


@dataclass(frozen=True)
class EbbOutput:
    ranks: int
    command: str
    size: int
    reps: int
    round_times: list[list[float]]    # (rounds, ranks) usec for ``reps`` exchanges; nan:
    #                                   the odd rank out of a round


def run(request: SimRequest, net: SimNetwork) -> EbbOutput:
    from t2hx.flowsim import patterns

    opts = request.options
    e = patterns.ebb(net, opts.size, opts.rounds, opts.reps, request.seed)
    return EbbOutput(net.ranks, f"netgauge -s {opts.size} -m mpi -x ebb -r {opts.rounds}",
                     e.size, e.reps, e.round_times.tolist())


def render(out: EbbOutput) -> str:
    """Netgauge's per-round lines, its bucket data and the final average."""
    import numpy as np

    times = np.array(out.round_times)
    lines = [f"# Info:   (0): Netgauge v2.4.6 MPI enabled (P={out.ranks}, threadlevel=0) "
             f"({out.command} )\n"]
    for i, row in enumerate(times):
        v = row[~np.isnan(row)]
        lines.append(f"size: {out.size}, round {i}: num: {len(v)} average: {v.mean():.6f} us "
                     f"({_mibs(out, v.mean())} MiB/s)\n")
    every = times[~np.isnan(times)]
    lines.append("# Info:   (0): ---- bucket data ----\n")
    lines.append(f"size: {out.size} {every.min():.6f} ({_mibs(out, every.min())} MiB/s): "
                 f"{len(every)}\n")
    lines.append(f"size: {out.size} num: {len(every)} average: {every.mean():.6f} "
                 f"({_mibs(out, every.mean())} MiB/s)\n")
    return "".join(lines)


def _mibs(out: EbbOutput, t_us: float) -> str:
    return f"{out.size * out.reps / t_us:.6f}"


def perturb(out: EbbOutput, f: float) -> EbbOutput:
    """Exchange times scale with the factor (the bandwidths follow from them)."""
    return replace(out, round_times=[[t * f for t in row] for row in out.round_times])


def sim_options(inp: dict[str, Any]) -> list[str]:
    return [*option(inp, "size", "--size", A.non_negative_int),
            *option(inp, "rounds", "--rounds", A.positive_int)]


BENCHMARK = Benchmark(
    "ebb", "Netgauge effective bisection bandwidth", "network", "NetgaugeEBB",
    parser="netgauge", metric="bandwidth", unit="MB/s", spack_spec="netgauge",
    markers=(r"size: \d+ num: \d+ average: ",),
    workload=Workload(EbbOutput, run, render, perturb, seeded=True),
    local_binary="netgauge", sim_options=sim_options, aliases=("netgauge",))
