"""The point-to-point messages that make up a collective (seed 001 §3.1, §4.3).

A ``Messages`` is four parallel arrays: source rank, destination rank, algorithm step and
weight (1 per message: seed 001 counts hops per message, not bytes). The step matters only
for the contention objective (messages of one step share links at the same time).

- bcast (binomial tree, root 0): rank ``r`` receives from ``r`` with its lowest set bit
  cleared, in step ``ceil(log2 n) − tz(r)`` — the tree of seed 001 Fig 3.5 / Table 3.1
  (0→4; 0→2, 4→6; 0→1, 2→3, 4→5, 6→7; MPICH's binomial). Open MPI's ``bmtree`` clears the
  highest bit instead; for n a power of two the two trees are the same up to bit-reversing
  the ranks, so two-opt reaches the same totals with either.
- allreduce (recursive doubling, Open MPI ``coll/base``): with ``pof2 ≤ n`` the largest power
  of two and ``extra = n − pof2``, even ranks below ``2·extra`` first send to ``rank+1`` and
  sit out; the remaining ``pof2`` ranks exchange with ``newrank XOR 2^k``; finally the odd
  ranks below ``2·extra`` send the result back. Every exchange is two messages.
- alltoall (Bruck): in step ``k`` every rank ``r`` sends to ``(r + 2^k) mod n`` (Open MPI's
  direction; seed 001 writes ``r − 2^k`` — the same pairs reversed, hence the same total on
  a symmetric hop matrix).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from t2hx.errors import T2hxError

COLLECTIVES = ("bcast", "allreduce", "alltoall")


@dataclass(frozen=True)
class Messages:
    name: str
    ranks: int
    src: np.ndarray
    dst: np.ndarray
    step: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return len(self.src)

    @property
    def steps(self) -> int:
        return int(self.step.max()) + 1 if len(self.step) else 0


def messages(collective: str, n: int) -> Messages:
    if collective not in COLLECTIVES:
        raise T2hxError(f"unknown collective '{collective}'", field="collective",
                        fix=f"use one of: {', '.join(COLLECTIVES)}")
    if n < 1:
        raise T2hxError(f"{n} ranks", field="ranks", fix="use at least one rank")
    src, dst, step = {"bcast": _bcast, "allreduce": _allreduce, "alltoall": _alltoall}[
        collective](n)
    src, dst, step = (np.asarray(x, dtype=np.int64) for x in (src, dst, step))
    return Messages(collective, n, src, dst, step, np.ones(len(src), dtype=np.int64))


def _ceil_log2(n: int) -> int:
    return max(0, (n - 1).bit_length())


def _bcast(n: int) -> tuple:
    r = np.arange(1, n, dtype=np.int64)
    parent = r & (r - 1)
    lowbit = r & -r
    trailing = np.log2(lowbit).astype(np.int64) if n > 1 else r
    return parent, r, _ceil_log2(n) - 1 - trailing


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


def _allreduce(n: int) -> tuple:
    d = doubling(n)
    pre = 1 if d.extra else 0
    steps = [(*d.fold, 0)] if d.extra else []
    steps += [(*d.exchange(dist), pre + k) for k, dist in enumerate(d.distances())]
    if d.extra:
        steps.append((*d.unfold, pre + len(d.distances())))
    if not steps:
        return [], [], []
    src = np.concatenate([s for s, _, _ in steps])
    dst = np.concatenate([t for _, t, _ in steps])
    step = np.concatenate([np.full(len(s), k) for s, _, k in steps])
    return src, dst, step


def _alltoall(n: int) -> tuple:
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    step: list[np.ndarray] = []
    r = np.arange(n, dtype=np.int64)
    k, distance = 0, 1
    while distance < n:
        src.append(r)
        dst.append((r + distance) % n)
        step.append(np.full(n, k))
        distance <<= 1
        k += 1
    if not src:
        return [], [], []
    return np.concatenate(src), np.concatenate(dst), np.concatenate(step)
