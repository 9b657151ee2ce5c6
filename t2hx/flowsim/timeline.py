"""Per-rank timelines of one MPI call under Open MPI's point-to-point protocol.

A bulk-synchronous phase list (t2hx/flowsim/bulk.py) ends every rank of a phase with the
phase's slowest message, and a rank that sits out later phases ends early whatever its
partners still do. What IMB times is each rank's own call: a rank returns when its own sends
and receives have completed, and under the protocol those wait on the partners. A
:class:`Program` states one call as the point-to-point operations of every rank and the
order in which each rank posts them; :func:`compile` turns it into wire messages with
dependencies under ob1's protocol (docs/modelling.md#per-rank-timelines):

* **eager** (``size <= eager``, openib's ``btl_openib_eager_limit``): the data leaves once
  the sender is ready; the receive completes when the data has arrived *and* the receive is
  posted (an early message waits as unexpected).
* **rendezvous** (larger): a header-only request (RTS) leaves once the sender is ready; the
  receiver answers (CTS) once the RTS has arrived and the matching receive is posted; the
  data follows the answer. Both sides complete with the data's delivery.

Both network engines time the wire messages: the packet engine in its kernel (a message
starts after all its dependencies, then its delay), the flow model in :func:`fluid_times`
(max-min rates re-solved whenever a data flow starts or drains).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from t2hx.flowsim.maxmin import maxmin_rates

#: Wire message kinds.
DATA, RTS, CTS = 0, 1, 2


@dataclass
class Program:
    """One call on ranks 0..n-1: message k goes ``src[k] → dst[k]`` with ``size[k]`` bytes.

    ``send_after[k]``: messages the sender must have completed (as their sender or their
    receiver) before it posts send k; ``recv_after[k]``: likewise for the receiver before it
    posts receive k. Blocking calls in program order are exactly these lists. ``compute[k]``:
    seconds the sender works between being ready and posting send k (a reduction of what it
    received, a copy)."""
    n: int
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    send_after: list[list[int]] = field(default_factory=list)
    recv_after: list[list[int]] = field(default_factory=list)
    compute: list[float] = field(default_factory=list)

    def add(self, src: int, dst: int, size: int, send_after: list[int] | None = None,
            recv_after: list[int] | None = None, compute: float = 0.0) -> int:
        """Append a message; its index."""
        for j in (send_after or []) + (recv_after or []):
            if not 0 <= j < len(self.src):
                raise ValueError(f"message {len(self.src)} waits on unknown message {j}")
        self.src.append(src)
        self.dst.append(dst)
        self.size.append(int(size))
        self.send_after.append(list(send_after or []))
        self.recv_after.append(list(recv_after or []))
        self.compute.append(float(compute))
        return len(self.src) - 1


@dataclass
class Wire:
    """What the engines simulate: messages with all their dependencies (``dep[off[i]:
    off[i+1]]`` must be delivered before message i starts), and for every rank the wire
    messages whose delivery ends its call. ``compute[i]``: seconds between the last
    dependency's delivery (or 0) and message i's start, on top of the engine's overheads."""
    src: np.ndarray
    dst: np.ndarray
    size: np.ndarray
    kind: np.ndarray
    lid_size: np.ndarray        # the program message's size (PARX picks paths by it)
    dep_off: np.ndarray
    dep: np.ndarray
    rank_done: list[list[int]]
    compute: np.ndarray


def _done_at(prog: Program, j: int, rank: int, sender_done: list[frozenset[int]],
             receiver_done: list[frozenset[int]]) -> frozenset[int]:
    if rank == prog.src[j]:
        return sender_done[j]
    if rank == prog.dst[j]:
        return receiver_done[j]
    raise ValueError(f"rank {rank} waits on message {j}, which is not its own")


