"""The proxy apps and x500 codes of seed 000 Table 2 as flow-model runs.

An app comes from its benchmark module (t2hx/benchmarks/, the proxy-app pattern of
t2hx/benchmarks/proxyapp.py): its key, its skeleton and its input rules (:class:`App`).
Calibrated codes run their model (t2hx/flowsim/appmodel.py: bytes and compute fitted to our
own runs, the case's input, the conf node's rates; docs/modelling.md#application-models).
A code without a calibration file falls back to its skeleton. A skeleton is one
solver iteration: a compute phase (``compute_s`` seconds on one
TSUBAME2 Westmere node, divided by the compute-scaling factor of seed 003 §5.2 — 2×, 10×,
25×, 50× mean a node that computes that much faster) followed by the communication the
code does per iteration (halo exchanges on a 3-D process grid, transposes = alltoall,
allreduces, broadcasts, HPL panel broadcasts along process rows, BFS frontier exchanges).
Collectives expand into the algorithms Open MPI's fixed decision rules pick, the rule set the
system conf names (``model.collectives``, :mod:`t2hx.flowsim.collectives`; default 4.1).

The skeletons' per-iteration volumes and compute times are guesses from the inputs of
seed 000 §4.2–4.3, NOT calibrated against runs; only codes without a calibration use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Protocol

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import appmodel, collectives
from t2hx.flowsim.collectives import DEFAULT_RULES
from t2hx.flowsim.appmodel import ModelRules
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.models import SimNetwork
from t2hx.flowsim.fluid import Compute, Job, phase_steps
from t2hx.grids import grid3, grid4, hpl_grid, npb_lu_grid, npb_mg_grid


# Read-only members (properties): the benchmark modules' skeletons and apps are frozen dataclasses.
class Skeleton(Protocol):
    @property
    def compute_s(self) -> float: ...     # per iteration on the reference node

    @property
    def iterations(self) -> int: ...

    @property
    def comm(self) -> tuple: ...          # (kind, bytes) steps per iteration


class App(ModelRules, Protocol):
    """A code the model runs: its calibrated model's input rules and its skeleton."""
    @property
    def skeleton(self) -> Skeleton: ...

    @property
    def sets_rule(self) -> Callable[[dict, float], int] | None: ...  # repeats of a run



def face_exchange(dims: tuple[int, ...], sizes: list[float], periodic: bool,
                  name: str) -> Phase:
    """Every rank of the process grid ``dims`` with its ±1 neighbour along each axis, sending
    ``sizes[axis]`` bytes. Periodic: along every split axis (twice the same rank when the
    axis has two); else only to the neighbours that exist."""
    n = int(np.prod(dims))
    r = np.arange(n)
    coords = np.stack(np.unravel_index(r, dims), axis=1)
    src, dst, size = [], [], []
    for axis in (a for a in range(len(dims)) if dims[a] > 1):
        for step in (-1, 1):
            c = coords.copy()
            c[:, axis] += step
            if periodic:
                c[:, axis] %= dims[axis]
            ok = (c[:, axis] >= 0) & (c[:, axis] < dims[axis])
            src.append(r[ok])
            dst.append(np.ravel_multi_index(tuple(c[ok].T), dims))
            size.append(np.full(int(ok.sum()), sizes[axis]))
    if not src:
        return Phase.of([], [], 0, name=name)
    return Phase.of(np.concatenate(src), np.concatenate(dst), np.concatenate(size), name=name)


def halo(n: int, size: float) -> Phase:
    """Non-periodic 3-D face exchange: every rank with each existing ±x, ±y, ±z neighbour."""
    return face_exchange(grid3(n), [size] * 3, periodic=False, name="halo")


def halo4d(n: int, size: float) -> Phase:
    """MILC's periodic 4-D face exchange on the grid4 layout: every rank with its ±1
    neighbour along each split axis (twice the same rank when the axis has two)."""
    return face_exchange(grid4(n), [size] * 4, periodic=True, name="halo4d")


def npb_faces(pattern: str, n: int, per_rank: float) -> Phase:
    """NPB MG's periodic 3-D or LU's non-periodic 2-D face exchange, each axis' faces
    sized in proportion to their points (t2hx/flowsim/appmodel.py) so that a rank sends
    ``per_rank`` bytes on average."""
    if pattern == "npb_mg_halo":
        dims: tuple[int, ...] = npb_mg_grid(n)
        points, periodic = appmodel.mg_face_points(n, 1.0), True
    else:
        dims, points, periodic = npb_lu_grid(n), appmodel.lu_face_points(n, 1.0), False
    unit = appmodel.PATTERNS[pattern](n, 1.0)
    return face_exchange(dims, [per_rank * p / unit for p in points], periodic, pattern)


