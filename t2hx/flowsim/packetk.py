"""The packet engine's compiled event loop (``kernel/packetk.c``, built by ``run/setup`` with
the system C compiler, loaded with ctypes): flat arrays in, per-message times out.

:class:`Links` is the fabric the kernel sees (every directed link with its rate, latency,
forwarding delay at its far end, header bytes, buffer credits behind it, the link it
charges read-request bytes to, and an output buffer at its near end with the crossbar rate
into it); :class:`Messages` the traffic (bytes, route as link ids,
VL, dependency and delay). A :class:`Kernel` holds the kernel's state for one fabric and
runs any number of independent phases, many in one call (on several threads with
``T2HX_PACKET_THREADS``: the results do not depend on it); :func:`simulate` runs one phase
on a kernel of its own. Both return each message's first injection and delivery times and
the kernel's counters (:data:`COUNTERS`).
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import ckernel

#: The kernel's counters, in its order.
COUNTERS = ("events", "packet_hops", "packets_created", "packets_delivered",
            "credit_errors", "heap_peak", "pool_peak")
#: Threads a kernel runs a batch of phases on (one state each); unset: 1.
THREADS_ENV = "T2HX_PACKET_THREADS"
MAX_THREADS = 16


def _kernel() -> ctypes.CDLL:
    lib = ckernel.load("libpacketk.so", "t2hx_packet_phases", "the packet engine")
    lib.t2hx_packet_new.restype = ctypes.c_void_p
    lib.t2hx_packet_free.argtypes = [ctypes.c_void_p]
    lib.t2hx_packet_free.restype = None
    return lib


@dataclass
class Links:
    rate: np.ndarray        # bytes/s on the wire
    lat: np.ndarray         # s, propagation
    fwd: np.ndarray         # s, from head arrival at the far end to its earliest departure
    hdr: np.ndarray         # wire bytes per packet besides its payload
    cap: np.ndarray         # credits (64 B) per VL of the buffer behind the link; -1: none
    pair: np.ndarray        # link charged request bytes per payload byte sent; -1: none
    debt: np.ndarray        # s charged to ``pair`` per payload byte sent
    obuf: np.ndarray | None = None    # credits of the output buffer at the near end; 0: none
    xrate: np.ndarray | None = None   # bytes/s into that output buffer (crossbar)


@dataclass
class Messages:
    bytes: np.ndarray       # int64 payload bytes (0: one header-only packet)
    route_off: np.ndarray   # int64, len + 1: message m's links are route[off[m]:off[m+1]]
    route: np.ndarray       # int32 link ids
    vl: np.ndarray          # int8
    dep: np.ndarray         # int32: message that must be delivered first (earlier index), -1;
                            # with ``dep_off``: all dependencies, message m's dep[off[m]:off[m+1]]
    delay: np.ndarray       # s: after the last dependency's delivery, or from 0 without one
    dep_off: np.ndarray | None = None   # int64, len + 1

    def dependencies(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, dependencies) as the kernel takes them."""
        if self.dep_off is not None:
            return self.dep_off, self.dep
        has = self.dep >= 0
        off = np.zeros(len(self.dep) + 1, np.int64)
        np.cumsum(has, out=off[1:])
        return off, self.dep[has]


@dataclass(frozen=True)
class Arbitration:
    mtu: int
    header: int                             # IB header bytes (credits count them)
    high: list[tuple[int, int]]
    low: list[tuple[int, int]]
    high_limit: int                         # 4 KiB units; 255: unlimited
    oldest_first: bool = False              # within a VL: oldest packet first, not round robin
    per_output: bool = False                # input buffers queue per output (no head-of-line)


def _p(a: np.ndarray, kind: type) -> ctypes._Pointer:
    return a.ctypes.data_as(ctypes.POINTER(kind))


ERRORS = {1: "the kernel could not allocate its state",
          3: "bad input arrays",
          4: "messages never finished (no route forward: a credit deadlock)"}

#: (first injection, delivery, counters) of a phase's messages.
Times = tuple[np.ndarray, np.ndarray, dict[str, int]]


def _fail(rc: int) -> WorkloadError:
    return WorkloadError(f"packet engine: {ERRORS.get(rc, f'kernel error {rc}')}",
                         field="engine", fix="use engine flow, or report the case")


