"""Per-rank timelines of one MPI call under Open MPI's point-to-point protocol.

A bulk-synchronous phase list (t2hx/flowsim/bulk.py) ends every rank of a phase with the
phase's slowest message, and a rank that sits out later phases ends early whatever its
partners still do. What IMB times is each rank's own call: a rank returns when its own sends
and receives have completed, and under the protocol those wait on the partners. A
:class:`Program` states one call as the point-to-point operations of every rank and the
order in which each rank posts them; :func:`compile` turns it into wire messages with
dependencies under ob1's protocol (docs/modelling.md#per-rank-timelines):

* **eager** (message size ``<= eager``, openib's ``btl_openib_eager_limit``): the data
  leaves once the sender is ready; the receive completes when the data has arrived *and*
  the receive is posted (an early message waits as unexpected).
* **rendezvous** (larger): a header-only request (RTS) leaves once the sender is ready; the
  receiver answers (CTS) once the RTS has arrived and the matching receive is posted; the
  data follows the answer. Both sides complete with the data's delivery.
* **synchronous** (``MPI_Ssend`` semantics, ``sync``) at an eager size: ob1 sends the data
  with a rendezvous header (``mca_pml_ob1_send_request_start_rndv``); the receiver
  completes once it matched it, the sender once the receiver's answer arrived.

A rank's local work (a reduction, a copy) is a program entry of its own (:meth:`Program.work`)
or the ``compute`` of the send that follows it. On the wire such work, and the completion
of a receive that waits for both its posting and its data, is a *local* message (source =
destination, no bytes, no links): it completes ``compute`` after the last of its
dependencies, and the engines put it on no link.

Both network engines time the wire messages: the packet engine in its kernel (a message
starts after all its dependencies, then its delay; a local message is a join), the flow
model in :func:`fluid_times` (max-min rates re-solved, per connected component of the
flows in flight, whenever a data flow starts or drains).
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from t2hx.flowsim.maxmin import RTOL, maxmin_rates

#: Wire message kinds. Every program message has exactly one DATA wire message, in program
#: order (a local work entry's is its local message); JOIN: a receive's completion.
DATA, RTS, CTS, JOIN = 0, 1, 2, 3

#: Components of at most this many flows are re-solved in Python (the same arithmetic as
#: maxmin_rates, without numpy's per-call cost).
SMALL_COMPONENT = 12
#: Components whose max-min rates are kept (the same paths recur: segments, steps).
SOLVED_KEPT = 1 << 16


@dataclass
class Program:
    """One call on ranks 0..n-1: message k goes ``src[k] → dst[k]`` with ``size[k]`` bytes.

    ``send_after[k]``: messages the sender must have completed (as their sender or their
    receiver) before it posts send k; ``recv_after[k]``: likewise for the receiver before it
    posts receive k. Blocking calls in program order are exactly these lists. ``compute[k]``:
    seconds the sender works between being ready and posting send k (a reduction of what it
    received, a copy). ``sync[k]``: a synchronous send. An entry with ``src == dst`` is a
    rank's local work (:meth:`work`)."""
    n: int
    src: list[int] = field(default_factory=list)
    dst: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    send_after: list[list[int]] = field(default_factory=list)
    recv_after: list[list[int]] = field(default_factory=list)
    compute: list[float] = field(default_factory=list)
    sync: list[bool] = field(default_factory=list)

    def add(self, src: int, dst: int, size: int, send_after: list[int] | None = None,
            recv_after: list[int] | None = None, compute: float = 0.0,
            sync: bool = False) -> int:
        """Append a message; its index. ``src == dst``: local work of ``compute`` seconds
        after ``send_after`` (see :meth:`work`). What it waits on is checked by
        :func:`compile`, for all messages at once (a call adds millions)."""
        k = len(self.src)
        self.src.append(src)
        self.dst.append(dst)
        self.size.append(int(size))
        self.send_after.append(list(send_after or ()))
        self.recv_after.append(list(recv_after or ()))
        self.compute.append(float(compute))
        self.sync.append(bool(sync))
        return k

    def extend(self, src: list[int], dst: list[int], size: list[int],
               send_after: list[list[int]], recv_after: list[list[int]] | None = None,
               compute: list[float] | None = None) -> range:
        """:meth:`add` for many messages (no synchronous send); their indices. The lists
        of what they wait on are kept, not copied: the caller does not change them."""
        k, m = len(self.src), len(src)
        self.src += src
        self.dst += dst
        self.size += [int(x) for x in size]
        self.send_after += send_after
        self.recv_after += recv_after if recv_after is not None else [[] for _ in range(m)]
        self.compute += [0.0] * m if compute is None else [float(x) for x in compute]
        self.sync += [False] * m
        return range(k, k + m)

    def work(self, rank: int, seconds: float, after: list[int] | None = None) -> int:
        """Local work of ``rank``: ``seconds`` once it completed ``after`` (a reduction at
        the end of its call, or before it posts a receive). Other messages wait on it like
        on any of the rank's messages."""
        return self.add(rank, rank, 0, send_after=after, compute=seconds)


