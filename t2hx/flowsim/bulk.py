"""Bulk-synchronous mode: a workload is a list of phases; a phase ends with its slowest flow.

A :class:`Phase` is a set of point-to-point messages (ranks ``src[k] → dst[k]``, ``size[k]``
bytes) that are in flight together, plus local work (``compute`` seconds, e.g. a reduction).
Rates are max-min fair within the phase and computed once, at the phase start, for all
phases of a workload in one vectorised call (each phase on its own copy of the links).
A message takes ``latency + size / rate`` (LogGP: 2o + hops·L, then the bytes at the fair
rate) plus ``g`` for every earlier message its sender injected in the same phase.
Zero-byte messages cost their latency only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from t2hx.flowsim.maxmin import maxmin_rates

if TYPE_CHECKING:       # the network calls run() (Network.run): no import cycle at run time
    from t2hx.flowsim.network import Network


@dataclass
class Phase:
    src: np.ndarray
    dst: np.ndarray
    size: np.ndarray
    compute: float = 0.0
    name: str = ""

    @classmethod
    def of(cls, src, dst, size, compute: float = 0.0, name: str = "") -> Phase:
        src, dst = np.broadcast_arrays(np.asarray(src, dtype=np.int64),
                                       np.asarray(dst, dtype=np.int64))
        src, dst = src.ravel().copy(), dst.ravel().copy()
        size = np.broadcast_to(np.asarray(size, dtype=np.float64), src.shape).copy()
        keep = src != dst                       # a rank's message to itself is a memcpy
        return cls(src[keep], dst[keep], size[keep], compute, name)


@dataclass
class Result:
    phase_time: np.ndarray                      # seconds per phase (incl. compute)
    rates: list[np.ndarray] = field(default_factory=list)   # bytes/s per message per phase
    flow_time: list[np.ndarray] = field(default_factory=list)
    rank_end: np.ndarray | None = None          # when each rank finished its last phase

    @property
    def total(self) -> float:
        return float(self.phase_time.sum())


def endpoints(phases: list[Phase]) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) ranks of every message in :func:`flow_arrays` order."""
    src, dst = [], []
    for ph in phases:
        for value in np.unique(ph.size):
            sel = ph.size == value
            src.append(ph.src[sel])
            dst.append(ph.dst[sel])
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)


def flow_arrays(net: Network, phases: list[Phase]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Concatenated (paths, switches, group, bytes) of every flow: every message, or with
    several rails every part of one (:meth:`Network.flows`)."""
    return part_arrays(net, phases)[:4]


def part_arrays(net: Network, phases: list[Phase]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`flow_arrays` plus each flow's message (its index in :func:`endpoints`
    order)."""
    paths, hops, groups, sizes, owners = [], [], [], [], []
    base = 0
    for g, ph in enumerate(phases):
        if ph.src.size == 0:
            continue
        for value in np.unique(ph.size):
            sel = ph.size == value
            msg, p, h, part = net.flows(ph.src[sel], ph.dst[sel], int(value))
            paths.append(p)
            hops.append(h)
            groups.append(np.full(len(msg), g, dtype=np.int64))
            sizes.append(np.asarray(part, dtype=np.float64))
            owners.append(msg + base)
            base += int(sel.sum())
    if not paths:
        return (np.zeros((0, 1), np.int32), np.zeros(0, np.int16), np.zeros(0, np.int64),
                np.zeros(0), np.zeros(0, np.int64))
    if len(paths) == 1:                 # one phase of one size: no padded copy
        return paths[0], hops[0], groups[0], sizes[0], owners[0]
    width = max(p.shape[1] for p in paths)
    paths = [np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=-1) for p in paths]
    return (np.vstack(paths), np.concatenate(hops), np.concatenate(groups),
            np.concatenate(sizes), np.concatenate(owners))


#: Messages solved per max-min call. Phases are independent, so solving them in batches
#: gives the same rates; it bounds memory (a 4,608-node mpiGraph is 21 M messages, whose
#: path arrays and per-phase link copies would take tens of GiB at once).
BATCH_FLOWS = 1 << 21