def iteration_phases(app: App, n: int, scale: float, reduce_rate: float,
                     inp: dict | None = None, node: dict | None = None,
                     rules: str = DEFAULT_RULES) -> list[Phase]:
    """One iteration: the calibrated model's (t2hx/flowsim/appmodel.py) when the code has
    one and the run's input is known, else the skeleton's; collectives as ``rules`` pick
    them (the conf's ``model.collectives``)."""
    if inp is not None:
        model = appmodel.model(app)
        if model is not None:
            return model_phases(model, n, scale, reduce_rate, inp,
                                node or appmodel.default_node(), rules)
    return skeleton_phases(app.skeleton, n, scale, reduce_rate, rules)


def iterations_of(app: App, inp: dict | None) -> int:
    model = appmodel.model(app) if inp is not None else None
    return model.iterations if model is not None else app.skeleton.iterations


def scaled(compute_s: float, scale: float) -> float:
    """Compute time on a node ``scale`` times faster; scale 0 turns compute off (seed 003
    §5.1's communication-only runs)."""
    return 0.0 if scale == 0 else compute_s / scale


def model_phases(model: appmodel.AppModel, n: int, scale: float, reduce_rate: float,
                 inp: dict, node: dict, rules: str = DEFAULT_RULES) -> list[Phase]:
    its = model.iterations
    out = [Phase.of([], [], 0, scaled(model.compute_seconds(n, inp, node) / its, scale),
                    "compute")]
    if n == 1:
        return out
    for term, total in zip(model.terms, model.term_bytes(n, inp)):
        if total > 0:
            out.extend(term_phases(term.pattern, n, total / its, reduce_rate, rules,
                                   model.rules.measure(term.measure, inp, n)))
    return out


def term_phases(pattern: str, n: int, per_rank: float, reduce_rate: float,
                rules: str = DEFAULT_RULES, measure: float = 1.0) -> list[Phase]:
    """One call of a traffic pattern in which a rank sends ``per_rank`` bytes on average
    (``measure``: the input's measure the pattern's unit was taken at)."""
    r = np.arange(n)
    if pattern == "hpcg_halo":
        src, dst, span = appmodel.hpcg_neighbours(n)
        per_point = per_rank / appmodel.hpcg_halo(n, measure)
        return [Phase.of(src, dst, appmodel.hpcg_points(span, measure) * per_point,
                         name="halo")]
    if pattern in ("halo3d", "staged_halo3d"):     # CoMD's edge cells ride in its faces
        return [halo(n, per_rank / appmodel.halo_faces(n))]
    if pattern == "halo4d":
        return [halo4d(n, per_rank / appmodel.halo4d_faces(n))]
    if pattern in ("npb_mg_halo", "npb_lu_halo"):
        return [npb_faces(pattern, n, per_rank)]
    if pattern == "rimp2":
        return rimp2_phases(n, per_rank / appmodel.rimp2_blocks(n))
    if pattern == "pencil_fft3d":
        return pencil_phases(n, per_rank / appmodel.pencil_moves(n))
    if pattern == "hpl_panel":
        return panel_phases(n, per_rank)
    if pattern == "hpl_swap":
        return swap_phases(n, per_rank)
    if pattern == "const":
        return [Phase.of(r, (r + 1) % n, per_rank, name="exchange")]
    coll = appmodel.COLLECTIVE[pattern]
    m = per_rank / appmodel.PATTERNS[pattern](n, 1.0)      # the call's bytes per rank
    if coll == "Alltoall":
        m /= n                                             # IMB's #bytes: per pair
    return collectives.phases(coll, n, max(1, int(m)), reduce_rate, rules=rules)[1]


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
    dims = grid3(n)
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
    """HPL's panel broadcasts along each process row, as the study's HPL.dat runs them
    (BCAST 1 = 1rM, ``HPL_bcast_1rinM``): the root sends to the next column first (the next
    panel's owner, for the look-ahead), then to the one after, which passes it on around the
    ring. Panels rotate over the columns and, with look-ahead, successive broadcasts overlap,
    so every root's hop k shares one phase. ``panel`` = bytes a rank forwards on average."""
    p, q = hpl_grid(n)
    if q < 2:
        return []
    rows = (np.arange(p)[:, None] * q)
    cols = np.arange(q)[None, :]
    hops = [(0, 1)] + ([(0, 2)] if q > 2 else []) + [(j, j + 1) for j in range(2, q - 1)]
    return [Phase.of((rows + (cols + a) % q).ravel(), (rows + (cols + b) % q).ravel(),
                     panel / (q - 1), name="panel") for a, b in hops]