@dataclass
class Wire:
    """What the engines simulate: messages with all their dependencies (``dep[off[i]:
    off[i+1]]`` must be delivered before message i starts), and for every rank the wire
    messages whose delivery ends its operations (``done_rank[j]`` ends with
    ``done_wire[j]``). ``compute[i]``: seconds between the last dependency's delivery (or
    0) and message i's start, on top of the engine's overheads. ``local``: source =
    destination, no bytes: on no link, done ``compute`` after its dependencies."""
    src: np.ndarray
    dst: np.ndarray
    size: np.ndarray
    kind: np.ndarray
    lid_size: np.ndarray        # the program message's size (PARX picks paths by it)
    dep_off: np.ndarray
    dep: np.ndarray
    done_rank: np.ndarray
    done_wire: np.ndarray
    compute: np.ndarray
    n: int = 0

    @property
    def local(self) -> np.ndarray:
        return self.src == self.dst

    @property
    def rank_done(self) -> list[list[int]]:
        """Per rank, the sorted wire messages whose delivery ends one of its operations."""
        out: list[set[int]] = [set() for _ in range(self.n)]
        for r, w in zip(self.done_rank.tolist(), self.done_wire.tolist()):
            out[r].add(w)
        return [sorted(x) for x in out]


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    off = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=off[1:])
    flat = np.fromiter(itertools.chain.from_iterable(lists), np.int64, int(off[-1]))
    return off, flat


