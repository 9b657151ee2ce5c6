"""Application models calibrated from our own runs (docs/modelling.md#application-models).

A code's run is ``iterations`` equal steps of compute, then its point-to-point pattern, then
its collectives. What the steps carry comes from two files:

* ``conf/appmodels.yaml`` (data): per code, which node rate bounds its compute, and per
  traffic kind (p2p, coll) a *pattern* (how per-rank bytes grow with the rank count n: halo
  faces of the 3-D process grid, an all-to-all's (n-1)/n, an Open MPI collective's bytes
  sent per rank) and a *measure* of the input (the code's benchmark module declares its
  measures: face area, data per rank, ...) that scales the bytes with the problem size;
* ``conf/calibration/<code>.json`` (measured by ``t2hx calibrate``): the per-rank bytes at
  several rank counts and the one-rank time on this machine.

Per-rank bytes of a kind = k x pattern(n, measure(input, n)); k is the least-squares fit over
the calibrated rank counts >= 2. Compute = the calibrated one-rank time x work(study input) /
work(calibration input) x this machine's rate / the conf node's rate for the code's bound
(``node:`` of the conf system, ``conf/calibration/machine.json`` for this machine).
Nothing is fitted to a published result. A code's work follows the study's ``scaling`` rule
(seed 000 Table 2) through its input rules: the share of the input a rank holds, which weak
scaling keeps and strong scaling divides, times the code's cost per unit of it
(docs/modelling.md#work-laws, tests/test_app_work_laws.py).

The model never names a code's input keys itself: what an input means (its work, its
measures, the seconds of a calibration run's metric) comes with the code as
:class:`ModelRules`, which the benchmark modules implement (t2hx/benchmarks/proxyapp.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np
import yaml

from t2hx import ROOT
from t2hx.errors import WorkloadError
from t2hx.grids import grid3, grid4, hpcg_grid, hpl_grid, npb_lu_grid, npb_mg_grid

MODELS_FILE = ROOT / "conf" / "appmodels.yaml"
CALIBRATION_DIR = ROOT / "conf" / "calibration"
MACHINE_FILE = CALIBRATION_DIR / "machine.json"
KINDS = ("p2p", "coll")
# A term may also fit "all" = p2p + coll: for codes whose split moves with n (qb@ll's
# transposes are an MPI_Alltoallv at 2 ranks and point-to-point above).
FIT_KINDS = (*KINDS, "all")


# --- patterns: per-rank bytes of one unit of the measure at n ranks -------------------------

def halo_faces(n: int) -> float:
    """Mean number of face neighbours per rank of the non-periodic grid3(n)."""
    dims = grid3(n)
    return sum(2 * (d - 1) / d for d in dims)


def hpcg_neighbours(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """HPCG 3.1's halo partners (src/SetupHalo.cpp, a 27-point stencil): every rank with each
    existing face, edge and corner neighbour of its hpcg_grid(n) box, non-periodic.
    (source, destination, how many axes the offset spans: 1 face, 2 edge, 3 corner)."""
    npx, npy, npz = hpcg_grid(n)
    r = np.arange(n)
    ip = np.stack([r % npx, r // npx % npy, r // (npx * npy)], axis=1)
    src, dst, span = [], [], []
    for off in np.array(np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1])).T.reshape(-1, 3):
        if not off.any():
            continue
        c = ip + off
        ok = ((c >= 0) & (c < (npx, npy, npz))).all(axis=1)
        src.append(r[ok])
        dst.append(c[ok, 0] + npx * (c[ok, 1] + npy * c[ok, 2]))
        span.append(np.full(int(ok.sum()), int(np.abs(off).sum())))
    return np.concatenate(src), np.concatenate(dst), np.concatenate(span)


def hpcg_points(span: np.ndarray, face: float) -> np.ndarray:
    """Grid points a halo message carries: a face's ``face`` (side²), an edge's side, a
    corner's one point (a cubic local grid, as every HPCG input here)."""
    return np.choose(span - 1, [face, math.sqrt(face), 1.0])


