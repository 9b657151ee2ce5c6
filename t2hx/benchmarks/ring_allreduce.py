"""Baidu DeepBench ring allreduce, CPU-only (seed 000 §4.1): ``allreduce-test cpu`` (our
patch of baidu-allreduce) runs its built-in sizes, 0 to 536,870,912 floats, and prints the
mean seconds per allreduce of each; the metric is t_avg [s] of the largest."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.errors import WorkloadError
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim.models import SimNetwork


@dataclass(frozen=True)
class RingRow:
    elements: int             # floats reduced
    seconds: float            # per iteration


@dataclass(frozen=True)
class RingOutput:
    rows: list[RingRow]


def elements(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise WorkloadError(f"not a list of integers: {text!r}", field="elements",
                            fix="write e.g. 0,1024,1048576") from None


def run(request: SimRequest, net: SimNetwork) -> RingOutput:
    from t2hx.flowsim import patterns

    return RingOutput([RingRow(e, patterns.ring_allreduce(net, e))
                       for e in elements(request.options.elements)])


def render(out: RingOutput) -> str:
    """test/test.cpp ``TestCollectivesCPU``: rank 0 streams one line per size, the mean
    seconds in std::cout's default format (six significant digits, C's %g)."""
    return "".join(f"Verified allreduce for size {r.elements} ({r.seconds:g} per iteration)\n"
                   for r in out.rows)


def perturb(out: RingOutput, f: float) -> RingOutput:
    return replace(out, rows=[replace(r, seconds=r.seconds * f) for r in out.rows])


BENCHMARK = Benchmark(
    "ring-allreduce", "Baidu DeepBench ring allreduce (CPU)", "network", "RingAllreduce",
    parser="baidu", metric="t_avg", unit="s",
    spack_spec="baidu-allreduce",      # spack-env/repo overlay (CPU-only patch)
    markers=(r"Verified allreduce for size",),
    workload=Workload(RingOutput, run, render, perturb), sized=True,
    local_binary="allreduce-test",
    aliases=("baidu", "allreduce-ring", "ring_allreduce", "baidu-allreduce"))
