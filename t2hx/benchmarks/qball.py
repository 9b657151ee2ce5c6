"""qb@ll (seed 000 §4.2): plane-wave DFT of ``atoms_per_node`` gold atoms per node."""

import math

from t2hx.benchmarks.proxyapp import M, Skeleton, proxy_app

FCC_BASIS_ATOMS = 4


def qball_atoms(inp: dict, ranks: int) -> int:
    return int(inp["atoms_per_node"]) * ranks


def qball_cells(inp: dict, ranks: int) -> int:
    """fcc unit cells of the gold deck's cubic cell: the smallest cube of whole cells that
    holds the atoms (checks/apps.py gold_deck; assumed for the site's deck too)."""
    return math.ceil((qball_atoms(inp, ranks) / FCC_BASIS_ATOMS) ** (1 / 3) - 1e-9) ** 3


def qball_data(inp: dict, ranks: int) -> float:
    """Wave-function data per rank ~ states x plane waves / P; states ~ atoms, plane waves
    ~ cell volume (the site's deck is assumed to use our cutoff: seed 000 does not give it)."""
    return qball_atoms(inp, ranks) * qball_cells(inp, ranks) / ranks


BENCHMARK = proxy_app(
    "qball", "qb@ll", "Qball", "qball", parser="qbox", local_binary="qball",
    aliases=("qb@ll", "qbox"),
    skeleton=Skeleton(0.500, 10, (("alltoall_total", 512 * M), ("allreduce", 8 * M),
                                  ("bcast", 1 * M))),
    # Plane-wave DFT in the FFT-bound regime: states x plane waves / P. Our calibration
    # (2-16 atoms) grows with that product, not with the N^3 of orthogonalisation.
    # The input rule holds the atoms per node; the plane waves per state grow with the cell,
    # so a rank's work grows with the node count.
    work=qball_data, share=lambda i, n: qball_atoms(i, n) / n, measures={"data": qball_data})