def compile(prog: Program, eager: int) -> Wire:
    """The program's wire messages under the eager/rendezvous protocol (module docstring).

    Every operation's completion is one wire message (a receive that waits for its posting
    and its data: a join of both), so the dependencies of message k are the completions of
    its ``send_after`` / ``recv_after`` entries, gathered in one pass over flat arrays."""
    m = len(prog.src)
    src = np.asarray(prog.src, np.int64)
    dst = np.asarray(prog.dst, np.int64)
    size = np.asarray(prog.size, np.int64)
    work = src == dst
    handshake = ~work & ((size > eager) | np.asarray(prog.sync, bool))
    inline = handshake & (size <= eager)            # synchronous at an eager size
    s_off, s_ref = _csr(prog.send_after)
    r_off, r_ref = _csr(prog.recv_after)
    _check(src, work, size, s_off, s_ref, r_off, r_ref)
    posted = np.diff(r_off) > 0
    join = (~handshake & ~work & posted) | (inline & posted)
    count = np.where(handshake & ~inline, 3, 1 + handshake + join)
    base = np.zeros(m, np.int64)
    np.cumsum(count[:-1], out=base[1:])
    total = int(count.sum())
    # completion of each program message for its sender and for its receiver
    sender_done = np.where(inline, base + 1, np.where(handshake, base + 2, base))
    receiver_done = np.where(join, base + 1 + inline, np.where(handshake & ~inline, base + 2,
                                                                 base))
    ready = _done_of(s_ref, np.repeat(src, np.diff(s_off)), src, dst, sender_done,
                     receiver_done)
    waits = _done_of(r_ref, np.repeat(dst, np.diff(r_off)), src, dst, sender_done,
                     receiver_done)
    # wire message fields: the first of each program message, then the handshake's
    # answer (CTS) and data, or the receive's join
    w_src = np.repeat(src, count)
    w_dst = np.repeat(dst, count)
    w_kind = np.full(total, DATA, np.int8)
    w_size = np.zeros(total, np.int64)
    w_comp = np.zeros(total)
    w_lid = np.repeat(size, count)
    w_size[base] = np.where(handshake & ~inline, 0, size)
    w_kind[base] = np.where(handshake & ~inline, RTS, DATA)
    w_comp[base] = prog.compute
    hs = np.flatnonzero(handshake)
    w_kind[base[hs] + 1] = CTS
    w_src[base[hs] + 1], w_dst[base[hs] + 1] = dst[hs], src[hs]
    full = np.flatnonzero(handshake & ~inline)
    w_size[base[full] + 2] = size[full]
    j = np.flatnonzero(join)
    at = base[j] + 1 + inline[j]
    w_kind[at] = JOIN
    w_src[at] = w_dst[at] = dst[j]
    # dependencies as (wire message, dependency) pairs
    first = np.repeat(base, np.diff(s_off))
    rows = [first]
    vals = [ready]
    answer_of = np.repeat(base + 1, np.diff(r_off))
    has_answer = np.repeat(handshake, np.diff(r_off))
    rows.append(answer_of[has_answer])
    vals.append(waits[has_answer])
    join_at = np.repeat(base + 1 + inline, np.diff(r_off))
    has_join = np.repeat(join, np.diff(r_off))
    rows.append(join_at[has_join])
    vals.append(waits[has_join])
    rows += [base[hs] + 1, base[full] + 2, at]
    vals += [base[hs], base[full] + 1, base[j]]
    w_off, w_dep = _grouped(np.concatenate(rows), np.concatenate(vals), total)
    ops = np.flatnonzero(~work)
    done_rank = np.concatenate([src, dst[ops]])
    done_wire = np.concatenate([sender_done, receiver_done[ops]])
    return Wire(w_src, w_dst, w_size, w_kind, w_lid, w_off, w_dep, done_rank, done_wire,
                w_comp, prog.n)


def _check(src: np.ndarray, work: np.ndarray, size: np.ndarray, s_off: np.ndarray, s_ref: np.ndarray,
           r_off: np.ndarray, r_ref: np.ndarray) -> None:
    """What :meth:`Program.add` would refuse, for the first message that has it: a wait on
    a message not added before it, or a message to its own rank that carries data or
    waits for a receive."""
    m = len(work)
    owner_s = np.repeat(np.arange(m), np.diff(s_off))
    owner_r = np.repeat(np.arange(m), np.diff(r_off))
    bad_s = (s_ref < 0) | (s_ref >= owner_s)
    bad_r = (r_ref < 0) | (r_ref >= owner_r)
    selfish = work & ((size != 0) | (np.diff(r_off) > 0))
    firsts = [int(owner_s[bad_s][0]) if bad_s.any() else m,
              int(owner_r[bad_r][0]) if bad_r.any() else m,
              int(np.flatnonzero(selfish)[0]) if selfish.any() else m]
    k = min(firsts)
    if k == m:
        return
    if firsts[2] < min(firsts[:2]):
        raise ValueError(f"message {k} from rank {int(src[k])} to itself carries data: a "
                         "rank's own data is a local copy, use work()")
    refs = np.concatenate([s_ref[owner_s == k], r_ref[owner_r == k]])
    bad = int(refs[(refs < 0) | (refs >= k)][0])
    raise ValueError(f"message {k} waits on unknown message {bad}")


