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


def _prime_factors(n: int) -> dict[int, int]:
    """Prime -> multiplicity, ascending (HPCG's ComputePrimeFactors; 1 -> {1: 1})."""
    out: dict[int, int] = {}
    while n > 1 and n % 2 == 0:
        out[2] = out.get(2, 0) + 1
        n //= 2
    d = 3
    while d * d <= n:
        while n % d == 0:
            out[d] = out.get(d, 0) + 1
            n //= d
        d += 2
    if n > 1 or not out:
        out[n] = out.get(n, 0) + 1
    return dict(sorted(out.items()))


def _counter_states(limits: list[int]) -> list[list[int]]:
    """HPCG's MixedBaseCounter: every count vector below ``limits`` after zero, digit 0
    fastest, in the order ``next()`` visits them."""
    cur: list[int] = [0] * len(limits)
    out: list[list[int]] = []
    while True:
        for i, top in enumerate(limits):
            cur[i] += 1
            if cur[i] > top:
                cur[i] = 0
                continue
            break
        if not any(cur):
            return out
        out.append(cur[:])


def hpcg_grid(ranks: int) -> tuple[int, int, int]:
    """HPCG 3.1's process grid (npx, npy, npz) for ``ranks`` (src/ComputeOptimalShapeXYZ.cpp,
    the default build without HPCG_CUBIC_RADICAL_SEARCH); rank = ipx + npx*(ipy + npy*ipz)
    (src/GenerateGeometry.cpp)."""
    f = _prime_factors(ranks)
    primes, counts = list(f), list(f.values())
    x, y = primes[0], primes[1] if len(primes) > 1 else 1
    if len(primes) == 1:
        c = counts[0]
        return (x ** (c // 3 + (c % 3 >= 1)), x ** (c // 3 + (c % 3 >= 2)), x ** (c // 3))
    if len(primes) == 2 and counts == [1, 1]:
        return x, y, 1
    if len(primes) == 2 and sum(counts) == 3:
        return x, y, (x if counts[0] == 2 else y)
    if len(primes) == 3 and counts == [1, 1, 1]:
        return x, y, primes[2]
    best, shape = 2.0 * ranks + 1.0, (ranks, 1, 1)
    for c1 in _counter_states(counts):
        for c2 in _counter_states([m - u for m, u in zip(counts, c1)]):
            t1 = math.prod(p ** k for p, k in zip(primes, c1))
            t2 = math.prod(p ** k for p, k in zip(primes, c2))
            t3 = ranks // t1 // t2
            area = t1 * t2 + t2 * t3 + t1 * t3
            if area < best:
                best, shape = area, (t1, t2, t3)
    return shape