def hpcg_halo(n: int, face: float) -> float:
    """Mean points a rank sends per halo exchange (HPCG's ExchangeHalo)."""
    _, _, span = hpcg_neighbours(n)
    return float(hpcg_points(span, face).sum()) / n


def staged_halo(n: int, cells: float) -> float:
    """Face area (in cells) a rank exchanges when axes are swapped one after the other and
    each later axis carries the halo cells of the earlier ones (edges and corners travel in
    the faces): x: c*c, y: (c+2)*c, z: (c+2)^2, counting axes the grid splits."""
    dims = grid3(n)
    widths = [cells, cells, cells]
    area = 0.0
    for axis in range(3):
        others = [widths[a] for a in range(3) if a != axis]
        if dims[axis] > 1:
            area += others[0] * others[1]
        widths[axis] = cells + 2
    return area


def halo4d_faces(n: int) -> float:
    """Faces a rank sends per MD step on MILC's periodic 4-D layout (t2hx.grids.grid4):
    both faces of every split axis, also when the two neighbours are one rank."""
    return float(sum(2 for g in grid4(n) if g > 1))


def rimp2_blocks(n: int) -> float:
    """Blocks of the MO 3-centre integrals (B_ia^P, 1/n of them per rank) a rank of NTChem's
    RI-MP2 sends, in units of the whole tensor: the energy step visits every pair of ranks
    once by passing blocks half-way round a ring (floor(n/2) sends of 1/n,
    rimp2_rmp2energy_incore_v_mpiomp.F90), after an all-to-all redistribution of each
    rank's 1/n from the auxiliary to the occupied distribution ((n-1)/n of 1/n)."""
    return (n // 2) / n + (n - 1) / n ** 2


# SWFFT's forward transform goes block -> x-pencils -> block -> y -> block -> z, the
# backward transform back (Dfft.hpp, distribution_3_to_2 / 2_to_3): 4 x-, 4 y-, 2 z-
# transitions per repetition. Pencils lie inside the blocks, so a transition along axis d
# keeps 1/p_d of a rank's data and sends the rest to the p_d - 1 ranks of its grid line.
PENCIL_TRANSITIONS = (4, 4, 2)


def pencil_moves(n: int) -> float:
    """Block-sized moves per rank per forward+backward SWFFT transform at n ranks."""
    return sum(t * (p - 1) / p for t, p in zip(PENCIL_TRANSITIONS, grid3(n)))


def hpl_panel(n: int) -> float:
    """HPL's panel broadcast along a process row of Q: a rank forwards (Q-1)/Q of its row's
    panels, which hold 1/P of the matrix."""
    p, q = hpl_grid(n)
    return (q - 1) / q / p


def hpl_swap(n: int) -> float:
    """HPL's row swaps and U broadcast along a process column of P: (P-1)/P of the 1/Q of
    the matrix a column holds."""
    p, q = hpl_grid(n)
    return (p - 1) / p / q


def mg_face_points(n: int, edge: float) -> list[float]:
    """Points of one face of a rank's block, per axis, on NPB MG's periodic grid of
    ``edge``^3 points (0 for an axis its process grid does not split)."""
    dims = npb_mg_grid(n)
    return [edge ** 2 / (dims[(a + 1) % 3] * dims[(a + 2) % 3]) if dims[a] > 1 else 0.0
            for a in range(3)]


def npb_mg_halo(n: int, edge: float) -> float:
    """Face points a rank of NPB MG sends per exchange of the finest level: both faces of
    every split axis (periodic: also when the two neighbours are one rank). The coarser
    levels add a fixed fraction, which the fitted k carries."""
    return 2 * sum(mg_face_points(n, edge))


def lu_face_points(n: int, edge: float) -> list[float]:
    """Points of one x- and one y-face of a rank's column on NPB LU's 2-D grid of an
    ``edge``^3 cube (z is never split)."""
    xdim, ydim = npb_lu_grid(n)
    return [edge / ydim * edge, edge / xdim * edge]


def npb_lu_halo(n: int, edge: float) -> float:
    """Face points a rank of NPB LU sends per sweep: the non-periodic neighbours of the 2-D
    grid (2(d-1)/d on average along an axis split d ways) times the face."""
    dims = npb_lu_grid(n)
    return sum(2 * (d - 1) / d * f for d, f in zip(dims, lu_face_points(n, edge)))


# Collectives by the bytes a rank sends per byte of the call (Open MPI 4.1 tuned: recursive
# doubling below 8 KiB, Rabenseifner = reduce-scatter + allgather above; binomial bcast).
PATTERNS = {
    "halo3d": lambda n, m: halo_faces(n) * m,
    "hpcg_halo": hpcg_halo,
    "staged_halo3d": lambda n, m: staged_halo(n, m),
    "halo4d": lambda n, m: halo4d_faces(n) * m,
    "rimp2": lambda n, m: rimp2_blocks(n) * m,
    "alltoall": lambda n, m: (n - 1) / n * m,
    "pencil_fft3d": lambda n, m: pencil_moves(n) * m,
    "hpl_panel": lambda n, m: hpl_panel(n) * m,
    "hpl_swap": lambda n, m: hpl_swap(n) * m,
    "npb_mg_halo": npb_mg_halo,
    "npb_lu_halo": npb_lu_halo,
    "const": lambda n, m: m,
    "allreduce_small": lambda n, m: math.ceil(math.log2(n)) * m,
    "allreduce_large": lambda n, m: 2 * (n - 1) / n * m,
    "bcast": lambda n, m: (n - 1) / n * m,
}
# The collective each pattern stands for when a run is simulated (t2hx.flowsim.collectives
# then picks Open MPI's algorithm for the call's size).
COLLECTIVE = {"allreduce_small": "Allreduce", "allreduce_large": "Allreduce",
              "bcast": "Bcast", "alltoall": "Alltoall"}


# --- model data --------------------------------------------------------------------------

class ModelRules(Protocol):
    """What a code's input means to its model (its benchmark module says)."""
    @property
    def key(self) -> str: ...

    def measure(self, name: str, inp: dict, ranks: int) -> float:
        """A measure of the input that traffic scales with (conf/appmodels.yaml names it)."""

    def work(self, inp: dict, ranks: int) -> float:
        """Per-rank work of a run; only ratios of one code's work are used."""

    def share(self, inp: dict, ranks: int) -> float:
        """The input one rank holds: what the study's ``scaling`` rule keeps (weak) or
        divides (strong); the work is this share times the code's cost per unit of it."""

    def seconds_of(self, run: dict, inp: dict) -> float:
        """The timed seconds of a calibration run, from its Table 2 metric."""


@dataclass(frozen=True)
class Term:
    kind: str        # p2p | coll
    pattern: str     # PATTERNS key
    measure: str     # a ModelRules.measure name


@dataclass(frozen=True)
class AppModel:
    code: str
    bound: str                     # flops | memory: the node rate that scales its compute
    iterations: int                # steps the run is split into
    terms: tuple[Term, ...]
    calibration: dict              # conf/calibration/<code>.json
    rules: ModelRules              # what the code's inputs mean

    def fit(self, below: int | None = None) -> list[float]:
        """k per term: least squares of a kind's measured per-rank bytes = sum of its terms'
        k x pattern, over the runs with 2 <= n (< ``below`` when given: to predict the
        largest measured count from the others)."""
        k = [0.0] * len(self.terms)
        runs = self.runs(below)
        for kind in FIT_KINDS:
            idx = [i for i, t in enumerate(self.terms) if t.kind == kind]
            if not idx or not runs:
                continue
            a = np.array([[self.unit(self.terms[i], r["ranks"], self.calibration["input"])
                           for i in idx] for r in runs])
            y = np.array([measured_bytes(r, kind) for r in runs])
            sol = np.linalg.lstsq(a, y, rcond=None)[0]
            for i, v in zip(idx, sol):
                k[i] = float(v)
        return k

    def runs(self, below: int | None = None) -> list[dict]:
        return [r for r in self.calibration["runs"]
                if r["ranks"] >= 2 and (below is None or r["ranks"] < below)]

    def unit(self, term: Term, n: int, inp: dict) -> float:
        return PATTERNS[term.pattern](n, self.rules.measure(term.measure, inp, n))

    def term_bytes(self, n: int, inp: dict, k: list[float] | None = None) -> list[float]:
        """Per-rank bytes of each term over one run of ``inp`` at ``n`` ranks."""
        k = self.fit() if k is None else k
        return [kt * self.unit(t, n, inp) if n > 1 else 0.0 for kt, t in zip(k, self.terms)]

    def bytes_per_rank(self, n: int, inp: dict, k: list[float] | None = None
                       ) -> dict[str, float]:
        """Per-rank bytes of each kind over one run of ``inp`` at ``n`` ranks."""
        out = {kind: 0.0 for kind in FIT_KINDS}
        for t, b in zip(self.terms, self.term_bytes(n, inp, k)):
            out[t.kind] += b
        return out

    def one_rank_run(self) -> dict:
        run = next((r for r in self.calibration["runs"] if r["ranks"] == 1), None)
        if run is None:
            raise WorkloadError(f"{self.code}: calibration has no 1-rank run",
                                field="runs", fix=f"t2hx calibrate {self.code} --ranks 1,2,4,8")
        return run

    def one_rank_seconds(self) -> float:
        """The calibrated one-rank run's measured time on this machine."""
        return self.rules.seconds_of(self.one_rank_run(), self.calibration["input"])

    def compute_seconds(self, n: int, inp: dict, node: dict) -> float:
        """Per-rank compute of one run on the conf's node (see module doc)."""
        here = machine()[self.bound]
        there = float(node[NODE_RATE[self.bound]])
        ratio = self.rules.work(inp, n) / self.rules.work(self.calibration["input"], 1)
        return self.one_rank_seconds() * ratio * here / there


NODE_RATE = {"flops": "peak_gflops", "memory": "mem_gbs"}


def _mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else 0.0


def measured_bytes(run: dict, kind: str) -> float:
    """Mean per-rank bytes of a calibration run, of one kind or "all"."""
    kinds = KINDS if kind == "all" else (kind,)
    return sum(_mean(run["traffic"]["bytes"][k]) for k in kinds)


@cache
def _model_data() -> dict[str, tuple[str, int, tuple[Term, ...], dict]]:
    """(bound, iterations, terms, calibration) of every calibrated code in file order."""
    data = yaml.safe_load(MODELS_FILE.read_text())
    out = {}
    for code, spec in data["models"].items():
        cal_file = CALIBRATION_DIR / f"{code}.json"
        if not cal_file.is_file():
            continue
        terms = tuple(Term(kind, t["pattern"], t["measure"])
                      for kind, ts in spec["traffic"].items()
                      for t in (ts if isinstance(ts, list) else [ts]))
        out[code] = (spec["bound"], int(spec["iterations"]), terms,
                     json.loads(cal_file.read_text()))
    return out


def codes() -> list[str]:
    """The codes with a model in conf/appmodels.yaml and a calibration file."""
    return list(_model_data())


def model(rules: ModelRules) -> AppModel | None:
    """The calibrated model of a code, or None (no calibration: the skeleton stands)."""
    data = _model_data().get(rules.key)
    return None if data is None else AppModel(rules.key, *data, rules)


@cache
def machine() -> dict[str, float]:
    """This machine's measured rates: the best flop rate a one-rank run reached here (the
    matmul probe of ``t2hx calibrate --machine`` or HPL's own one-rank Gflop/s, whichever is
    higher: no flop-bound code may run faster here than the rate we scale from) and the
    probe's memory bandwidth."""
    if not MACHINE_FILE.is_file():
        raise WorkloadError(f"{MACHINE_FILE.name} missing", field="conf/calibration",
                            fix="run `t2hx calibrate --machine`")
    data = json.loads(MACHINE_FILE.read_text())
    flops = float(data["gflops"])
    hpl = CALIBRATION_DIR / "hpl.json"
    if hpl.is_file():
        runs = json.loads(hpl.read_text())["runs"]
        flops = max([flops] + [float(r["value"]) for r in runs if r["ranks"] == 1])
    return {"flops": flops, "memory": float(data["mem_gbs"])}


def default_node() -> dict:
    """The node a conf system without ``nodes.peak_gflops``/``mem_gbs`` has
    (conf/appmodels.yaml ``default_node``: a 2 x Xeon X5670 TSUBAME2 node, with sources)."""
    return dict(yaml.safe_load(MODELS_FILE.read_text())["default_node"])


def node_of(nodes: dict) -> dict:
    """A conf system's ``nodes:`` rates, the default node's where it gives none."""
    out = default_node()
    out.update({k: nodes[k] for k in NODE_RATE.values() if nodes.get(k) is not None})
    return out


def rank_share(node: dict, ranks_per_node: int) -> dict:
    """What one of ``ranks_per_node`` ranks of a node computes with: its share of the node's
    rates (a calibration run is one rank on the whole machine, ``t2hx calibrate``)."""
    return {k: v / ranks_per_node if k in NODE_RATE.values() else v for k, v in node.items()}


def system_node(system: str | Path) -> dict:
    """The node rates of a conf system (a conf/systems/ file or name)."""
    from t2hx.conf import load_system, system_path

    return node_of(load_system(system_path(str(system))).nodes)


def predict_largest(rules: ModelRules) -> tuple[int, float, float]:
    """(n_max, predicted, measured) per-rank bytes (p2p + coll) at the largest calibrated
    rank count, from a fit over the smaller ones: the model's acceptance check."""
    m = model(rules)
    if m is None:
        raise WorkloadError(f"no calibrated model for {rules.key}", field=rules.key,
                            fix=f"t2hx calibrate {rules.key} --ranks 1,2,4,8")
    n_max = max(r["ranks"] for r in m.calibration["runs"])
    k = m.fit(below=n_max)
    pred = sum(m.bytes_per_rank(n_max, m.calibration["input"], k).values())
    run = next(r for r in m.calibration["runs"] if r["ranks"] == n_max)
    meas = measured_bytes(run, "all")
    return n_max, pred, meas



def table(apps: Iterable[ModelRules]) -> str:
    """Markdown: per calibrated code among ``apps`` its terms, fitted byte scales and the
    check of the largest measured rank count predicted from the smaller ones."""
    rows = ["| code | bound | traffic terms (kind: pattern x measure) | k (all runs) | "
            "ranks | predicted B/rank | measured B/rank | error |",
            "|---|---|---|---|---|---|---|---|"]
    for rules in sorted(apps, key=lambda a: a.key):
        m = model(rules)
        if m is None:
            continue
        code = rules.key
        n, pred, meas = predict_largest(rules)
        terms = "; ".join(f"{t.kind}: {t.pattern} x {t.measure}" for t in m.terms)
        ks = ", ".join(f"{k:.3g}" for k in m.fit())
        rows.append(f"| {code} | {m.bound} | {terms} | {ks} | {n} | {pred:.4g} | {meas:.4g} | "
                    f"{pred / meas - 1:+.1%} |")
    return "\n".join(rows)
