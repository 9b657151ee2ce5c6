"""CoMD (seed 000 §4.2): ``atoms_per_dim_per_rank``^3 copper atoms (EAM) per rank."""

import math

from t2hx.benchmarks.proxyapp import K, Skeleton, proxy_app

COMD_LATTICE, COMD_CUTOFF = 3.615, 4.95    # CoMD -e (Cu EAM): Angstrom, its potential's cutoff


def cells(inp: dict, ranks: int) -> float:
    """Link cells per rank and axis: the subdomain's side over the potential's cutoff."""
    return float(math.floor(inp["atoms_per_dim_per_rank"] * COMD_LATTICE / COMD_CUTOFF))


BENCHMARK = proxy_app(
    "comd", "CoMD", "CoMD", "comd", local_binary="CoMD-mpi",
    skeleton=Skeleton(0.050, 100, (("halo", 512 * K), ("allreduce", 16))),
    work=lambda i, n: float(i["atoms_per_dim_per_rank"]) ** 3,
    measures={"cells": cells})
