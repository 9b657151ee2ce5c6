"""Communication skeletons of the proxy apps and x500 codes of seed 000 Table 2.

A skeleton is one solver iteration: a compute phase (``compute_s`` seconds on one
TSUBAME2 Westmere node, divided by the compute-scaling factor of seed 003 §5.2 — 2×, 10×,
25×, 50× mean a node that computes that much faster) followed by the communication the
code does per iteration (halo exchanges on a 3-D process grid, transposes = alltoall,
allreduces, broadcasts, HPL panel broadcasts along process rows, BFS frontier exchanges).
Collectives expand into Open MPI 4.1's default algorithms (:mod:`t2hx.flowsim.collectives`).

The per-iteration volumes and compute times below are *skeleton defaults* derived from the
inputs of seed 000 §4.2–4.3 (problem size per process, message sizes they imply); they are
not calibrated against runs, so absolute times are indicative; the comparisons between
fabrics, routings and placements are what the skeletons are for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from t2hx import benchmarks
from t2hx.errors import WorkloadError
from t2hx.flowsim import bulk, collectives
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.fluid import Comm, Compute, Job
from t2hx.flowsim.network import Network


@dataclass(frozen=True)
class Skeleton:
    compute_s: float              # per iteration on the reference node
    iterations: int
    comm: tuple                   # (kind, bytes) steps per iteration


K, M = 1024, 1024 * 1024
# Keyed by the registry's ``skeleton`` field (t2hx/benchmarks.py), which is the study key.
SKELETONS: dict[str, Skeleton] = {
    "amg": Skeleton(0.020, 50, (("halo", 64 * K), ("allreduce", 8), ("allreduce", 8))),
    "comd": Skeleton(0.050, 100, (("halo", 512 * K), ("allreduce", 16))),
    "minife": Skeleton(0.010, 200, (("halo", 80 * K), ("allreduce", 8), ("allreduce", 8))),
    "swfft": Skeleton(0.100, 16, (("alltoall_total", 256 * M), ("alltoall_total", 256 * M))),
    "ffvc": Skeleton(0.040, 100, (("halo", 128 * K), ("allreduce", 8))),
    "mvmc": Skeleton(0.200, 20, (("allreduce", 4 * M), ("bcast", 64 * K))),
    "ntchem": Skeleton(0.300, 20, (("allreduce", 16 * M), ("bcast", 1 * M))),
    "milc": Skeleton(0.030, 200, (("halo", 96 * K), ("halo", 96 * K), ("allreduce", 8))),
    "qball": Skeleton(0.500, 10, (("alltoall_total", 512 * M), ("allreduce", 8 * M),
                                  ("bcast", 1 * M))),
    "hpl": Skeleton(0.050, 100, (("panel", 8 * M), ("swap", 1 * M))),
    "hpcg": Skeleton(0.080, 50, (("halo", 144 * K), ("allreduce", 8), ("allreduce", 8))),
    "graph500": Skeleton(0.040, 16 * 8, (("alltoall_total", 64 * M), ("allreduce", 8))),
}
APPS = tuple(SKELETONS)


def skeleton(name: str) -> Skeleton:
    """The skeleton of a benchmark name or alias (``qb@ll`` → qball), via the registry."""
    hit = benchmarks.find(name)
    if hit is None or hit[0].skeleton not in SKELETONS:
        raise WorkloadError(f"unknown application '{name}'", field="benchmark",
                            fix=f"use one of: {', '.join(APPS)}")
    return SKELETONS[hit[0].skeleton]


def grid3d(n: int) -> tuple[int, int, int]:
    """The most cubic factorisation of n (like MPI_Dims_create)."""
    best = (n, 1, 1)
    for a in range(1, n + 1):
        if n % a:
            continue
        for b in range(1, n // a + 1):
            if (n // a) % b:
                continue
            c = n // a // b
            dims = tuple(sorted((a, b, c), reverse=True))
            if max(dims) - min(dims) < max(best) - min(best):
                best = dims
    return best


def grid2d(n: int) -> tuple[int, int]:
    p = int(np.sqrt(n))
    while n % p:
        p -= 1
    return p, n // p


def halo(n: int, size: int) -> Phase:
    """Non-periodic 3-D face exchange: every rank with each existing ±x, ±y, ±z neighbour."""
    dims = grid3d(n)
    r = np.arange(n)
    coords = np.stack(np.unravel_index(r, dims), axis=1)
    src, dst = [], []
    for axis in range(3):
        for step in (-1, 1):
            c = coords.copy()
            c[:, axis] += step
            ok = (c[:, axis] >= 0) & (c[:, axis] < dims[axis])
            src.append(r[ok])
            dst.append(np.ravel_multi_index(tuple(c[ok].T), dims))
    return Phase.of(np.concatenate(src), np.concatenate(dst), size, name="halo")


def iteration_phases(name: str, n: int, scale: float, reduce_rate: float) -> list[Phase]:
    sk = skeleton(name)
    out = [Phase.of([], [], 0, sk.compute_s / scale, "compute")]
    for kind, size in sk.comm:
        if n == 1:
            break
        if kind == "halo":
            out.append(halo(n, size))
        elif kind == "alltoall_total":   # a transpose of ``size`` bytes spread over all ranks
            m = max(1, size // (n * n))
            out.extend(collectives.phases("Alltoall", n, m, reduce_rate)[1])
        elif kind == "panel":            # HPL: 1-ring broadcast along each process row
            p, q = grid2d(n)
            for hop in range(q - 1):
                rows = np.arange(p)[:, None] * q
                src = rows + (hop % q)
                out.append(Phase.of(src.ravel(), (src.ravel() + 1) % q + rows.ravel(),
                                    size // max(p, 1), name="panel"))
        elif kind == "swap":             # HPL: row swaps along process columns
            p, q = grid2d(n)
            r = np.arange(n)
            out.append(Phase.of(r, (r + q) % n, size // max(q, 1), name="swap"))
        else:
            coll = {"allreduce": "Allreduce", "bcast": "Bcast"}[kind]
            out.extend(collectives.phases(coll, n, size, reduce_rate)[1])
    return out


@dataclass
class AppResult:
    name: str
    seconds: float            # solver walltime
    iteration_s: float
    compute_s: float


def run_app(net: Network, name: str, scale: float = 1.0, iterations: int | None = None
            ) -> AppResult:
    if scale <= 0:
        raise WorkloadError("compute scale must be > 0", field="compute-scale",
                            fix="use e.g. 1, 2, 10, 25 or 50")
    sk = skeleton(name)
    ph = iteration_phases(name, net.ranks, scale, net.loggp.reduce_rate)
    t = bulk.run(net, ph).total
    its = iterations or sk.iterations
    return AppResult(name, t * its, t, sk.compute_s / scale)


def app_job(net: Network, name: str, ranks: np.ndarray, scale: float = 1.0,
            repeat: int = 1) -> Job:
    """The skeleton as a fluid-mode job on ``ranks`` (capacity runs, interference)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    phases = iteration_phases(name, len(ranks), scale, net.loggp.reduce_rate)
    return Job(name, _steps(ranks, phases) * skeleton(name).iterations, repeat)


