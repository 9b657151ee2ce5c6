"""The proxy apps and x500 codes of seed 000 Table 2 as flow-model runs.

Calibrated codes run their model (t2hx/flowsim/appmodel.py: bytes and compute fitted to our
own runs, the case's input, the conf node's rates; docs/modelling.md#application-models).
A code without a calibration file falls back to its skeleton. A skeleton is one
solver iteration: a compute phase (``compute_s`` seconds on one
TSUBAME2 Westmere node, divided by the compute-scaling factor of seed 003 §5.2 — 2×, 10×,
25×, 50× mean a node that computes that much faster) followed by the communication the
code does per iteration (halo exchanges on a 3-D process grid, transposes = alltoall,
allreduces, broadcasts, HPL panel broadcasts along process rows, BFS frontier exchanges).
Collectives expand into Open MPI 4.1's default algorithms (:mod:`t2hx.flowsim.collectives`).

The skeletons' per-iteration volumes and compute times below are guesses from the inputs of
seed 000 §4.2–4.3, NOT calibrated against runs; only codes without a calibration use them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from t2hx import benchmarks, inputs
from t2hx.errors import WorkloadError
from t2hx.flowsim import appmodel, bulk, collectives
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.fluid import Job, phase_steps
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


# The process grids the real checks use (t2hx/inputs.py): MPI_Dims_create-like 3-D, HPL's P x Q.
grid3d = inputs.grid3
grid2d = inputs.hpl_grid


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


def halo4d(n: int, size: float) -> Phase:
    """MILC's periodic 4-D face exchange on the grid4 layout: every rank with its ±1
    neighbour along each split axis (twice the same rank when the axis has two)."""
    dims = inputs.grid4(n)
    r = np.arange(n)
    coords = np.stack(np.unravel_index(r, dims), axis=1)
    src, dst = [], []
    for axis in (a for a in range(4) if dims[a] > 1):
        for step in (-1, 1):
            c = coords.copy()
            c[:, axis] = (c[:, axis] + step) % dims[axis]
            src.append(r)
            dst.append(np.ravel_multi_index(tuple(c.T), dims))
    return Phase.of(np.concatenate(src), np.concatenate(dst), size, name="halo4d")


def iteration_phases(name: str, n: int, scale: float, reduce_rate: float,
                     inp: dict | None = None, node: dict | None = None) -> list[Phase]:
    """One iteration: the calibrated model's (t2hx/flowsim/appmodel.py) when the code has
    one and the run's input is known, else the skeleton's."""
    model = appmodel.model(skeleton_key(name)) if inp is not None else None
    if model is not None:
        return model_phases(model, n, scale, reduce_rate, inp, node or appmodel.default_node())
    return skeleton_phases(name, n, scale, reduce_rate)


def iterations_of(name: str, inp: dict | None) -> int:
    model = appmodel.model(skeleton_key(name)) if inp is not None else None
    return model.iterations if model is not None else skeleton(name).iterations


def skeleton_key(name: str) -> str:
    hit = benchmarks.find(name)
    return hit[0].skeleton if hit is not None and hit[0].skeleton else name


def scaled(compute_s: float, scale: float) -> float:
    """Compute time on a node ``scale`` times faster; scale 0 turns compute off (seed 003
    §5.1's communication-only runs)."""
    return 0.0 if scale == 0 else compute_s / scale


def model_phases(model: appmodel.AppModel, n: int, scale: float, reduce_rate: float,
                 inp: dict, node: dict) -> list[Phase]:
    its = model.iterations
    out = [Phase.of([], [], 0, scaled(model.compute_seconds(n, inp, node) / its, scale),
                    "compute")]
    if n == 1:
        return out
    for term, total in zip(model.terms, model.term_bytes(n, inp)):
        if total > 0:
            out.extend(term_phases(term.pattern, n, total / its, reduce_rate))
    return out


def term_phases(pattern: str, n: int, per_rank: float, reduce_rate: float) -> list[Phase]:
    """One call of a traffic pattern in which a rank sends ``per_rank`` bytes on average."""
    r = np.arange(n)
    if pattern in ("halo3d", "staged_halo3d"):     # CoMD's edge cells ride in its faces
        return [halo(n, per_rank / appmodel.halo_faces(n))]
    if pattern == "halo4d":
        return [halo4d(n, per_rank / appmodel.halo4d_faces(n))]
    if pattern == "rimp2":
        return rimp2_phases(n, per_rank / appmodel.rimp2_blocks(n))
    if pattern == "pencil_fft3d":
        return pencil_phases(n, per_rank / appmodel.pencil_moves(n))
    if pattern == "hpl_panel":
        return panel_phases(n, per_rank)
    if pattern == "hpl_swap":
        return [Phase.of(r, (r + grid2d(n)[1]) % n, per_rank, name="swap")]
    if pattern == "const":
        return [Phase.of(r, (r + 1) % n, per_rank, name="exchange")]
    coll = appmodel.COLLECTIVE[pattern]
    m = per_rank / appmodel.PATTERNS[pattern](n, 1.0)      # the call's bytes per rank
    if coll == "Alltoall":
        m /= n                                             # IMB's #bytes: per pair
    return collectives.phases(coll, n, max(1, int(m)), reduce_rate)[1]


def rimp2_phases(n: int, tensor: float) -> list[Phase]:
    """NTChem: the redistribution (every rank tensor/n^2 to each other rank), then the
    energy step's floor(n/2) ring shifts of a rank's block (tensor/n)."""
    r = np.arange(n)
    src, dst = np.meshgrid(r, r, indexing="ij")
    out = [Phase.of(src.ravel(), dst.ravel(), tensor / n ** 2, name="redistribute")]
    out += [Phase.of(r, (r - d) % n, tensor / n, name="ring") for d in range(1, n // 2 + 1)]
    return out


def pencil_phases(n: int, block: float) -> list[Phase]:
    """SWFFT's transitions: along axis d, every rank sends block/p_d to the other ranks of
    its grid line (appmodel.PENCIL_TRANSITIONS times per transform pair)."""
    dims = grid3d(n)
    coords = np.stack(np.unravel_index(np.arange(n), dims), axis=1)
    out = []
    for axis, times in enumerate(appmodel.PENCIL_TRANSITIONS):
        p = dims[axis]
        if p < 2:
            continue
        src, dst = [], []
        for shift in range(1, p):
            c = coords.copy()
            c[:, axis] = (c[:, axis] + shift) % p
            src.append(np.arange(n))
            dst.append(np.ravel_multi_index(tuple(c.T), dims))
        phase = Phase.of(np.concatenate(src), np.concatenate(dst), block / p, name="pencil")
        out.extend([phase] * times)
    return out


def panel_phases(n: int, panel: float) -> list[Phase]:
    """HPL: a 1-ring broadcast of a panel along each process row (q - 1 hops); ``panel`` =
    bytes a rank forwards on average, so each hop carries panel * q / (q - 1)."""
    p, q = grid2d(n)
    if q < 2:
        return []
    rows = np.arange(p)[:, None] * q
    size = panel * q / (q - 1)
    out = []
    for hop in range(q - 1):
        src = (rows + hop % q).ravel()
        out.append(Phase.of(src, (src + 1 - rows.ravel()) % q + rows.ravel(), size,
                            name="panel"))
    return out


def skeleton_phases(name: str, n: int, scale: float, reduce_rate: float) -> list[Phase]:
    sk = skeleton(name)
    out = [Phase.of([], [], 0, scaled(sk.compute_s, scale), "compute")]
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
    input: dict | None = None
    calibrated: bool = False


def run_app(net: Network, name: str, scale: float = 1.0, iterations: int | None = None,
            inp: dict | None = None, node: dict | None = None) -> AppResult:
    if scale < 0:
        raise WorkloadError("compute scale must be >= 0", field="compute-scale",
                            fix="use e.g. 1, 2, 10, 25 or 50, or 0 for communication only")
    ph = iteration_phases(name, net.ranks, scale, net.loggp.reduce_rate, inp, node)
    t = bulk.run(net, ph).total
    its = iterations or iterations_of(name, inp)
    calibrated = inp is not None and appmodel.model(skeleton_key(name)) is not None
    return AppResult(name, t * its, t, ph[0].compute, inp, calibrated)


def app_job(net: Network, name: str, ranks: np.ndarray, scale: float = 1.0,
            repeat: int = 1, inp: dict | None = None, node: dict | None = None) -> Job:
    """The app as a fluid-mode job on ``ranks`` (capacity runs, interference)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    phases = iteration_phases(name, len(ranks), scale, net.loggp.reduce_rate, inp, node)
    return Job(name, phase_steps(ranks, phases) * iterations_of(name, inp), repeat)


# --- the text the real codes print (our walltime patch, HPL, HPCG, Graph500) ----------------

def walltime_text(result: AppResult, ranks: int) -> str:
    from t2hx.wire import walltime_line

    return walltime_line(result.seconds) + "\n"


def hpl_text(result: AppResult, ranks: int) -> str:
    """HPL's result line for the run's N (t2hx.inputs.hpl_n: the input's GiB per process)."""
    inp = result.input or {"gib_per_rank": 1.0, "nb": 192}
    n, nb = inputs.hpl_n(inp, ranks), int(inp.get("nb", 192))
    p, q = inputs.hpl_grid(ranks)
    gflops = 2 / 3 * n ** 3 / result.seconds / 1e9
    return ("T/V                N    NB     P     Q               Time                 Gflops\n"
            "--------------------------------------------------------------------------------\n"
            f"WR11C2R4 {n:>11d} {nb:>5d} {p:>5d} {q:>5d} {result.seconds:>18.2f} "
            f"{gflops:>22.4e}\n")


def hpcg_text(result: AppResult, ranks: int) -> str:
    """HPCG's rating: the flops of the run (one timed CG set, t2hx.inputs.hpcg_flops) over
    its simulated time."""
    if result.calibrated:
        flops = inputs.hpcg_flops(result.input) * ranks
    else:
        flops = 192 ** 3 * 27 * 2 * ranks * skeleton(result.name).iterations
    return (f"Final Summary::HPCG result is VALID with a GFLOP/s rating of="
            f"{flops / result.seconds / 1e9:.5g}\n")


def graph500_text(result: AppResult, ranks: int) -> str:
    """Graph500's summary for the run's SCALE (t2hx.inputs.graph500_scale) and the reference
    code's BFS count; TEPS = edges per BFS / (simulated time / NBFS)."""
    inp = result.input or {"gib_per_rank": 1.0, "edgefactor": 16}
    scale, ef = inputs.graph500_scale(inp, ranks), int(inp["edgefactor"])
    nbfs = inputs.GRAPH500_NBFS
    teps = ef * 2.0 ** scale / (result.seconds / nbfs)
    return (f"SCALE:                          {scale}\n"
            f"edgefactor:                     {ef}\nNBFS:                           {nbfs}\n"
            f"num_mpi_processes:              {ranks}\n"
            f"bfs  harmonic_mean_TEPS:     !  {teps:.5g}\n")