def threads() -> int:
    """Threads a batch runs on: ``T2HX_PACKET_THREADS``, else 1."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return 1
    if not text.isdigit() or not 1 <= int(text) <= MAX_THREADS:
        raise WorkloadError(f"{THREADS_ENV}={text!r} is not a thread count", field=THREADS_ENV,
                            fix=f"a whole number from 1 to {MAX_THREADS}, or unset it")
    return int(text)


class Kernel:
    """The compiled kernel's state for one fabric and arbitration, made once: every phase
    run on it resets only the links its routes use."""

    def __init__(self, links: Links, arb: Arbitration, n_threads: int | None = None) -> None:
        self._lib = _kernel()
        self._ctx: list[int] = []
        f64, i32 = ctypes.c_double, ctypes.c_int32
        rate = np.ascontiguousarray(links.rate, np.float64)
        n = len(rate)
        given = (links.rate, links.lat, links.fwd, links.hdr, links.cap, links.pair,
                 links.debt, np.zeros(n) if links.obuf is None else links.obuf,
                 rate if links.xrate is None else links.xrate)
        kinds = (f64, f64, f64, i32, i32, i32, f64, i32, f64)
        arrays = [np.ascontiguousarray(a, np.float64 if k is f64 else np.int32)
                  for a, k in zip(given, kinds)]
        high = np.ascontiguousarray(np.array(arb.high, np.int32).reshape(-1), np.int32)
        low = np.ascontiguousarray(np.array(arb.low, np.int32).reshape(-1), np.int32)
        limit = -1 if arb.high_limit == 255 else 4096 * arb.high_limit
        self.threads = n_threads or threads()
        for _ in range(self.threads):
            rc = ctypes.c_int(0)
            ctx = self._lib.t2hx_packet_new(
                ctypes.c_int(n), *(_p(a, k) for a, k in zip(arrays, kinds)),
                ctypes.c_int(arb.mtu), ctypes.c_int(arb.header),
                ctypes.c_int(int(arb.oldest_first)), ctypes.c_int(int(arb.per_output)),
                ctypes.c_int(len(arb.high)), _p(high, i32), ctypes.c_int(len(arb.low)),
                _p(low, i32), ctypes.c_int64(limit), ctypes.byref(rc))
            if not ctx:
                self.close()
                raise _fail(rc.value)
            self._ctx.append(ctx)

    def close(self) -> None:
        """Frees the kernel's state (also when the object goes)."""
        for ctx in getattr(self, "_ctx", []):
            self._lib.t2hx_packet_free(ctypes.c_void_p(ctx))
        self._ctx = []

    def __del__(self) -> None:
        self.close()

    def run(self, phases: list[Messages]) -> list[Times]:
        """Each phase's (first injection, delivery, counters), the phases independent."""
        if not phases:
            return []
        msg_off, size, route_off, route, vl, dep_off, dep, delay = _batch(phases)
        total = int(msg_off[-1])
        first = np.zeros(total + 1)
        end = np.zeros(total + 1)
        counters = np.zeros((len(phases), len(COUNTERS)), np.int64)
        rcs = np.zeros(len(phases), np.int32)
        i32, i64 = ctypes.c_int32, ctypes.c_int64
        ctx = (ctypes.c_void_p * len(self._ctx))(*self._ctx)
        rc = self._lib.t2hx_packet_phases(
            ctx, ctypes.c_int(len(self._ctx)), i64(len(phases)), _p(msg_off, i64),
            _p(size, i64), _p(route_off, i64), _p(route, i32), _p(vl, ctypes.c_int8),
            _p(dep_off, i64), _p(dep, i32), _p(delay, ctypes.c_double),
            _p(first, ctypes.c_double), _p(end, ctypes.c_double), _p(counters, i64),
            _p(rcs, i32))
        if rc != 0:
            raise _fail(rc)
        return [(first[a:b], end[a:b], dict(zip(COUNTERS, (int(c) for c in row))))
                for a, b, row in zip(msg_off[:-1], msg_off[1:], counters)]


def _joined(arrays: list[np.ndarray], kind: type) -> np.ndarray:
    """The arrays end to end (one element more: never an empty buffer)."""
    return np.ascontiguousarray(np.concatenate([np.asarray(a) for a in arrays]
                                               + [np.zeros(1, kind)]), kind)


def _offsets(offs: list[np.ndarray], lengths: list[int]) -> np.ndarray:
    """Per-phase offsets into per-phase arrays as offsets into the arrays end to end."""
    base = np.cumsum([0] + lengths)
    return np.concatenate([np.asarray(o[:-1], np.int64) + b for o, b in zip(offs, base)]
                          + [np.array([base[-1]], np.int64)])


def _batch(phases: list[Messages]) -> tuple[np.ndarray, ...]:
    """The kernel's batch arrays: message offsets of the phases, then their messages end to
    end (route and dependency offsets into the joined routes and dependencies; a
    dependency stays an index within its phase)."""
    msg_off = np.zeros(len(phases) + 1, np.int64)
    np.cumsum([len(m.bytes) for m in phases], out=msg_off[1:])
    deps = [m.dependencies() for m in phases]
    return (msg_off, _joined([m.bytes for m in phases], np.int64),
            _offsets([m.route_off for m in phases], [len(m.route) for m in phases]),
            _joined([m.route for m in phases], np.int32),
            _joined([m.vl for m in phases], np.int8),
            _offsets([o for o, _ in deps], [len(d) for _, d in deps]),
            _joined([d for _, d in deps], np.int32),
            _joined([m.delay for m in phases], np.float64))


def simulate(links: Links, msgs: Messages, arb: Arbitration) -> Times:
    """(first injection time, delivery time, counters) of every message of one phase."""
    kernel = Kernel(links, arb, 1)
    try:
        return kernel.run([msgs])[0]
    finally:
        kernel.close()
