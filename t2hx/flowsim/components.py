"""Exact decomposition of a packet-engine phase into groups that share no link.

Two messages interact in the packet kernel (t2hx/flowsim/kernel/packetk.c) only through
the state of a link both use (its output, the buffer behind it, its VL arbitration), a
link charged for another's traffic (a host's DMA read requests travel on the link that
carries its received data: ``Links.pair``), or a dependency (a rendezvous handshake, a
join). Everything else in the kernel is per link or per message, and events leave in time
order with ties in the order they were scheduled, so a group closed under those relations
runs the same events at the same times alone as among the others:
:func:`split` finds the groups, and the engine simulates each once.

A group's result depends on its messages and on the parameters of its links, not on which
links of the fabric they are (arbitration follows arrival order, never link numbers), so
:func:`signature` names a group by its structure: links numbered by first use, each by its
parameters. Equal signatures get equal results, which lets an isolated exchange of eBB's
round 7 reuse round 3's on other switches. tests/test_packet_groups.py compares both ways
bit for bit.
"""

from __future__ import annotations

import hashlib

import numpy as np

from t2hx.flowsim import packetk


def link_classes(links: packetk.Links) -> np.ndarray:
    """Per link, the number of its class: links of a class have equal parameters (the
    paired link's identity is structure, :func:`signature` records it apart)."""
    n = len(links.rate)
    cols = [links.rate, links.lat, links.fwd, links.hdr, links.cap, links.debt,
            np.zeros(n) if links.obuf is None else links.obuf,
            links.rate if links.xrate is None else links.xrate, links.pair >= 0]
    table = np.column_stack([np.asarray(c, np.float64) for c in cols])
    _, cls = np.unique(table, axis=0, return_inverse=True)
    return cls.reshape(-1).astype(np.int64)


def split(msgs: packetk.Messages, pair: np.ndarray) -> list[np.ndarray]:
    """The phase's groups: each an ascending array of message indices, the groups in the
    order of their first message."""
    n = len(msgs.bytes)
    route = msgs.route.astype(np.int64)
    owner = np.repeat(np.arange(n), np.diff(msgs.route_off))
    used, link_node = np.unique(route, return_inverse=True)
    # nodes: messages 0..n-1, then the phase's links
    u = [owner, ]
    v = [n + link_node.reshape(-1)]
    partner = pair[used]
    has = np.flatnonzero(partner >= 0)
    if has.size:                                  # a charged link joins its group only
        at = np.searchsorted(used, partner[has])  # when the phase uses it
        ok = (at < used.size) & (used[np.minimum(at, used.size - 1)] == partner[has])
        u.append(n + has[ok])
        v.append(n + at[ok])
    off, dep = msgs.dependencies()
    if dep.size:
        u.append(np.repeat(np.arange(n), np.diff(off)))
        v.append(dep.astype(np.int64))
    root = _components(n + used.size, np.concatenate(u), np.concatenate(v))[:n]
    order = np.argsort(root, kind="stable")
    cuts = np.flatnonzero(np.diff(root[order])) + 1
    groups = np.split(order, cuts)
    groups.sort(key=lambda g: int(g[0]))
    return groups


def _components(nodes: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each node's component (its smallest member): roots hook onto smaller roots over
    the edges until no edge joins two, then paths are halved to the root."""
    parent = np.arange(nodes)
    while True:
        pu, pv = parent[u], parent[v]
        join = pu != pv
        if not join.any():
            return parent
        np.minimum.at(parent, np.maximum(pu, pv)[join], np.minimum(pu, pv)[join])
        while True:
            up = parent[parent]
            if np.array_equal(up, parent):
                break
            parent = up


def subset(msgs: packetk.Messages, idx: np.ndarray) -> packetk.Messages:
    """The messages ``idx`` (ascending, closed under dependencies) as a phase of their own,
    with the links of the fabric they use."""
    off, dep = msgs.dependencies()
    counts = np.diff(msgs.route_off)[idx]
    route_off = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(counts, out=route_off[1:])
    route = np.concatenate([msgs.route[msgs.route_off[m]:msgs.route_off[m + 1]]
                            for m in idx]) if len(idx) else np.zeros(0, np.int32)
    local = np.full(len(msgs.bytes), -1, np.int64)
    local[idx] = np.arange(len(idx))
    dcount = np.diff(off)[idx]
    dep_off = np.zeros(len(idx) + 1, np.int64)
    np.cumsum(dcount, out=dep_off[1:])
    sub_dep = (local[np.concatenate([dep[off[m]:off[m + 1]] for m in idx])]
               if dcount.sum() else np.zeros(0, np.int64))
    return packetk.Messages(msgs.bytes[idx], route_off, route.astype(np.int32),
                            msgs.vl[idx], sub_dep.astype(np.int32), msgs.delay[idx],
                            dep_off)


def signature(group: packetk.Messages, classes: np.ndarray, pair: np.ndarray) -> bytes:
    """What a group's simulation depends on, its links named by first use: bytes, VLs,
    start delays, dependencies, routes and each link's class and charged partner."""
    used, first, local = np.unique(group.route, return_index=True, return_inverse=True)
    rank = np.empty(len(used), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(used))
    route = rank[local.reshape(-1)]
    by_rank = used[np.argsort(rank)]
    partner = pair[by_rank]
    at = np.searchsorted(used, partner)
    inside = (partner >= 0) & (at < len(used)) & (used[np.minimum(at, len(used) - 1)]
                                                  == partner)
    partner_local = np.where(inside, rank[np.minimum(at, len(used) - 1)], -1)
    dep_off, dep = group.dependencies()
    digest = hashlib.blake2b(digest_size=20)
    for part in (group.bytes.astype(np.int64), np.asarray(group.route_off, np.int64),
                 group.vl.astype(np.int8), group.delay.astype(np.float64),
                 np.asarray(dep_off, np.int64), dep.astype(np.int64), route,
                 classes[by_rank], partner_local):
        digest.update(np.int64(part.size).tobytes())
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.digest()