def _steps(ranks: np.ndarray, phases: list[Phase]) -> list:
    """Bulk phases on local ranks 0..n-1 as fluid steps on the job's global ``ranks``."""
    steps: list = []
    for ph in phases:
        if ph.src.size:
            steps.append(Comm(ranks[ph.src], ranks[ph.dst], ph.size))
        if ph.compute > 0:
            steps.append(Compute(ph.compute))
    return steps


# --- the text the real codes print (our walltime patch, HPL, HPCG, Graph500) ----------------

def walltime_text(result: AppResult, ranks: int) -> str:
    from t2hx.post.records import WALLTIME_FORMAT

    return WALLTIME_FORMAT.format(seconds=result.seconds) + "\n"


def hpl_text(result: AppResult, ranks: int) -> str:
    n = int(np.sqrt(ranks * (1 << 30) / 8))       # ≈1 GiB of A per process
    p, q = grid2d(ranks)
    gflops = 2 / 3 * n ** 3 / result.seconds / 1e9
    return ("T/V                N    NB     P     Q               Time                 Gflops\n"
            "--------------------------------------------------------------------------------\n"
            f"WR11C2R4 {n:>11d} {192:>5d} {p:>5d} {q:>5d} {result.seconds:>18.2f} "
            f"{gflops:>22.4e}\n")


def hpcg_text(result: AppResult, ranks: int) -> str:
    flops = 192 ** 3 * 27 * 2 * ranks * skeleton(result.name).iterations
    return (f"Final Summary::HPCG result is VALID with a GFLOP/s rating of="
            f"{flops / result.seconds / 1e9:.5g}\n")


def graph500_text(result: AppResult, ranks: int) -> str:
    edges = 16 * (1 << 26) * ranks / 8
    teps = edges / (result.seconds / 16)
    return (f"SCALE:                          {26 + int(np.log2(max(ranks, 1)))}\n"
            f"edgefactor:                     16\nNBFS:                           16\n"
            f"num_mpi_processes:              {ranks}\n"
            f"bfs  harmonic_mean_TEPS:     !  {teps:.5g}\n")
