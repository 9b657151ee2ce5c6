"""Two-opt rank re-placement (seed 001 §3.3.2).

Start from a placement (rank → node), pick two distinct ranks at random, swap their nodes
and keep the swap if the objective drops; repeat a fixed number of times. The node set
never changes, only which rank sits where.

Objectives, both over the messages of one collective algorithm (``collectives``):

- ``HopObjective``: total hops, Σ_m w_m · cost[node(src_m), node(dst_m)], for any host×host
  cost matrix (BFS minimal routing or the real routing tables, see ``costs``);
- ``ContentionObjective``: the "possible contentions" variant of seed 001 §3.3.2 — the
  number of message pairs of the same algorithm step that share a directed link,
  Σ_step Σ_link C(load, 2), with load = messages of that step on that link along their
  actual paths (injection/ejection links included). Max link load is reported beside it
  (``max_load``) but not optimised: it is flat over most swaps and cannot be updated
  incrementally.

Speed: a swap only changes the messages touching the two ranks (≈2·log2 n of them), so
each iteration evaluates just those with a handful of numpy operations instead of
recomputing the whole collective (``delta`` equals ``total(after) − total(before)``
exactly; the tests check it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from t2hx.errors import T2hxError
from t2hx.placement.collective_messages import Messages


def incidence(msgs: Messages) -> tuple[np.ndarray, np.ndarray]:
    """Per rank, the ids of the messages it sends or receives, padded with the dummy id
    ``len(msgs)``, and the other endpoint of each (-1 for padding)."""
    n, m = msgs.ranks, len(msgs)
    ends = np.concatenate((msgs.src, msgs.dst))
    other = np.concatenate((msgs.dst, msgs.src))
    ids = np.concatenate((np.arange(m), np.arange(m)))
    order = np.argsort(ends, kind="stable")
    counts = np.bincount(ends, minlength=n)
    width = max(1, int(counts.max()) if m else 1)
    inc = np.full((n, width), m, dtype=np.int64)
    oth = np.full((n, width), -1, dtype=np.int64)
    slot = np.arange(2 * m) - np.repeat(np.cumsum(counts) - counts, counts)
    inc[ends[order], slot] = ids[order]
    oth[ends[order], slot] = other[order]
    return inc, oth


class _Objective:
    """Shared bookkeeping: message arrays with one zero-weight dummy appended."""

    def __init__(self, msgs: Messages, nodes: int) -> None:
        self.msgs = msgs
        self.nodes = nodes
        self.src = np.append(msgs.src, 0)
        self.dst = np.append(msgs.dst, 0)
        self.step = np.append(msgs.step, 0)
        self.weight = np.append(msgs.weight, 0)
        self.inc, self.other = incidence(msgs)

    def check(self, place: np.ndarray) -> None:
        if len(place) != self.msgs.ranks:
            raise T2hxError(f"placement has {len(place)} ranks, the collective "
                            f"{self.msgs.ranks}", field="placement",
                            fix="build the messages for as many ranks as nodes placed")
        if len(set(place.tolist())) != len(place) or place.min() < 0 \
                or place.max() >= self.nodes:
            raise T2hxError("placement repeats a node or leaves the cost matrix",
                            field="placement", fix="place every rank on its own node")

    def affected(self, a: int, b: int) -> np.ndarray:
        """Message ids touching rank a or b, each once (a↔b messages come via b's row)."""
        keep = self.other[a] != b
        return np.concatenate((self.inc[a][keep], self.inc[b]))

    def accept(self) -> None:
        """Commit the state of the last ``delta`` (the caller swaps the placement)."""


class HopObjective(_Objective):
    def __init__(self, cost: np.ndarray, msgs: Messages) -> None:
        cost = np.asarray(cost)
        if cost.ndim != 2 or cost.shape[0] != cost.shape[1]:
            raise T2hxError(f"cost matrix has shape {cost.shape}", field="cost",
                            fix="pass a square host×host matrix")
        super().__init__(msgs, cost.shape[0])
        self.flat = np.ascontiguousarray(cost, dtype=np.int64).ravel()

    def total(self, place: np.ndarray) -> int:
        place = np.asarray(place, dtype=np.int64)
        self.check(place)
        m = self.msgs
        return int((self.flat[place[m.src] * self.nodes + place[m.dst]] * m.weight).sum())

    def delta(self, place: np.ndarray, a: int, b: int) -> int:
        ids = self.affected(a, b)
        s, d = self.src[ids], self.dst[ids]
        old = self.flat[place[s] * self.nodes + place[d]]
        place[a], place[b] = place[b], place[a]
        new = self.flat[place[s] * self.nodes + place[d]]
        place[a], place[b] = place[b], place[a]
        return int(((new - old) * self.weight[ids]).sum())


class ContentionObjective(_Objective):
    def __init__(self, paths: np.ndarray, msgs: Messages, links: int) -> None:
        paths = np.asarray(paths)
        if paths.ndim != 3 or paths.shape[0] != paths.shape[1]:
            raise T2hxError(f"paths have shape {paths.shape}", field="paths",
                            fix="pass an (H, H, L) array of link ids")
        super().__init__(msgs, paths.shape[0])
        self.paths = paths.astype(np.int64)
        self.links = int(links)
        self.load = np.zeros(max(1, msgs.steps) * self.links, dtype=np.int64)
        self._pending: tuple[np.ndarray, np.ndarray] | None = None

    def _keys(self, place: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.paths[place[self.src[ids]], place[self.dst[ids]]]
        keys = self.step[ids][:, None] * self.links + p
        w = np.broadcast_to(self.weight[ids][:, None], p.shape)
        used = p >= 0
        return keys[used], w[used]

    def total(self, place: np.ndarray) -> int:
        place = np.asarray(place, dtype=np.int64)
        self.check(place)
        keys, w = self._keys(place, np.arange(len(self.msgs)))
        self.load = np.bincount(keys, weights=w, minlength=len(self.load)).astype(np.int64)
        return int((self.load * (self.load - 1) // 2).sum())

    def max_load(self) -> int:
        return int(self.load.max()) if len(self.load) else 0

    def delta(self, place: np.ndarray, a: int, b: int) -> int:
        ids = self.affected(a, b)
        k_old, w_old = self._keys(place, ids)
        place[a], place[b] = place[b], place[a]
        k_new, w_new = self._keys(place, ids)
        place[a], place[b] = place[b], place[a]
        keys, inv = np.unique(np.concatenate((k_old, k_new)), return_inverse=True)
        change = np.bincount(inv, weights=np.concatenate((-w_old, w_new))).astype(np.int64)
        x = self.load[keys]
        y = x + change
        self._pending = (keys, change)
        return int(((y * (y - 1) - x * (x - 1)) // 2).sum())

    def accept(self) -> None:
        assert self._pending is not None, "accept() follows the delta() it accepts"
        keys, change = self._pending
        self.load[keys] += change


@dataclass
class TwoOptResult:
    placement: np.ndarray      # node per rank after optimisation
    initial: int
    final: int
    accepted: int
    iterations: int
    seconds: float             # wall clock
    cpu_seconds: float         # this process's CPU time (robust on a shared machine)

    @property
    def reduction_pct(self) -> float:
        return 100.0 * (self.initial - self.final) / self.initial if self.initial else 0.0


def swap_pairs(n: int, count: int, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """``count`` random pairs of distinct ranks, uniform over pairs."""
    first = rng.integers(0, n, size=count)
    second = rng.integers(0, n - 1, size=count)
    second += second >= first
    return first.tolist(), second.tolist()


def starting(objective: HopObjective | ContentionObjective, start: np.ndarray,
             iterations: int) -> tuple[np.ndarray, int]:
    """A search's start: the placement as an array and its total (iterations checked)."""
    if iterations < 0:
        raise T2hxError(f"{iterations} iterations", field="iterations",
                        fix="use zero or more iterations")
    place = np.array(start, dtype=np.int64)
    return place, objective.total(place)


def two_opt(objective: HopObjective | ContentionObjective, start: np.ndarray,
            iterations: int, rng: np.random.Generator) -> TwoOptResult:
    """Run ``iterations`` random swap trials from ``start`` (node per rank)."""
    began, cpu = time.monotonic(), time.process_time()
    place, total = starting(objective, start, iterations)
    initial, n, accepted = total, len(place), 0
    if n >= 2 and iterations:
        delta, accept = objective.delta, objective.accept
        for a, b in zip(*swap_pairs(n, iterations, rng)):
            d = delta(place, a, b)
            if d < 0:
                accept()
                place[a], place[b] = place[b], place[a]
                total += d
                accepted += 1
    return TwoOptResult(place, initial, total, accepted, iterations,
                        time.monotonic() - began, time.process_time() - cpu)
