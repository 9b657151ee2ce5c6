"""The packet engine's compiled event loop (``kernel/packetk.c``, built by ``run/setup`` with
the system C compiler, loaded with ctypes): flat arrays in, per-message times out.

:class:`Links` is the fabric the kernel sees (every directed link with its rate, latency,
forwarding delay at its far end, header bytes, buffer credits behind it, the link it
charges read-request bytes to, and an output buffer at its near end with the crossbar rate
into it); :class:`Messages` the traffic (bytes, route as link ids,
VL, dependency and delay). :func:`simulate` returns each message's first injection and
delivery times and the kernel's counters (:data:`COUNTERS`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import ckernel

#: The kernel's counters, in its order.
COUNTERS = ("events", "packet_hops", "packets_created", "packets_delivered",
            "credit_errors", "heap_peak", "pool_peak")

def _kernel() -> ctypes.CDLL:
    return ckernel.load("libpacketk.so", "t2hx_packet_run", "the packet engine")


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
          2: "the kernel's event heap or packet pool overflowed (a bug: please report)",
          3: "bad input arrays",
          4: "messages never finished (no route forward: a credit deadlock)"}


def simulate(links: Links, msgs: Messages, arb: Arbitration
             ) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """(first injection time, delivery time, counters) of every message."""
    n = len(msgs.bytes)
    nvl = int(msgs.vl.max()) + 1 if n else 1
    f64, i32, i64 = ctypes.c_double, ctypes.c_int32, ctypes.c_int64
    rate = np.ascontiguousarray(links.rate, np.float64)
    lat = np.ascontiguousarray(links.lat, np.float64)
    fwd = np.ascontiguousarray(links.fwd, np.float64)
    hdr = np.ascontiguousarray(links.hdr, np.int32)
    cap = np.ascontiguousarray(links.cap, np.int32)
    pair = np.ascontiguousarray(links.pair, np.int32)
    debt = np.ascontiguousarray(links.debt, np.float64)
    obuf = np.ascontiguousarray(np.zeros(len(rate)) if links.obuf is None else links.obuf,
                                np.int32)
    xrate = np.ascontiguousarray(rate if links.xrate is None else links.xrate, np.float64)
    size = np.ascontiguousarray(msgs.bytes, np.int64)
    off = np.ascontiguousarray(msgs.route_off, np.int64)
    route = np.ascontiguousarray(msgs.route, np.int32)
    vl = np.ascontiguousarray(msgs.vl, np.int8)
    dep_off, dep = msgs.dependencies()
    dep_off = np.ascontiguousarray(dep_off, np.int64)
    dep = np.ascontiguousarray(dep if len(dep) else np.zeros(1), np.int32)
    delay = np.ascontiguousarray(msgs.delay, np.float64)
    high = np.ascontiguousarray(np.array(arb.high, np.int32).reshape(-1), np.int32)
    low = np.ascontiguousarray(np.array(arb.low, np.int32).reshape(-1), np.int32)
    limit = -1 if arb.high_limit == 255 else 4096 * arb.high_limit
    first = np.zeros(max(n, 1))
    end = np.zeros(max(n, 1))
    counters = np.zeros(len(COUNTERS), np.int64)
    rc = _kernel().t2hx_packet_run(
        ctypes.c_int(len(rate)), ctypes.c_int(nvl), _p(rate, f64), _p(lat, f64), _p(fwd, f64),
        _p(hdr, i32), _p(cap, i32), _p(pair, i32), _p(debt, f64), _p(obuf, i32), _p(xrate, f64), i64(n), _p(size, i64),
        _p(off, i64), _p(route, i32), _p(vl, ctypes.c_int8), _p(dep_off, i64), _p(dep, i32),
        _p(delay, f64),
        ctypes.c_int(arb.mtu), ctypes.c_int(arb.header), ctypes.c_int(int(arb.oldest_first)),
        ctypes.c_int(int(arb.per_output)),
        ctypes.c_int(len(arb.high)),
        _p(high, i32), ctypes.c_int(len(arb.low)), _p(low, i32), i64(limit),
        _p(first, f64), _p(end, f64), _p(counters, i64))
    if rc != 0:
        raise WorkloadError(f"packet engine: {ERRORS.get(rc, f'kernel error {rc}')}",
                            field="engine", fix="use engine flow, or report the case")
    return first[:n], end[:n], dict(zip(COUNTERS, (int(c) for c in counters)))
