"""Concurrent jobs on the packet engine: the fluid engine's :class:`~t2hx.flowsim.fluid.Job`
(steps of Comm and Compute, repeated) unrolled into one message graph for the packet
kernel, so jobs share buffers, credits and VLs as they would on the fabric.

Each Comm step is the packet engine's phase (t2hx/flowsim/packet.py: ``o + k·g`` starts,
rendezvous handshakes above the eager limit); it begins when the job's previous step has
ended plus the compute between them, and ends ``o`` after its last message reached the
receiver, as in the fluid engine. A step waits on one join (a message without links) of
the step before it, so the graph stays linear in the messages. ``count`` back-to-back
repetitions of a step's messages travel as one message of ``count`` x size bytes (the
fluid engine's fusion; the per-repetition overheads go into the step's end).

Unlike the fluid engines, the whole graph is built before the kernel runs, so a job is
unrolled for at most ``iterations`` iterations (its ``repeat`` when smaller): callers
that ask about a window choose it long enough (:func:`window_of` says where every job
was still running).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import packetk
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.fluid import Comm, Compute, Job
from t2hx.flowsim.packet import PacketNetwork

#: Kernel messages one run may hold (memory: about 100 bytes each with their routes).
MAX_MESSAGES = 20_000_000


@dataclass
class _Graph:
    """The message graph being built: per message its bytes, route, VL, dependencies and
    delay, in chunks."""
    chunks: list[packetk.Messages] = field(default_factory=list)
    deps: list[np.ndarray] = field(default_factory=list)        # one array per message chunk
    counts: list[np.ndarray] = field(default_factory=list)
    size: int = 0

    def add(self, msgs: packetk.Messages, counts: np.ndarray, deps: np.ndarray) -> int:
        """Append messages (their dependencies already in global indices); their first
        index."""
        base = self.size
        self.chunks.append(msgs)
        self.counts.append(counts)
        self.deps.append(deps)
        self.size += len(msgs.bytes)
        if self.size > MAX_MESSAGES:
            raise WorkloadError(f"the packet engine's job graph passed {MAX_MESSAGES} "
                                "messages", field="iterations",
                                fix="fewer iterations or a shorter window, or engine flow")
        return base

    def join(self, deps: np.ndarray, delay: float) -> int:
        """A message without links, delivered ``delay`` after the last of ``deps``."""
        empty = packetk.Messages(np.zeros(1, np.int64), np.zeros(2, np.int64),
                                 np.zeros(0, np.int32), np.zeros(1, np.int8),
                                 np.zeros(0, np.int32), np.array([delay]))
        return self.add(empty, np.array([len(deps)]), np.asarray(deps, np.int32))

    def messages(self) -> packetk.Messages:
        c = self.chunks
        off = np.zeros(self.size + 1, np.int64)
        np.cumsum(np.concatenate([np.diff(m.route_off) for m in c]), out=off[1:])
        dep_off = np.zeros(self.size + 1, np.int64)
        np.cumsum(np.concatenate(self.counts), out=dep_off[1:])
        return packetk.Messages(np.concatenate([m.bytes for m in c]), off,
                                np.concatenate([m.route for m in c]),
                                np.concatenate([m.vl for m in c]),
                                np.concatenate(self.deps).astype(np.int32),
                                np.concatenate([m.delay for m in c]), dep_off)


@dataclass
class _Step:
    """One Comm step's kernel messages (indices local to the step) and its data messages."""
    msgs: packetk.Messages
    data: np.ndarray
    repeats: int


def _comm(pnet: PacketNetwork, step: Comm) -> _Step:
    count = max(int(step.count), 1)
    ph = Phase.of(step.src, step.dst, np.asarray(step.size, np.float64) * count)
    msgs, data, _ = pnet.messages(ph)
    return _Step(msgs, data, count)


def run_jobs_packet(pnet: PacketNetwork, jobs: list[Job], iterations: int,
                    until: float = np.inf) -> list[Job]:
    """All ``jobs`` at once on the packet engine, each for ``min(repeat, iterations)``
    iterations; fills every job's ``ends`` (iteration end times up to ``until``)."""
    g = _Graph()
    o = pnet.loggp.overhead
    ends: list[list[int]] = []
    for job in jobs:
        steps = [_comm(pnet, s) if isinstance(s, Comm) else s for s in job.steps]
        mine: list[int] = []
        prev = g.join(np.zeros(0, np.int32), job.start)
        for _ in range(min(job.repeat, iterations)):
            wait = 0.0
            for step in steps:
                if isinstance(step, Compute):
                    wait += step.seconds
                    continue
                if len(step.msgs.bytes) == 0:
                    continue
                gate = g.join(np.array([prev]), wait)
                prev = _add_step(g, step, gate, o)
                wait = 0.0
            prev = g.join(np.array([prev]), wait)
            mine.append(prev)
        ends.append(mine)
    _, end, counts = packetk.simulate(pnet.links, g.messages(), pnet.arb)
    for name, value in counts.items():
        pnet.stats[name] = pnet.stats.get(name, 0) + value
    for job, mine in zip(jobs, ends):
        job.ends = [float(t) for t in end[mine] if t <= until]
    return jobs


def _add_step(g: _Graph, step: _Step, gate: int, o: float) -> int:
    """The step's messages after ``gate`` (their own handshake dependencies kept), then the
    join that ends the step: ``o`` (and the fused repetitions' overheads) after the last
    data message."""
    m = step.msgs
    local = m.dep
    deps = np.where(local >= 0, local + g.size, gate).astype(np.int32)
    base = g.add(m, np.ones(len(local), np.int64), deps)
    return g.join(base + step.data, o * (2 * step.repeats - 1))


def window_of(jobs: list[Job]) -> float:
    """The time every job was still running: the earliest last iteration end. Counting only
    iterations before it compares jobs that shared the fabric the whole time."""
    lasts = [job.ends[-1] for job in jobs if job.ends]
    if len(lasts) < len(jobs):
        raise WorkloadError("a job finished no iteration", field="iterations",
                            fix="unroll more iterations")
    return min(lasts)


def mean_step(job: Job, window: float) -> float:
    """Mean seconds per iteration of the iterations that ended by ``window``."""
    done = [e for e in job.ends if e <= window * (1 + 1e-12)]
    return (done[-1] - job.start) / len(done) if done else np.nan
