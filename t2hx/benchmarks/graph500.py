"""Graph500 BFS (seed 000 §4.3): harmonic-mean TEPS of the reference code's BFS runs on a
graph of about ``gib_per_rank`` GiB per rank."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from t2hx.benchmarks.base import Benchmark
from t2hx.benchmarks.proxyapp import M, AppSpec, Skeleton, app_workload

if TYPE_CHECKING:
    from t2hx.flowsim.apps import AppResult

GRAPH500_NBFS = 64      # the reference code's BFS count (graph500 3.0 NBFS_max)
DEFAULT_INPUT = {"gib_per_rank": 1.0, "edgefactor": 16}


def graph500_scale(inp: dict, ranks: int) -> int:
    """SCALE: 2^SCALE vertices x edgefactor edges x 16 B per edge ~ gib_per_rank per rank."""
    edges = float(inp["gib_per_rank"]) * 2**30 * ranks / 16
    return max(1, int(math.log2(edges / inp["edgefactor"])))


def teps_seconds(run: dict, inp: dict) -> float:
    """A calibration run's timed seconds (all its BFS runs) from its TEPS."""
    edges = inp["edgefactor"] * 2.0 ** graph500_scale(inp, int(run["ranks"]))
    return GRAPH500_NBFS * edges / float(run["value"])


@dataclass(frozen=True)
class Graph500Output:
    scale: int
    edgefactor: int
    nbfs: int
    ranks: int
    teps: float


def output(result: AppResult, ranks: int) -> Graph500Output:
    """The summary for the run's SCALE and the reference code's BFS count; TEPS = edges per
    BFS / (simulated time / NBFS)."""
    inp = result.input or DEFAULT_INPUT
    scale, ef = graph500_scale(inp, ranks), int(inp["edgefactor"])
    teps = ef * 2.0 ** scale / (result.seconds / GRAPH500_NBFS)
    return Graph500Output(scale, ef, GRAPH500_NBFS, ranks, teps)


def render(out: Graph500Output) -> str:
    return (f"SCALE:                          {out.scale}\n"
            f"edgefactor:                     {out.edgefactor}\n"
            f"NBFS:                           {out.nbfs}\n"
            f"num_mpi_processes:              {out.ranks}\n"
            f"bfs  harmonic_mean_TEPS:     !  {out.teps:.5g}\n")


def perturb(out: Graph500Output, f: float) -> Graph500Output:
    return replace(out, teps=out.teps / f)


def _edges_per_rank(inp: dict, ranks: int) -> float:
    return inp["edgefactor"] * 2.0 ** graph500_scale(inp, ranks) / ranks


APP = AppSpec("graph500", Skeleton(0.040, 16 * 8, (("alltoall_total", 64 * M),
                                                   ("allreduce", 8))),
              work_rule=_edges_per_rank, measure_rules=(("data", _edges_per_rank),),
              metric_rule=teps_seconds)

BENCHMARK = Benchmark(
    "graph500", "Graph500 BFS", "x500", "Graph500", parser="graph500",
    metric="bfs_harmonic_mean_teps", unit="TEPS", spack_spec="graph500",
    markers=(r"harmonic_mean_TEPS",),
    workload=app_workload(APP, Graph500Output, output, render, perturb),
    local_binary="graph500_reference_bfs", app=APP, aliases=("graph500-bfs",))
