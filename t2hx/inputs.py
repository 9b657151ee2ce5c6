"""What a study input means for a code: the parameters the real binary gets (checks/) and
the per-rank work the flow model scales from (t2hx/flowsim/appmodel.py).

One place for both, so the simulated and the real run of a case agree on HPL's N, Graph500's
SCALE, miniFE's grid and every process grid (issue: "one Graph500 SCALE everywhere").
Inputs are the study's ``input`` entries (conf/studies/<study>.yaml) after its ``scale`` overrides.
"""

from __future__ import annotations

from pathlib import Path

import math
from collections.abc import Callable

from t2hx.errors import WorkloadError


def grid3(ranks: int) -> tuple[int, int, int]:
    """A near-cubic px*py*pz = ranks decomposition, largest factor first (MPI_Dims_create)."""
    best = (ranks, 1, 1)
    for px in range(1, ranks + 1):
        if ranks % px:
            continue
        for py in range(1, ranks // px + 1):
            if (ranks // px) % py:
                continue
            cand = tuple(sorted((px, py, ranks // px // py), reverse=True))
            if max(cand) - min(cand) < max(best) - min(best):
                best = cand
    return best


def hpl_grid(ranks: int) -> tuple[int, int]:
    """The most square P x Q = ranks with P <= Q (HPL's preferred shape)."""
    p = math.isqrt(ranks)
    while ranks % p:
        p -= 1
    return p, ranks // p


#: Debian's HPC Challenge (package hpcc): HPL inside HPCC, used wherever the binaries'
#: view has no xhpl, so a machine without the Spack build still measures HPL for real.
HPCC = Path("/usr/bin/hpcc")
HPCC_EXAMPLE = Path("/usr/share/doc/hpcc/examples/_hpccinf.txt")


def hpcc_input(n: int, nb: int, p: int, q: int) -> str:
    """Debian's example hpccinf.txt with one HPL problem N, block NB and a P x Q grid."""
    lines = HPCC_EXAMPLE.read_text().splitlines()
    for no, value in ((5, n), (7, nb), (10, p), (11, q)):
        lines[no] = f"{value:<12} {lines[no].split(None, 1)[1]}"
    return "\n".join(lines) + "\n"


def hpl_n(inp: dict, ranks: int) -> int:
    """N: given (``n``) or so that A takes ``gib_per_rank`` GiB per process, rounded down to
    NB (seed 000 Table 2: 1 GiB per process, 0.25 GiB from 224 nodes)."""
    nb = int(inp.get("nb", 192))
    if "n" in inp:
        return int(inp["n"])
    n = int(math.sqrt(float(inp["gib_per_rank"]) * 2**30 * ranks / 8))
    return max(nb, n - n % nb)


def graph500_scale(inp: dict, ranks: int) -> int:
    """SCALE: 2^SCALE vertices x edgefactor edges x 16 B per edge ~ gib_per_rank per rank."""
    edges = float(inp["gib_per_rank"]) * 2**30 * ranks / 16
    return max(1, int(math.log2(edges / inp["edgefactor"])))


GRAPH500_NBFS = 64      # the reference code's BFS count (graph500 3.0 NBFS_max)

# HPCG 3.1's own flop count per grid point and CG iteration, from our one-rank run's report
# (HPCG-Benchmark_3.1 *.txt: GFLOP/s Raw Total x Benchmark Time Total / 16^3 rows / 50),
# and the iterations of one timed CG set.
HPCG_FLOPS_PER_ROW = 327.0
HPCG_SET = 50


def hpcg_flops(inp: dict) -> float:
    """Flops of one timed CG set on one rank's nx x ny x nz grid."""
    return HPCG_FLOPS_PER_ROW * inp["nx"] * inp["ny"] * inp["nz"] * HPCG_SET


def minife_n(inp: dict, ranks: int) -> int:
    """Weak scaling of seed 000 §4.2: global n = cbrt(n_base^3 * P)."""
    return round((inp["n_base"] ** 3 * ranks) ** (1 / 3))


def swfft_ng(inp: dict, ranks: int) -> int:
    """Global grid ~ grid_per_rank * cbrt(P), divisible by P (SWFFT's slab layout aborts in
    distribution_init otherwise)."""
    ng = inp["grid_per_rank"] * ranks ** (1 / 3)
    return max(1, round(ng / ranks)) * ranks


def qball_atoms(inp: dict, ranks: int) -> int:
    return int(inp["atoms_per_node"]) * ranks


# mVMC-mini's decks: their zmodpara.def values the study can override with ``modpara``.
MVMC_DECKS = {"job_middle": {"NSROptItrStep": 20, "NVMCSample": 192}}


def mvmc_param(inp: dict, key: str) -> float:
    case = inp["case"]
    if case not in MVMC_DECKS:
        raise WorkloadError(f"unknown mVMC case '{case}'", field="benchmarks.mvmc.input.case",
                            fix=f"use one of: {', '.join(MVMC_DECKS)}")
    return float(inp.get("modpara", {}).get(key, MVMC_DECKS[case][key]))


FCC_BASIS_ATOMS = 4


def qball_cells(inp: dict, ranks: int) -> int:
    """fcc unit cells of the gold deck's cubic cell: the smallest cube of whole cells that
    holds the atoms (checks/apps.py gold_deck; assumed for the site's deck too)."""
    return math.ceil((qball_atoms(inp, ranks) / FCC_BASIS_ATOMS) ** (1 / 3) - 1e-9) ** 3


def qball_data(inp: dict, ranks: int) -> float:
    """Wave-function data per rank ~ states x plane waves / P; states ~ atoms, plane waves
    ~ cell volume (the site's deck is assumed to use our cutoff: seed 000 does not give it)."""
    return qball_atoms(inp, ranks) * qball_cells(inp, ranks) / ranks


# NTChem RI-MP2 decks by their basis dimensions: basis functions, occupied orbitals (closed
# shell, no frozen core: virtuals = nbf - nocc) and auxiliary (RI) functions, as the `o NBF`,
# `o NOccA` and `o NBF_RI` lines of each upstream test's reference output report them
# (share/ntchem/tests/<case>/*.out_ref, installed by the ntchem-mini recipe). c6h6 is benzene
# RI-MP2/SVP, the calibration input; taxol (cc-pVDZ) the study's.
NTCHEM_CASES = {"c6h6": {"nbf": 114, "nocc": 21, "naux": 372},
                "h2o": {"nbf": 580, "nocc": 50, "naux": 1410},
                "taxol": {"nbf": 1123, "nocc": 226, "naux": 4186}}
# Where the one-rank c6h6 run of conf/calibration/ntchem.json spent its solver time (its
# `phases`, NTChem's WALL time lines; ntchem_shares derives these, a test keeps them equal):
# the 3-centre integrals and their transformation (RIMP2_Tran3c1/2), the (ia|jb) DGEMMs and
# pair energies ("4c Ints", "EMP2 corr."), and the rest of the energy step, which moves the
# MO 3-centre tensor.
NTCHEM_SHARES = {"integrals": 0.586, "pairs": 0.121, "tensor": 0.293}


def ntchem_shares(phases: dict[str, float]) -> dict[str, float]:
    """NTCHEM_SHARES from a run's phase timers (seconds)."""
    integrals = phases["RIMP2_Tran3c1"] + phases["RIMP2_Tran3c2"]
    pairs = phases["4c Ints"] + phases["EMP2 corr."]
    tensor = phases["RIMP2_RMP2Energy"] - pairs
    total = integrals + pairs + tensor
    return {"integrals": integrals / total, "pairs": pairs / total, "tensor": tensor / total}


def ntchem_dims(inp: dict) -> dict:
    case = inp["case"]
    if case not in NTCHEM_CASES:
        raise WorkloadError(f"unknown NTChem case '{case}'", field="benchmarks.ntchem.input.case",
                            fix=f"use one of: {', '.join(NTCHEM_CASES)}")
    return NTCHEM_CASES[case]


def ntchem_costs(inp: dict) -> dict[str, float]:
    """Textbook cost of each part of RI-MP2 on a deck: integrals ~ nbf^2 naux (no screening
    assumed), pair energies ~ nocc^2 nvir^2 naux (DGEMM flops), tensor ~ nocc nvir naux."""
    d = ntchem_dims(inp)
    return {"integrals": float(d["nbf"] ** 2 * d["naux"]),
            "pairs": _ovx(d) * d["nocc"] * (d["nbf"] - d["nocc"]), "tensor": _ovx(d)}


def ntchem_work(inp: dict) -> float:
    """RI-MP2 cost of a deck relative to c6h6's: each part's c6h6 share x its cost ratio."""
    mine, c6h6 = ntchem_costs(inp), ntchem_costs({"case": "c6h6"})
    return sum(share * mine[part] / c6h6[part] for part, share in NTCHEM_SHARES.items())


def _ovx(d: dict) -> float:
    """Size of the MO 3-centre integral tensor B_ia^P (nocc x nvir x naux doubles)."""
    return float(d["nocc"] * (d["nbf"] - d["nocc"]) * d["naux"])


def grid4(ranks: int) -> tuple[int, int, int, int]:
    """MILC's hyper_prime layout of a lattice that is ``ranks`` copies of one rank's cube:
    prime factors, largest first, each to the axis (x, y, z, t) split least so far."""
    dims = [1, 1, 1, 1]
    rest, factors = ranks, []
    for p in range(2, ranks + 1):
        while rest % p == 0:
            factors.append(p)
            rest //= p
    for p in sorted(factors, reverse=True):
        axis = dims.index(min(dims))
        dims[axis] *= p
    return tuple(dims)


def milc_lattice(inp: dict, ranks: int) -> tuple[int, ...]:
    """Weak scaling: a ``lattice_per_rank``^4 block per rank on the grid4(ranks) layout (MILC
    then splits the global lattice back into those blocks)."""
    side = int(inp["lattice_per_rank"])
    return tuple(side * g for g in grid4(ranks))


def milc_steps(inp: dict) -> float:
    """Molecular-dynamics steps of a run: trajectories x steps per trajectory."""
    return float(inp["trajecs"] * inp["steps"])


# Per-rank work of one run, in units proportional to what the code computes per process;
# only ratios of the same code's work are ever used (study input vs calibration input).
WORK: dict[str, Callable[[dict, int], float]] = {
    "amg": lambda i, n: float(i["cube"]) ** 3,
    "comd": lambda i, n: float(i["atoms_per_dim_per_rank"]) ** 3,
    "minife": lambda i, n: minife_n(i, n) ** 3 / n,
    "swfft": lambda i, n: i["reps"] * swfft_ng(i, n) ** 3 * math.log2(swfft_ng(i, n)) / n,
    "ffvc": lambda i, n: float(i["cube"]) ** 3,
    # One timed CG set per run: our runs did exactly one (50 iterations) whatever `seconds`
    # asked for, and the rating is per set, so the simulated run is one set too.
    "hpcg": lambda i, n: float(i["nx"] * i["ny"] * i["nz"]),
    "hpl": lambda i, n: 2 / 3 * hpl_n(i, n) ** 3 / n,
    "graph500": lambda i, n: i["edgefactor"] * 2.0 ** graph500_scale(i, n) / n,
    # Plane-wave DFT in the FFT-bound regime: states x plane waves / P. Our calibration
    # (2-16 atoms) grows with that product, not with the N^3 of orthogonalisation.
    "qball": qball_data,
    # Stochastic reconfiguration: every step samples NVMCSample configurations, split over P.
    "mvmc": lambda i, n: mvmc_param(i, "NSROptItrStep") * mvmc_param(i, "NVMCSample") / n,
    # Strong scaling: one molecule's RI-MP2 split over P (ntchem_work).
    "ntchem": lambda i, n: ntchem_work(i) / n,
    # Weak scaling: sites per rank x MD steps (each step's CG solves sweep the sites).
    "milc": lambda i, n: float(i["lattice_per_rank"]) ** 4 * milc_steps(i),
}


def _face(w: float) -> float:
    return w ** (2 / 3)


# Measures of an input that a code's traffic scales with (conf/appmodels.yaml names them):
# ``face`` = area of a rank's subdomain face (MILC: times its MD steps), ``cells`` = CoMD
# link cells per rank and axis, ``data`` = bytes-proportional data per rank (NTChem: its whole
# MO 3-centre tensor, which the rimp2 pattern splits), ``basis`` = NTChem's nbf^2, ``steps`` =
# iterations that each communicate, ``one`` = independent of the input.
COMD_LATTICE, COMD_CUTOFF = 3.615, 4.95    # CoMD -e (Cu EAM): Angstrom, its potential's cutoff
MEASURES: dict[str, dict[str, Callable[[dict, int], float]]] = {
    "amg": {"face": lambda i, n: float(i["cube"]) ** 2},
    "comd": {"cells": lambda i, n: float(math.floor(
        i["atoms_per_dim_per_rank"] * COMD_LATTICE / COMD_CUTOFF))},
    "minife": {"face": lambda i, n: _face(minife_n(i, n) ** 3 / n)},
    "swfft": {"data": lambda i, n: i["reps"] * swfft_ng(i, n) ** 3 / n},
    "ffvc": {"face": lambda i, n: float(i["cube"]) ** 2},
    "hpcg": {"face": lambda i, n: _face(i["nx"] * i["ny"] * i["nz"])},
    "hpl": {"matrix": lambda i, n: float(hpl_n(i, n)) ** 2},
    "graph500": {"data": lambda i, n: i["edgefactor"] * 2.0 ** graph500_scale(i, n) / n},
    "qball": {"data": qball_data},
    "mvmc": {"steps": lambda i, n: mvmc_param(i, "NSROptItrStep")},
    "ntchem": {"data": lambda i, n: _ovx(ntchem_dims(i)),
               "basis": lambda i, n: float(ntchem_dims(i)["nbf"]) ** 2},
    "milc": {"face": lambda i, n: float(i["lattice_per_rank"]) ** 3 * milc_steps(i),
             "steps": lambda i, n: milc_steps(i)},
}
ONE = lambda i, n: 1.0   # noqa: E731


def measure(app: str, name: str, inp: dict, ranks: int) -> float:
    """Measure ``name`` of ``app``'s input at ``ranks`` (see MEASURES)."""
    fn = ONE if name == "one" else MEASURES.get(app, {}).get(name)
    if fn is None:
        raise WorkloadError(f"no measure '{name}' for '{app}'", field=f"models.{app}",
                            fix=f"use one of: one, {', '.join(MEASURES.get(app, {}))}")
    return _guarded(app, fn, inp, ranks)


def _guarded(app: str, fn: Callable[[dict, int], float], inp: dict, ranks: int) -> float:
    try:
        return float(fn(inp, ranks))
    except KeyError as err:
        raise WorkloadError(f"{app} input {inp} has no {err.args[0]}",
                            field=f"benchmarks.{app}.input",
                            fix="give the keys the study file documents for it") from None


def seconds_of(app: str, run: dict, inp: dict) -> float:
    """The measured time of a calibration run's timed region, from its Table 2 metric."""
    value, n = float(run["value"]), int(run["ranks"])
    if app == "hpl":
        return 2 / 3 * hpl_n(inp, n) ** 3 / (value * 1e9)
    if app == "hpcg":
        return hpcg_flops(inp) / (value * 1e9)
    if app == "graph500":
        return GRAPH500_NBFS * inp["edgefactor"] * 2.0 ** graph500_scale(inp, n) / value
    return value


def work(app: str, inp: dict, ranks: int) -> float:
    """Per-rank work of ``app`` on ``inp`` at ``ranks`` (see WORK)."""
    if app not in WORK:
        raise WorkloadError(f"no work rule for '{app}'", field="benchmark",
                            fix=f"add one to t2hx/inputs.py WORK (known: {', '.join(WORK)})")
    return _guarded(app, WORK[app], inp, ranks)
