"""HPCG 3.1 (seed 000 §4.3): GFLOP/s of one timed CG set on an ``nx x ny x nz`` grid per
rank."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from t2hx.benchmarks.base import Benchmark
from t2hx.benchmarks.proxyapp import K, AppSpec, Skeleton, app_workload, face

if TYPE_CHECKING:
    from t2hx.flowsim.apps import AppResult

# HPCG 3.1's own flop count per grid point and CG iteration, from our one-rank run's report
# (HPCG-Benchmark_3.1 *.txt: GFLOP/s Raw Total x Benchmark Time Total / 16^3 rows / 50),
# and the iterations of one timed CG set.
HPCG_FLOPS_PER_ROW = 327.0
HPCG_SET = 50
#: Untimed CG sets of a whole run before its timed ones: the reference CG timing and the
#: optimised CG set-up that validates against it (HPCG 3.1 main.cpp).
UNTIMED_SETS = 2
SKELETON = Skeleton(0.080, 50, (("halo", 144 * K), ("allreduce", 8), ("allreduce", 8)))


def hpcg_flops(inp: dict) -> float:
    """Flops of one timed CG set on one rank's nx x ny x nz grid."""
    return HPCG_FLOPS_PER_ROW * inp["nx"] * inp["ny"] * inp["nz"] * HPCG_SET


def rating_seconds(run: dict, inp: dict) -> float:
    """A calibration run's timed seconds from its GFLOP/s rating."""
    return hpcg_flops(inp) / (float(run["value"]) * 1e9)


def run_sets(inp: dict, set_s: float) -> int:
    """CG sets of a whole run: HPCG 3.1 times ``int(seconds / one set) + 1`` sets (main.cpp,
    ``numberOfCgSets``) after its untimed ones. The rating is per set, so only a run's length
    (capacity) depends on it."""
    return UNTIMED_SETS + int(float(inp.get("seconds", 0)) / set_s) + 1 if set_s > 0 else 1


@dataclass(frozen=True)
class HpcgOutput:
    gflops: float


def output(result: AppResult, ranks: int) -> HpcgOutput:
    """The rating: the flops of the run (one timed CG set) over its simulated time."""
    if result.calibrated:
        assert result.input is not None, "run_app calibrates only a run whose input it has"
        flops = hpcg_flops(result.input) * ranks
    else:
        flops = 192 ** 3 * 27 * 2 * ranks * SKELETON.iterations
    return HpcgOutput(flops / result.seconds / 1e9)


def render(out: HpcgOutput) -> str:
    return ("Final Summary::HPCG result is VALID with a GFLOP/s rating of="
            f"{out.gflops:.5g}\n")


def perturb(out: HpcgOutput, f: float) -> HpcgOutput:
    return HpcgOutput(out.gflops / f)


APP = AppSpec("hpcg", SKELETON,
              # The capability rating is one timed CG set's (our calibration runs, 1 s asked,
              # did one); a capacity run lasts every set of the input's seconds (run_sets).
              work_rule=lambda i, n: float(i["nx"] * i["ny"] * i["nz"]),
              measure_rules=(("face", lambda i, n: face(i["nx"] * i["ny"] * i["nz"])),),
              metric_rule=rating_seconds, sets_rule=run_sets)

BENCHMARK = Benchmark(
    "hpcg", "HPCG", "x500", "HPCG", parser="hpcg", metric="gflops", unit="GFLOP/s",
    spack_spec="hpcg", markers=(r"HPCG result is VALID",),
    workload=app_workload(APP, HpcgOutput, output, render, perturb),
    output_file="HPCG-Benchmark*.txt", local_binary="xhpcg", app=APP)
