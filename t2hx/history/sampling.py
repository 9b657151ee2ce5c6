"""A trace's jobs on a system's nodes, and the running job set every ``interval`` seconds
(seed 004 §4.2 samples every 10 minutes).

Placement: a sacct trace names its nodes and keeps them. An SWF trace has only node counts,
so its jobs are replayed in start order onto the lowest-numbered free nodes of the system's
host order (first fit, what Slurm's select/linear does without a topology plugin); hosts
are in leaf-switch order in every t2hx conf, so a job packs onto as few leaves as the free
nodes allow. A job larger than the system, or one that finds too few free nodes at its
start (the trace's machine was larger, or its times overlap), is left out and counted
(docs/history.md).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

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


def place(trace: Trace, hosts: list[str]) -> Placement:
    """Every job of ``trace`` on ``hosts`` (see the module's docstring)."""
    left: dict[str, int] = {}
    if trace.format == "sacct":
        return Placement([Placed(j.id, j.start, j.end, j.hosts) for j in trace.jobs], left)
    free = np.ones(len(hosts), dtype=bool)
    ending: list[tuple[float, int, np.ndarray]] = []
    placed = []
    for n, job in enumerate(trace.jobs):
        while ending and ending[0][0] <= job.start:
            free[heapq.heappop(ending)[2]] = True
        chosen = _first_fit(free, job, len(hosts), left)
        if chosen is None:
            continue
        free[chosen] = False
        heapq.heappush(ending, (job.end, n, chosen))
        placed.append(Placed(job.id, job.start, job.end, tuple(hosts[i] for i in chosen)))
    return Placement(placed, left)


def _first_fit(free: np.ndarray, job: Job, size: int, left: dict[str, int]) -> np.ndarray | None:
    if job.nodes > size:
        left["larger than the system"] = left.get("larger than the system", 0) + 1
        return None
    idle = np.flatnonzero(free)
    if len(idle) < job.nodes:
        left["too few free nodes at its start"] = \
            left.get("too few free nodes at its start", 0) + 1
        return None
    return idle[:job.nodes]


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