def run(net: Network, phases: list[Phase], keep_rates: bool = False) -> Result:
    """Times of every phase (and, with ``keep_rates``, the rate of every message)."""
    # Order inside a phase matters for the gap term only; sort by (phase, value) groups
    # is what flow_arrays produces, so rebuild per-phase order explicitly.
    ordered = [_sorted_by_size(ph) for ph in phases]
    phase_time = np.zeros(len(phases))
    rates: list[np.ndarray] = []
    times: list[np.ndarray] = []
    for lo, hi in _batches(ordered, BATCH_FLOWS):
        rate, t, group, owner, part = _solve(net, ordered[lo:hi])
        if len(t):
            np.maximum.at(phase_time[lo:hi], group, t)
        if keep_rates:
            rate, t, group = _per_message(ordered[lo:hi], rate, t, group, owner, part)
            bounds = np.searchsorted(group, np.arange(hi - lo + 1))
            rates += [rate[bounds[i]:bounds[i + 1]] for i in range(hi - lo)]
            times += [t[bounds[i]:bounds[i + 1]] for i in range(hi - lo)]
    phase_time += np.array([ph.compute for ph in phases])
    result = Result(phase_time)
    if keep_rates:
        result.rates, result.flow_time = rates, times
    result.rank_end = _rank_end(net.ranks, ordered, phase_time)
    return result


def _batches(phases: list[Phase], limit: int) -> list[tuple[int, int]]:
    """[lo, hi) runs of consecutive phases of at most ``limit`` messages (at least one
    phase each)."""
    out, lo, count = [], 0, 0
    for i, ph in enumerate(phases):
        if count and count + ph.src.size > limit:
            out.append((lo, i))
            lo, count = i, 0
        count += ph.src.size
    out.append((lo, len(phases)))
    return out


def _per_message(phases: list[Phase], rate: np.ndarray, t: np.ndarray, group: np.ndarray,
                 owner: np.ndarray, part: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flows → messages: a message ends with its last part; its rate is its bytes over the
    longest transfer time of its parts (with one rail, the flows are the messages)."""
    size = np.concatenate([ph.size for ph in phases if ph.src.size] or [np.zeros(0)])
    if len(owner) == len(size):
        return rate, t, group
    end = np.zeros(len(size))
    np.maximum.at(end, owner, t)
    msg_group = np.zeros(len(size), dtype=np.int64)
    msg_group[owner] = group
    transfer = np.zeros(len(size))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.maximum.at(transfer, owner, np.where(part > 0, part / rate, 0.0))
        msg_rate = np.where(transfer > 0, size / transfer, np.inf)
    return msg_rate, end, msg_group


def _solve(net: Network, phases: list[Phase]) -> tuple[np.ndarray, ...]:
    """(rate, time, phase index, message, bytes) of every flow of ``phases`` (messages, or
    their parts on several rails), in flow_arrays order."""
    paths, hops, group, size, owner = part_arrays(net, phases)
    moving = size > 0
    rate = np.full(len(size), np.inf)
    if moving.any():
        # Without zero-byte messages, no copy of the (possibly 21 M-row) path array.
        rate[moving] = (maxmin_rates(paths, net.capacity, group) if moving.all() else
                        maxmin_rates(paths[moving], net.capacity, group[moving]))
    lat = net.loggp.latency(hops.astype(np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = lat + np.where(moving, size / rate, 0.0)
    t += net.loggp.gap * _injection_order(phases)[owner]
    return rate, t, group, owner, size


def _sorted_by_size(ph: Phase) -> Phase:
    if ph.size.size < 2 or (ph.size[1:] >= ph.size[:-1]).all():
        return ph                       # already in order: no copy of a 21 M-message phase
    order = np.argsort(ph.size, kind="stable")
    return Phase(ph.src[order], ph.dst[order], ph.size[order], ph.compute, ph.name)


def _injection_order(phases: list[Phase]) -> np.ndarray:
    """For each message, how many messages its sender injected before it in its phase."""
    out = []
    for ph in phases:
        if ph.src.size == 0:
            continue
        order = np.argsort(ph.src, kind="stable")
        s = ph.src[order]
        first = np.searchsorted(s, s, side="left")
        k = np.empty(len(s), dtype=np.float64)
        k[order] = np.arange(len(s)) - first
        out.append(k)
    return np.concatenate(out) if out else np.zeros(0)


def _rank_end(ranks: int, phases: list[Phase], phase_time: np.ndarray) -> np.ndarray:
    end = np.zeros(ranks)
    clock = np.cumsum(phase_time)
    for i, ph in enumerate(phases):
        if ph.src.size:
            end[ph.src] = clock[i]
            end[ph.dst] = clock[i]
    return end
