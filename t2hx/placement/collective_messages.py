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

from t2hx.doubling import doubling
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