def _done_of(ref: np.ndarray, rank: np.ndarray, src: np.ndarray, dst: np.ndarray,
             sender_done: np.ndarray, receiver_done: np.ndarray) -> np.ndarray:
    """The wire message completing program message ``ref[i]`` for ``rank[i]``."""
    as_sender = src[ref] == rank
    foreign = ~as_sender & (dst[ref] != rank)
    if foreign.any():
        i = int(np.flatnonzero(foreign)[0])
        raise ValueError(f"rank {int(rank[i])} waits on message {int(ref[i])}, which is not "
                         "its own")
    return np.where(as_sender, sender_done[ref], receiver_done[ref])


def _grouped(rows: np.ndarray, vals: np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the pairs, each row's dependencies sorted and unique."""
    order = np.lexsort((vals, rows))
    rows, vals = rows[order], vals[order]
    keep = np.ones(len(rows), bool)
    keep[1:] = (rows[1:] != rows[:-1]) | (vals[1:] != vals[:-1])
    rows, vals = rows[keep], vals[keep]
    off = np.zeros(total + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=total), out=off[1:])
    return off, vals.astype(np.int32)


def rank_ends(wire: Wire, delivered: np.ndarray, tail: float = 0.0) -> np.ndarray:
    """Each rank's call end: its last own message's delivery (+ ``tail``, the receive
    overhead the packet engine adds after delivery); 0 for a rank with nothing to do."""
    out = np.zeros(wire.n)
    if len(wire.done_wire):
        np.maximum.at(out, wire.done_rank, np.asarray(delivered)[wire.done_wire] + tail)
    return out


def fluid_times(paths: np.ndarray, capacity: np.ndarray, size: np.ndarray,
                latency: np.ndarray, dep_off: np.ndarray, dep: np.ndarray,
                compute: np.ndarray | None = None) -> np.ndarray:
    """Delivery time of every wire message in the flow model: a message starts ``compute``
    after its last dependency is delivered (or after 0); its bytes drain at the max-min rate
    among the messages draining at the same time (re-solved when one starts or drains), and
    it is delivered ``latency`` (2o + hops·L, as in bulk.py) after it started plus its drain
    time. A message without bytes is delivered ``latency`` after it started.

    Max-min rates of flows that share no link, even through other flows, do not depend on
    each other, so an event re-solves only the connected component of the flows it
    touches (a flow alone on its links runs at its path's narrowest link), and a
    component's rates are kept under its flows' paths (segments and steps repeat them).

    The loop runs in C (t2hx/flowsim/kernel/timelinek.c), event for event the Python one
    (:func:`fluid_times_python`), with the same results to the bit."""
    n = len(size)
    p = np.ascontiguousarray(np.asarray(paths).reshape(n, -1), np.int32)
    cap = np.ascontiguousarray(capacity, np.float64)
    f64 = partial(np.ascontiguousarray, dtype=np.float64)
    sizes = f64(size)
    lat = f64(np.broadcast_to(np.asarray(latency, np.float64), (n,)))
    busy = np.zeros(n) if compute is None else f64(compute)
    off = np.ascontiguousarray(dep_off, np.int64)
    deps = np.ascontiguousarray(dep, np.int32)
    out = np.empty(n)
    counters = np.zeros(3, np.int64)
    c = ctypes.POINTER
    code = _kernel().t2hx_timeline_run(
        ctypes.c_int64(n), p.ctypes.data_as(c(ctypes.c_int32)), ctypes.c_int(p.shape[1]),
        cap.ctypes.data_as(c(ctypes.c_double)), ctypes.c_int64(len(cap)),
        sizes.ctypes.data_as(c(ctypes.c_double)), lat.ctypes.data_as(c(ctypes.c_double)),
        busy.ctypes.data_as(c(ctypes.c_double)), off.ctypes.data_as(c(ctypes.c_int64)),
        deps.ctypes.data_as(c(ctypes.c_int32)), out.ctypes.data_as(c(ctypes.c_double)),
        counters.ctypes.data_as(c(ctypes.c_int64)))
    if code == 1:
        raise MemoryError("the per-rank timeline kernel ran out of memory")
    if code == 2:
        raise ZeroDivisionError("a message's path has a link of capacity 0")
    return out