def swap_phases(n: int, per_rank: float) -> list[Phase]:
    """HPL's row swaps and U broadcast in a process column (SWAP 2, "mix": the long
    spread-and-roll for the study's panel widths, ``HPL_pdlaswp01T``): with the root row
    rotating, every rank of a column exchanges with every other one, in equal parts."""
    p, q = hpl_grid(n)
    if p < 2:
        return []
    r = np.arange(n)
    src = np.repeat(r, p - 1)
    step = np.tile(np.arange(1, p), n)
    dst = (r[src] // q + step) % p * q + r[src] % q
    return [Phase.of(src, dst, per_rank / (p - 1), name="swap")]


def skeleton_phases(sk: Skeleton, n: int, scale: float, reduce_rate: float,
                    rules: str = DEFAULT_RULES) -> list[Phase]:
    out = [Phase.of([], [], 0, scaled(sk.compute_s, scale), "compute")]
    for kind, size in sk.comm:
        if n == 1:
            break
        if kind == "halo":
            out.append(halo(n, size))
        elif kind == "alltoall_total":   # a transpose of ``size`` bytes spread over all ranks
            m = max(1, size // (n * n))
            out.extend(collectives.phases("Alltoall", n, m, reduce_rate, rules=rules)[1])
        elif kind == "panel":            # HPL: 1-ring broadcast along each process row
            p, q = hpl_grid(n)
            for hop in range(q - 1):
                rows = np.arange(p)[:, None] * q
                src = rows + (hop % q)
                out.append(Phase.of(src.ravel(), (src.ravel() + 1) % q + rows.ravel(),
                                    size // max(p, 1), name="panel"))
        elif kind == "swap":             # HPL: row swaps along process columns
            p, q = hpl_grid(n)
            r = np.arange(n)
            out.append(Phase.of(r, (r + q) % n, size // max(q, 1), name="swap"))
        else:
            coll = {"allreduce": "Allreduce", "bcast": "Bcast"}[kind]
            out.extend(collectives.phases(coll, n, size, reduce_rate, rules=rules)[1])
    return out


@dataclass
class AppResult:
    key: str
    seconds: float            # solver walltime
    iteration_s: float
    compute_s: float
    input: dict | None = None
    calibrated: bool = False


def run_app(net: SimNetwork, app: App, scale: float = 1.0, iterations: int | None = None,
            inp: dict | None = None, node: dict | None = None) -> AppResult:
    if scale < 0:
        raise WorkloadError("compute scale must be >= 0", field="compute-scale",
                            fix="use e.g. 1, 2, 10, 25 or 50, or 0 for communication only")
    per_node = net.ranks // len(set(net.hosts))
    if per_node > 1:            # the node's ranks share its rates
        node = appmodel.rank_share(node or appmodel.default_node(), per_node)
    ph = iteration_phases(app, net.ranks, scale, net.loggp.reduce_rate, inp, node,
                          net.loggp.collectives)
    t = net.run(ph).total
    its = iterations or iterations_of(app, inp)
    calibrated = inp is not None and appmodel.model(app) is not None
    return AppResult(app.key, t * its, t, ph[0].compute, inp, calibrated)


def app_job(net: SimNetwork, app: App, ranks: np.ndarray, scale: float = 1.0,
            repeat: int = 1, inp: dict | None = None, node: dict | None = None) -> Job:
    """The app as a fluid-mode job on ``ranks`` (capacity runs, interference)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    phases = iteration_phases(app, len(ranks), scale, net.loggp.reduce_rate, inp, node,
                              net.loggp.collectives)
    steps = phase_steps(ranks, phases) * iterations_of(app, inp)
    if app.sets_rule is not None and inp is not None:   # a whole run, not one timed set
        steps = steps * app.sets_rule(inp, compute_seconds(steps))
    return Job(app.key, steps, repeat)


def compute_seconds(steps: list) -> float:
    """The compute part of fluid steps (what a run takes with a free network)."""
    return sum(s.seconds for s in steps if isinstance(s, Compute))
