"""A trace's jobs on a system's nodes, and the running job set every ``interval`` seconds
(seed 004 §4.2 samples every 10 minutes).

Placement: a sacct trace names its nodes and keeps them. An SWF trace has only node counts,
so its jobs are replayed in start order onto free nodes chosen by a policy
(docs/history.md#placement):

* ``first-fit``: the lowest-numbered free nodes of the system's host order (what Slurm's
  select/linear does without a topology plugin); hosts are in leaf-switch order in every
  t2hx conf, so a job packs onto as few leaves as the free nodes allow.
* ``least-recent``: the free nodes that have been free longest, a released job's nodes
  queueing behind the others in their host order. A scheduler that picks nodes without
  regard to the switches they hang from, as a busy production system's does after weeks
  of jobs ending out of order: the fragmentation seed 004 §4.3.1 blames for Tsubame's
  fat-tree losses ("very unfortunate job-to-node placements").
* ``random``: free nodes drawn uniformly, seeded by the trace's digest (the most
  fragmented bound).

A job larger than the system, or one that finds too few free nodes at its start (the
trace's machine was larger, or its times overlap), is left out and counted.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np

from t2hx.study import PLACEMENT_POLICIES
from t2hx.history.trace import Job, Trace

#: Seed 004 §4.2: "every 10 minutes".
INTERVAL_S = 600


@dataclass(frozen=True)
class Placed:
    id: str
    start: float
    end: float
    hosts: tuple[str, ...]


@dataclass
class Placement:
    jobs: list[Placed]
    left_out: dict[str, int]


class _FirstFit:
    """The lowest-numbered free nodes."""

    def __init__(self, size: int, seed: int) -> None:
        self.free = np.ones(size, dtype=bool)

    def take(self, n: int) -> np.ndarray:
        chosen = np.flatnonzero(self.free)[:n]
        self.free[chosen] = False
        return chosen

    def release(self, nodes: np.ndarray) -> None:
        self.free[nodes] = True

    def count(self) -> int:
        return int(self.free.sum())


class _LeastRecent:
    """The nodes free longest: a queue, released nodes join its end in host order."""

    def __init__(self, size: int, seed: int) -> None:
        self.queue: deque[int] = deque(range(size))

    def take(self, n: int) -> np.ndarray:
        return np.array([self.queue.popleft() for _ in range(n)], dtype=np.int64)

    def release(self, nodes: np.ndarray) -> None:
        self.queue.extend(int(i) for i in np.sort(nodes))

    def count(self) -> int:
        return len(self.queue)


class _Random(_FirstFit):
    """Free nodes drawn uniformly (seeded: the same trace places the same way)."""

    def __init__(self, size: int, seed: int) -> None:
        super().__init__(size, seed)
        self.rng = np.random.default_rng(seed)

    def take(self, n: int) -> np.ndarray:
        chosen = np.sort(self.rng.choice(np.flatnonzero(self.free), n, replace=False))
        self.free[chosen] = False
        return chosen


_POLICY: dict[str, type[_FirstFit] | type[_LeastRecent]] = {
    "first-fit": _FirstFit, "least-recent": _LeastRecent, "random": _Random}


def place(trace: Trace, hosts: list[str], policy: str = "first-fit") -> Placement:
    """Every job of ``trace`` on ``hosts`` by ``policy`` (see the module's docstring)."""
    left: dict[str, int] = {}
    if trace.format == "sacct":
        return Placement([Placed(j.id, j.start, j.end, j.hosts) for j in trace.jobs], left)
    if policy not in _POLICY:
        raise ValueError(f"unknown placement policy {policy!r} (one of {', '.join(PLACEMENT_POLICIES)})")
    nodes = _POLICY[policy](len(hosts), int(trace.sha256[:8] or "0", 16))
    ending: list[tuple[float, int, np.ndarray]] = []
    placed = []
    for n, job in enumerate(trace.jobs):
        while ending and ending[0][0] <= job.start:
            nodes.release(heapq.heappop(ending)[2])
        if not _fits(job, len(hosts), nodes.count(), left):
            continue
        chosen = nodes.take(job.nodes)
        heapq.heappush(ending, (job.end, n, chosen))
        placed.append(Placed(job.id, job.start, job.end, tuple(hosts[i] for i in chosen)))
    return Placement(placed, left)


def _fits(job: Job, size: int, free: int, left: dict[str, int]) -> bool:
    why = ("larger than the system" if job.nodes > size else
           "too few free nodes at its start" if free < job.nodes else None)
    if why:
        left[why] = left.get(why, 0) + 1
    return why is None


def sample_times(jobs: list[Placed], interval: float = INTERVAL_S,
                 window: tuple[float, float] | None = None) -> np.ndarray:
    """Sampling points: every ``interval`` from the first start (or ``window``'s start) up to
    the last end (or ``window``'s end)."""
    lo = min(j.start for j in jobs) if window is None else window[0]
    hi = max(j.end for j in jobs) if window is None else window[1]
    return np.arange(lo, hi, interval, dtype=float)


def running(jobs: list[Placed], times: np.ndarray) -> list[list[int]]:
    """For each time, the indices of ``jobs`` running then (start <= t < end)."""
    starts = np.array([j.start for j in jobs])
    ends = np.array([j.end for j in jobs])
    order = np.argsort(starts, kind="stable")
    out, active, k = [], set(), 0
    for t in times:
        while k < len(order) and starts[order[k]] <= t:
            active.add(int(order[k]))
            k += 1
        active = {i for i in active if ends[i] > t}
        out.append(sorted(active))
    return out