def _kernel() -> ctypes.CDLL:
    from t2hx.flowsim import ckernel

    return ckernel.load("libtimelinek.so", "t2hx_timeline_run", "the per-rank timelines")


def fluid_times_python(paths: np.ndarray, capacity: np.ndarray, size: np.ndarray,
                       latency: np.ndarray, dep_off: np.ndarray, dep: np.ndarray,
                       compute: np.ndarray | None = None) -> np.ndarray:
    """:func:`fluid_times` in Python: the reference its kernel is tested against."""
    return _Fluid(paths, capacity, size, latency, dep_off, dep, compute).run()


class _Fluid:
    """The event loop of :func:`fluid_times_python` (Python lists: scalar access
    dominates)."""

    def __init__(self, paths: np.ndarray, capacity: np.ndarray, size: np.ndarray,
                 latency: np.ndarray, dep_off: np.ndarray, dep: np.ndarray,
                 compute: np.ndarray | None) -> None:
        n = len(size)
        p = np.asarray(paths).reshape(n, -1)
        self.paths = p
        self.capacity = np.asarray(capacity, np.float64)
        cap = np.append(self.capacity, np.inf)
        self.lone = np.where(p >= 0, cap[p], np.inf).min(axis=1).tolist() if n else []
        self.links = [tuple(x for x in row if x >= 0) for row in p.tolist()]
        self.size = np.asarray(size, np.float64).tolist()
        self.latency = np.broadcast_to(np.asarray(latency, np.float64), (n,)).tolist()
        self.busy = [0.0] * n if compute is None else np.asarray(compute, np.float64).tolist()
        counts = np.diff(dep_off).astype(np.int64)
        self.waiting = counts.tolist()
        owner = np.repeat(np.arange(n), counts)
        order = np.argsort(np.asarray(dep, np.int64), kind="stable")
        self.users_of = owner[order].tolist()
        u_off = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(np.asarray(dep, np.int64), minlength=n), out=u_off[1:])
        self.u_off = u_off.tolist()
        self.delivered = [float("nan")] * n
        self.rate = [0.0] * n
        self.rem = list(self.size)
        self.since = [0.0] * n
        self.version = [0] * n
        self.on_link: dict[int, set[int]] = {}
        self.events: list[tuple[float, int, int]] = []    # (time, 0 start | 1 delivery, i)
        self.drains: list[tuple[float, int, int]] = []    # (due, version, i)
        self.cap_list = self.capacity.tolist()
        self.solved: dict[tuple, list[float]] = {}       # component's paths -> its rates

    def run(self) -> np.ndarray:
        events, drains, version = self.events, self.drains, self.version
        for first in (i for i, w in enumerate(self.waiting) if w == 0):
            heapq.heappush(events, (self.busy[first], 0, first))
        while events or drains:
            while drains and drains[0][1] != version[drains[0][2]]:
                heapq.heappop(drains)
            if events and (not drains or events[0][0] <= drains[0][0]):
                t, what, i = heapq.heappop(events)
                if what == 1:
                    self._deliver(i, t)
                else:
                    self._start(i, t)
            elif drains:
                self._drain()
        return np.array(self.delivered)

    def _deliver(self, i: int, t: float) -> None:
        """Message i delivered at t; what waited only on it starts (at t itself without
        delay: the order of events at one time leaves the rates after them alone)."""
        waiting, busy, latency, rem = self.waiting, self.busy, self.latency, self.rem
        users_of, u_off, delivered = self.users_of, self.u_off, self.delivered
        now = [i]
        while now:
            i = now.pop()
            delivered[i] = t
            for u in users_of[u_off[i]:u_off[i + 1]]:
                waiting[u] -= 1
                if waiting[u]:
                    continue
                if busy[u]:
                    heapq.heappush(self.events, (t + busy[u], 0, u))
                elif rem[u] > 0:
                    self._start(u, t)
                elif latency[u]:
                    heapq.heappush(self.events, (t + latency[u], 1, u))
                else:
                    now.append(u)

    def _start(self, i: int, t: float) -> None:
        if self.rem[i] <= 0:
            heapq.heappush(self.events, (t + self.latency[i], 1, i))
            return
        touched = False
        for link in self.links[i]:
            flows = self.on_link.setdefault(link, set())
            touched |= bool(flows)
            flows.add(i)
        self.since[i] = t
        if not touched:
            self._set_rate(i, self.lone[i], t)
        else:
            self._resolve(self._component([i]), t)

    def _drain(self) -> None:
        due, _, first = heapq.heappop(self.drains)
        done = [first]
        drains, version, rate, size = self.drains, self.version, self.rate, self.size
        while drains:
            t2, v2, j = drains[0]
            if v2 != version[j]:
                heapq.heappop(drains)
                continue
            if (t2 - due) * rate[j] > 1e-9 * size[j]:
                break
            heapq.heappop(drains)
            done.append(j)
        near: set[int] = set()
        for i in done:
            self.rem[i] = 0.0
            self.version[i] += 1
            for link in self.links[i]:
                flows = self.on_link[link]
                flows.discard(i)
                near |= flows
            heapq.heappush(self.events, (due + self.latency[i], 1, i))
        near.difference_update(done)
        if near:
            self._resolve(self._component(list(near)), due)

    def _component(self, seeds: list[int]) -> list[int]:
        seen = set(seeds)
        stack = list(seeds)
        links, on_link = self.links, self.on_link
        while stack:
            for link in links[stack.pop()]:
                for g in on_link[link]:
                    if g not in seen:
                        seen.add(g)
                        stack.append(g)
        return sorted(seen)

    def _resolve(self, flows: list[int], t: float) -> None:
        key = tuple(self.links[f] for f in flows)
        new = self.solved.get(key)
        if new is None:
            if len(flows) <= SMALL_COMPONENT:
                new = _maxmin_small(list(key), self.cap_list)
            else:
                new = maxmin_rates(self.paths[flows], self.capacity).tolist()
            if len(self.solved) >= SOLVED_KEPT:
                self.solved.clear()
            self.solved[key] = new
        for f, r in zip(flows, new):
            if r != self.rate[f]:
                self._set_rate(f, r, t)

    def _set_rate(self, f: int, r: float, t: float) -> None:
        self.rem[f] -= self.rate[f] * (t - self.since[f])
        self.since[f] = t
        self.rate[f] = r
        self.version[f] += 1
        heapq.heappush(self.drains, (t + self.rem[f] / r, self.version[f], f))


