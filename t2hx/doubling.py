"""Open MPI's recursive-doubling and recursive-halving rank schedules (``coll/base``): the one
source of them for seed 001's placement objective (t2hx/placement/collective_messages.py)
and the simulator's Allreduce, Rabenseifner and Allgather (t2hx/flowsim/collectives.py). A
module of its own at the bottom layer, so the simulator's import closure — and with it the
run cache's key — does not take in the placement package."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Doubling:
    """Open MPI's recursive-doubling schedule (``coll/base``) on ``n`` ranks, the one source
    of it for the placement objective and the simulator's allreduce, Rabenseifner and
    allgather: ``fold`` (the even ranks below ``2·extra`` hand their data to ``rank+1``),
    exchanges among ``survivors`` (list position = Open MPI's newrank), ``unfold``."""
    ranks: int
    pof2: int
    fold: tuple[np.ndarray, np.ndarray]
    survivors: np.ndarray
    unfold: tuple[np.ndarray, np.ndarray]

    @property
    def extra(self) -> int:
        return self.ranks - self.pof2

    def exchange(self, distance: int) -> tuple[np.ndarray, np.ndarray]:
        """The step at ``distance``: newrank ``i`` with newrank ``i XOR distance``."""
        return self.survivors, self.survivors[np.arange(self.pof2) ^ distance]

    def distances(self) -> list[int]:
        return [1 << k for k in range(self.pof2.bit_length() - 1)]


def doubling(n: int) -> Doubling:
    pof2 = 1 << (n.bit_length() - 1)
    extra = n - pof2
    odd = np.arange(1, 2 * extra, 2, dtype=np.int64)
    survivors = np.concatenate([odd, np.arange(2 * extra, n, dtype=np.int64)])
    return Doubling(n, pof2, (odd - 1, odd), survivors, (odd, odd - 1))


def halving(n: int) -> Doubling:
    """Open MPI 4.1's Rabenseifner (``allreduce_intra_redscat_allgather``) off a power of two:
    the first 2·extra ranks pair up, and the *even* one of each pair goes on (newrank
    ``rank / 2``), the odd one hands it its half and gets the result back at the end."""
    pof2 = 1 << (n.bit_length() - 1)
    extra = n - pof2
    even = np.arange(0, 2 * extra, 2, dtype=np.int64)
    survivors = np.concatenate([even, np.arange(2 * extra, n, dtype=np.int64)])
    return Doubling(n, pof2, (even + 1, even), survivors, (even, even + 1))
