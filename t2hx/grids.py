"""The process grids the MPI codes lay their ranks out on.

The benchmark modules (t2hx/benchmarks/) turn them into the real binaries' arguments and the
flow model (t2hx/flowsim/apps.py, appmodel.py) into the same codes' communication, so a
simulated and a real run of a case agree on the layout. Pure arithmetic, no imports.
"""

from __future__ import annotations

import math


def grid3(ranks: int) -> tuple[int, int, int]:
    """A near-cubic px*py*pz = ranks decomposition, largest factor first (MPI_Dims_create)."""
    best = (ranks, 1, 1)
    for px in range(1, ranks + 1):
        if ranks % px:
            continue
        for py in range(1, ranks // px + 1):
            if (ranks // px) % py:
                continue
            a, b, c = sorted((px, py, ranks // px // py), reverse=True)
            cand = (a, b, c)
            if max(cand) - min(cand) < max(best) - min(best):
                best = cand
    return best


def hpl_grid(ranks: int) -> tuple[int, int]:
    """The most square P x Q = ranks with P <= Q (HPL's preferred shape)."""
    p = math.isqrt(ranks)
    while ranks % p:
        p -= 1
    return p, ranks // p


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
    x, y, z, t = dims
    return x, y, z, t


def npb_mg_grid(ranks: int) -> tuple[int, int, int]:
    """NPB 3.4 MG's process grid (mg.f90 ``setup``): log2(ranks) split as x gets a third,
    y half the rest, z the remainder, in powers of two (MG runs on powers of two only)."""
    log_p = int(math.log(ranks + 0.0001) / math.log(2.0))
    dx = log_p // 3
    dy = (log_p - dx) // 2
    px, py = 2 ** dx, 2 ** dy
    return px, py, ranks // (px * py)


def npb_lu_grid(ranks: int) -> tuple[int, int]:
    """NPB 3.4 LU's 2-D process grid (proc_grid.f90): ydim the largest divisor of ranks up
    to sqrt(ranks), xdim = ranks / ydim; LU splits x and y, never z."""
    ydim = math.isqrt(ranks)
    while ranks % ydim:
        ydim -= 1
    return ranks // ydim, ydim