def _maxmin_small(links: list[tuple[int, ...]], capacity: list[float]) -> list[float]:
    """:func:`t2hx.flowsim.maxmin.maxmin_rates` for a few flows, the same operations in the
    same order (so the same floating-point results)."""
    remaining = {link: capacity[link] for path in links for link in path}
    rate = [0.0] * len(links)
    alive = list(range(len(links)))
    bound = 1 + RTOL
    while alive:
        count: dict[int, int] = {}
        for f in alive:
            for link in links[f]:
                count[link] = count.get(link, 0) + 1
        share = {link: max(remaining[link] / c, 0.0) for link, c in count.items()}
        best = {f: min(share[link] for link in links[f]) for f in alive}
        veto = {link: 0 for link in count}
        for f in alive:
            limit = best[f] * bound
            for link in links[f]:
                if share[link] > limit:
                    veto[link] += 1
        hit = [f for f in alive if any(veto[link] == 0 for link in links[f])]
        taken: dict[int, float] = {}
        for f in hit:
            rate[f] = best[f]
            for link in links[f]:
                taken[link] = taken.get(link, 0.0) + best[f]
        for link, used in taken.items():
            remaining[link] = max(remaining[link] - used, 0.0)
        gone = set(hit)
        alive = [f for f in alive if f not in gone]
    return rate


def eager_limit(system: object) -> int:
    """The protocol switch of the conf's MPI (``model.packet.eager_bytes``, openib's
    ``btl_openib_eager_limit``): both engines use the same threshold."""
    model = getattr(system, "model", None) or {}
    return int((model.get("packet") or {}).get("eager_bytes", 12288))