def compile(prog: Program, eager: int) -> Wire:
    """The program's wire messages under the eager/rendezvous protocol (module docstring)."""
    src: list[int] = []
    dst: list[int] = []
    size: list[int] = []
    kind: list[int] = []
    lid: list[int] = []
    deps: list[frozenset[int]] = []
    work: list[float] = []
    sender_done: list[frozenset[int]] = []
    receiver_done: list[frozenset[int]] = []

    def emit(s: int, d: int, nbytes: int, k: int, ref: int, after: frozenset[int],
             busy: float = 0.0) -> int:
        src.append(s)
        dst.append(d)
        size.append(nbytes)
        kind.append(k)
        lid.append(ref)
        deps.append(after)
        work.append(busy)
        return len(src) - 1

    for k in range(len(prog.src)):
        s, d, m = prog.src[k], prog.dst[k], prog.size[k]
        ready = frozenset().union(*(_done_at(prog, j, s, sender_done, receiver_done)
                                    for j in prog.send_after[k]))
        posted = frozenset().union(*(_done_at(prog, j, d, sender_done, receiver_done)
                                     for j in prog.recv_after[k]))
        busy = prog.compute[k]
        if m <= eager:
            data = emit(s, d, m, DATA, m, ready, busy)
            sender_done.append(frozenset({data}))
            receiver_done.append(posted | {data})
        else:
            rts = emit(s, d, 0, RTS, m, ready, busy)
            cts = emit(d, s, 0, CTS, m, posted | {rts})
            data = emit(s, d, m, DATA, m, frozenset({cts}))
            sender_done.append(frozenset({data}))
            receiver_done.append(frozenset({data}))
    rank_done: list[set[int]] = [set() for _ in range(prog.n)]
    for k in range(len(prog.src)):
        rank_done[prog.src[k]] |= sender_done[k]
        rank_done[prog.dst[k]] |= receiver_done[k]
    off = np.zeros(len(src) + 1, np.int64)
    np.cumsum([len(x) for x in deps], out=off[1:])
    flat = np.fromiter((j for x in deps for j in sorted(x)), np.int32, int(off[-1]))
    return Wire(np.array(src, np.int64), np.array(dst, np.int64), np.array(size, np.int64),
                np.array(kind, np.int8), np.array(lid, np.int64), off, flat,
                [sorted(x) for x in rank_done], np.array(work, np.float64))


def rank_ends(wire: Wire, delivered: np.ndarray, tail: float = 0.0) -> np.ndarray:
    """Each rank's call end: its last own message's delivery (+ ``tail``, the receive
    overhead the packet engine adds after delivery); 0 for a rank with nothing to do."""
    return np.array([float(delivered[d].max()) + tail if d else 0.0 for d in wire.rank_done])


def fluid_times(paths: np.ndarray, capacity: np.ndarray, size: np.ndarray,
                latency: np.ndarray, dep_off: np.ndarray, dep: np.ndarray,
                compute: np.ndarray | None = None) -> np.ndarray:
    """Delivery time of every wire message in the flow model: a message starts ``compute``
    after its last dependency is delivered (or after 0); its bytes drain at the max-min rate among the messages
    draining at the same time (re-solved when one starts or drains), and it is delivered
    ``latency`` (2o + hops·L, as in bulk.py) after it started plus its drain time."""
    n = len(size)
    waiting = np.diff(dep_off).astype(np.int64)
    users: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in dep[dep_off[i]:dep_off[i + 1]]:
            users[int(j)].append(i)
    delivered = np.full(n, np.nan)
    busy = np.zeros(n) if compute is None else np.asarray(compute, np.float64)
    events: list[tuple[float, int, int]] = []     # (time, 0 start | 1 delivery, message)
    for first in np.flatnonzero(waiting == 0).tolist():
        heapq.heappush(events, (float(busy[first]), 0, first))
    remaining = size.astype(np.float64).copy()
    active: list[int] = []
    rate = np.zeros(0)
    now = 0.0
    while events or active:
        changed = False
        drain = now + float((remaining[active] / rate).min()) if active else np.inf
        if events and events[0][0] <= drain:
            t, what, i = heapq.heappop(events)
            _advance(remaining, active, rate, t - now)
            now = t
            if what == 1:
                delivered[i] = t
                for u in users[i]:
                    waiting[u] -= 1
                    if waiting[u] == 0:
                        heapq.heappush(events, (t + float(busy[u]), 0, u))
            elif remaining[i] <= 0:
                heapq.heappush(events, (t + latency[i], 1, i))
            else:
                active.append(i)
                changed = True
        else:
            _advance(remaining, active, rate, drain - now)
            now = drain
            first = active[int(np.argmin(remaining[active]))]
            done = {i for i in active if i == first or remaining[i] <= 1e-9 * size[i]}
            for i in done:
                remaining[i] = 0.0
                heapq.heappush(events, (now + latency[i], 1, i))
            active = [i for i in active if i not in done]
            changed = True
        if changed:
            rate = maxmin_rates(paths[active], capacity) if active else np.zeros(0)
    return delivered


def _advance(remaining: np.ndarray, active: list[int], rate: np.ndarray, dt: float) -> None:
    if active and dt > 0:
        remaining[active] -= rate * dt


def eager_limit(system: object) -> int:
    """The protocol switch of the conf's MPI (``model.packet.eager_bytes``, openib's
    ``btl_openib_eager_limit``): both engines use the same threshold."""
    model = getattr(system, "model", None) or {}
    return int((model.get("packet") or {}).get("eager_bytes", 12288))
