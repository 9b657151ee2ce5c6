"""NTChem RI-MP2 (seed 000 §4.2): one molecule's RI-MP2 energy split over the ranks (strong
scaling); the deck is a ``case`` with known basis dimensions."""

from t2hx.benchmarks.proxyapp import M, Skeleton, proxy_app
from t2hx.errors import WorkloadError

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


BENCHMARK = proxy_app(
    "ntchem", "NTChem RI-MP2", "NTChem", "ntchem-mini", local_binary="rimp2.exe",
    skeleton=Skeleton(0.300, 20, (("allreduce", 16 * M), ("bcast", 1 * M))),
    # Strong scaling: one molecule's RI-MP2 split over P.
    work=lambda i, n: ntchem_work(i) / n,
    # ``data``: the whole MO 3-centre tensor, which the rimp2 pattern splits.
    measures={"data": lambda i, n: _ovx(ntchem_dims(i)),
              "basis": lambda i, n: float(ntchem_dims(i)["nbf"]) ** 2})
