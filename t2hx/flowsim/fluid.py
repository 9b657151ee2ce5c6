"""Event-driven fluid mode: flows start and end at different times; rates are re-solved
(max-min, :mod:`t2hx.flowsim.maxmin`) at every arrival and departure.

Two entry points:

* :func:`simulate_flows` — a fixed set of flows with start times and sizes; returns each
  flow's finish time. This is what SimGrid validates (same fluid max-min semantics).
* :func:`run_jobs` — concurrent jobs (capacity runs, inter-job interference). A job is a
  list of steps repeated ``repeat`` times: ``Compute(seconds)`` or a ``Comm`` phase (a set
  of messages that start together; the step ends when its last message has arrived, i.e.
  its last byte has drained plus that message's latency, 2o + hops·L). Jobs share the links;
  each job's steps run in order. Returns every job's iteration end times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from t2hx.flowsim.maxmin import maxmin_rates
from t2hx.flowsim.network import Network

EPS_BYTES = 1e-6


def simulate_flows(paths: np.ndarray, capacity: np.ndarray, size: np.ndarray,
                   start: np.ndarray | None = None) -> np.ndarray:
    """Finish time of every flow (seconds, same time base as ``start``)."""
    size = np.asarray(size, dtype=np.float64)
    n = len(size)
    start = np.zeros(n) if start is None else np.asarray(start, dtype=np.float64)
    finish = np.full(n, np.nan)
    order = np.argsort(start, kind="stable")
    remaining = size.copy()
    active = np.zeros(0, dtype=np.int64)
    nxt = 0
    now = 0.0
    while nxt < n or active.size:
        if active.size == 0:
            now = max(now, start[order[nxt]])
        while nxt < n and start[order[nxt]] <= now:
            active = np.append(active, order[nxt])
            nxt += 1
        done = remaining[active] <= EPS_BYTES
        finish[active[done]] = now
        active = active[~done]
        if active.size == 0:
            continue
        rate = maxmin_rates(paths[active], capacity)
        left = remaining[active] / rate
        dt = float(left.min())
        if nxt < n:
            dt = min(dt, start[order[nxt]] - now)
        remaining[active] -= rate * dt
        # Flows that end at this event are snapped to zero (division noise).
        remaining[active[left <= dt * (1 + 1e-9) + 1e-15]] = 0.0
        now += dt
    return finish


@dataclass
class Compute:
    seconds: float


@dataclass
class Comm:
    """Messages that start together; the step ends when the last has arrived. ``count`` > 1
    stands for that many back-to-back repetitions of the same messages (sizes are per
    repetition): one flow of ``count`` x size bytes per message and ``count`` latencies.
    In the fluid model that is exact while the step's contention does not change (max-min
    rates do not depend on sizes); it gives up only the idle gaps between repetitions."""
    src: np.ndarray
    dst: np.ndarray
    size: int | np.ndarray          # one for all messages, or one per message
    count: int = 1


@dataclass
class Job:
    name: str
    steps: list
    repeat: int = 1
    start: float = 0.0
    ends: list[float] = field(default_factory=list)     # iteration end times


def phase_steps(ranks: np.ndarray, phases: list) -> list:
    """Bulk phases (t2hx.flowsim.bulk.Phase) on local ranks 0..n-1 as fluid steps on the
    job's global ``ranks``: a Comm for the messages, then a Compute for the phase's compute."""
    steps: list = []
    for ph in phases:
        if ph.src.size:
            steps.append(Comm(ranks[ph.src], ranks[ph.dst], ph.size))
        if ph.compute > 0:
            steps.append(Compute(ph.compute))
    return steps


#: Open MPI's openib eager limit: below it a message is one short transfer that cannot
#: build up a share of a link worth re-solving the whole fabric for.
SMALL_BYTES = 12 * 1024


def run_jobs(net: Network, jobs: list[Job], until: float = np.inf,
             small_bytes: int = SMALL_BYTES) -> list[Job]:
    """The exact (reference) engine: simulate concurrent jobs until all finish or ``until``;
    fills ``job.ends``. :mod:`t2hx.flowsim.fluid_fast` is the faster engine checked
    against it.

    Messages up to ``small_bytes`` do not enter the fluid sharing: they take their
    latency plus size / link rate (an event-count saving: tiny allreduces and barriers
    would otherwise re-solve max-min at every arrival and departure). ``small_bytes=0``
    makes every message fluid."""
    state = State(net, jobs)
    state.small = small_bytes
    state.loop(until)
    return jobs


class State:
    """The event loop's state: jobs in flight, their flows and plans (the fast engine,
    fluid_fast.py, reuses its planning)."""

    def __init__(self, net: Network, jobs: list[Job]) -> None:
        self.net, self.jobs = net, jobs
        self.now = 0.0
        self.step = [0] * len(jobs)
        self.iteration = [0] * len(jobs)
        self.timer = np.full(len(jobs), np.inf)     # when the job's current wait ends
        self.outstanding = [0] * len(jobs)
        self.wait_after = np.zeros(len(jobs))       # latency tail of the current Comm
        self.paths = np.zeros((0, 1), dtype=np.int32)
        self.remaining = np.zeros(0)
        self.owner = np.zeros(0, dtype=np.int64)
        self.tail = np.zeros(0)
        self.fid = np.zeros(0, dtype=np.int64)     # flow ids: (plan, message) numbered once
        self.next_fid = 0
        self.small = SMALL_BYTES
        self.plans: dict[int, Plan] = {}
        self.steps_seen: list[Comm] = []
        for j, job in enumerate(jobs):
            self.timer[j] = job.start
            self.step[j] = -1                       # "before the first step"

    def loop(self, until: float) -> None:
        rate = np.zeros(0)
        dirty = True
        while True:
            if dirty and len(self.remaining):
                rate = self.rates()
            dirty = False
            t_flow = float(np.min(self.remaining / rate)) if len(self.remaining) else np.inf
            t_timer = float(self.timer.min() - self.now) if len(self.timer) else np.inf
            dt = min(t_flow, t_timer)
            if not np.isfinite(dt) or self.now + dt > until:
                if np.isfinite(until) and len(self.remaining):
                    self.remaining -= rate * max(0.0, until - self.now)
                self.now = min(until, self.now + dt) if np.isfinite(dt) else self.now
                return
            done = np.zeros(len(self.remaining), dtype=bool)
            if len(self.remaining):
                done = self.remaining / rate <= dt * (1 + 1e-9) + 1e-15
                self.remaining -= rate * dt
            self.now += dt
            if done.any():
                dirty = True
                for j, tail in zip(self.owner[done], self.tail[done]):
                    self.outstanding[j] -= 1
                    self.wait_after[j] = max(self.wait_after[j], tail)
                    if self.outstanding[j] == 0:
                        self.timer[j] = self.now + self.wait_after[j]
                keep = ~done
                self.paths, self.remaining = self.paths[keep], self.remaining[keep]
                self.owner, self.tail = self.owner[keep], self.tail[keep]
                self.fid = self.fid[keep]
            for j in np.flatnonzero(self.timer <= self.now + 1e-15):
                dirty |= self._advance(int(j))

    def _advance(self, j: int) -> bool:
        """Job j's wait is over: start its next step. True if flows were added."""
        job = self.jobs[j]
        self.timer[j] = np.inf
        self.step[j] += 1
        if self.step[j] >= len(job.steps):
            job.ends.append(self.now)
            self.iteration[j] += 1
            if self.iteration[j] >= job.repeat:
                return False
            self.step[j] = 0
        step = job.steps[self.step[j]]
        if isinstance(step, Compute):
            self.timer[j] = self.now + step.seconds
            return False
        plan = self._plan(step)
        if plan.paths is None:     # only short messages: latency + size at the link rate
            self.timer[j] = self.now + plan.alone
            return False
        # Short messages beside long ones end long before them; the step ends with the
        # last long message's last byte plus its latency.
        self.wait_after[j] = 0.0
        self.outstanding[j] = len(plan.size)
        width = max(self.paths.shape[1], plan.paths.shape[1])
        self.paths = np.vstack([_pad(self.paths, width), _pad(plan.paths, width)])
        self.remaining = np.concatenate([self.remaining, plan.size])
        self.owner = np.concatenate([self.owner, np.full(len(plan.size), j)])
        self.tail = np.concatenate([self.tail, plan.latency])
        self.fid = np.concatenate([self.fid, plan.ids])
        return True

    def rates(self) -> np.ndarray:
        """Max-min rates of the flows in flight (re-solved from scratch here)."""
        return maxmin_rates(self.paths, self.net.capacity)

    def _plan(self, step: Comm) -> Plan:
        """The routed messages of a Comm step, computed once: a job repeats its steps
        thousands of times in a capacity window."""
        plan = self.plans.get(id(step))
        if plan is not None:
            return plan
        src, dst = np.asarray(step.src), np.asarray(step.dst)
        size = np.broadcast_to(np.asarray(step.size, dtype=np.float64), src.shape)
        keep = src != dst
        src, dst, size = src[keep], dst[keep], size[keep]
        # With several rails a message's parts are separate flows; the step waits for all.
        _, p, hops, size = self.net.flows(src, dst, size.astype(np.int64))
        size = np.asarray(size, dtype=np.float64)
        lat = self.net.loggp.latency(hops.astype(np.float64))
        # Eager or rendezvous is decided per message, before the repetitions are fused.
        moving = size > self.small
        size, lat = size * step.count, lat * step.count
        if moving.any():
            ids = np.arange(self.next_fid, self.next_fid + int(moving.sum()))
            self.next_fid += len(ids)
            plan = Plan(p[moving], size[moving].copy(), lat[moving], 0.0, ids)
        else:
            alone = lat + size / self.net.capacity.max()
            plan = Plan(None, size, lat, float(alone.max()) if alone.size else 0.0,
                         np.zeros(0, dtype=np.int64))
        self.plans[id(step)] = plan
        self.steps_seen.append(step)        # keeps id(step) unique while cached
        return plan


@dataclass
class Plan:
    """One communication step's messages, ready for the event loop."""
    paths: np.ndarray | None     # long (fluid) messages' paths; None: only short ones
    size: np.ndarray
    latency: np.ndarray
    alone: float                 # step time when every message is short
    ids: np.ndarray              # flow ids of the long messages


def _pad(p: np.ndarray, width: int) -> np.ndarray:
    if p.shape[1] == width:
        return p
    return np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=-1)
