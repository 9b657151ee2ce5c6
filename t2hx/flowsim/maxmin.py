"""Max-min fair rates over directed links by progressive filling, vectorised with numpy.

Flows are rows of a padded path array (``(flows, hops)`` directed link ids, ``-1`` = no
link), as :meth:`t2hx.routing.lft.Tables.paths` returns them. Capacities are bytes/s per link.

Algorithm (exact max-min, parallel progressive filling). Each round, every link with
unfrozen flows offers the fair share ``share = remaining capacity / unfrozen flows``. A link
is a *local bottleneck* when its share is the smallest along every unfrozen flow crossing it.
All flows through local bottlenecks are frozen at that share at once, their rates are taken
from the links' remaining capacity, and the round repeats until every flow is frozen.
Freezing flows at a share no larger than any other link's share can only raise the other
links' shares, so a local bottleneck stays the bottleneck of its flows; the result equals
the textbook one-link-at-a-time algorithm (the global minimum is always a local bottleneck,
so every round makes progress), but the number of rounds is the length of the bottleneck
chain, not the number of distinct rates.

Independent flow sets (the steps of mpiGraph, the 1,000 bisections of eBB, the phases of a
collective) are solved in ONE call: ``group[f]`` shifts flow f onto its own copy of the
links (``link + group * links``), so the groups cannot interact.
"""

from __future__ import annotations

import numpy as np

#: Relative tolerance when comparing shares (floating-point division noise).
RTOL = 1e-9


def maxmin_rates(paths: np.ndarray, capacity: np.ndarray,
                 group: np.ndarray | None = None) -> np.ndarray:
    """Max-min fair rate of every flow (same unit as ``capacity``)."""
    paths = np.asarray(paths)
    flows = paths.shape[0]
    if flows == 0:
        return np.zeros(0)
    cap = np.asarray(capacity, dtype=np.float64)
    links = len(cap)
    copies = 1
    if group is not None:
        group = np.asarray(group, dtype=np.int64)
        # Renumber groups densely so sparse group ids cost no memory.
        uniq, group = np.unique(group, return_inverse=True)
        copies = len(uniq)
    total = links * copies
    sentinel = total                      # padding points at a link of infinite capacity
    # int32 link ids whenever they fit: p and its fancy-indexed copies dominate the memory
    # of a 4,608-node alltoall (21 M flows in one phase).
    dtype: type[np.signedinteger] = np.int32 if total < np.iinfo(np.int32).max else np.int64
    ids = np.asarray(paths).astype(dtype, copy=False)
    if group is not None and copies > 1:
        ids = ids + (group * links).astype(dtype)[:, None]
    p = np.where(paths >= 0, ids, dtype(sentinel))
    del ids
    p = _compact_columns(p, sentinel)
    remaining = np.empty(total + 1)
    remaining[:total] = np.tile(cap, copies)
    remaining[sentinel] = np.inf
    if p.size < total:
        # Few flows (the fluid mode re-solves after every event): work on the links they
        # cross, not on every link of the fabric.
        used = np.unique(p)
        if used[-1] != sentinel:
            used = np.append(used, sentinel)
        p = np.searchsorted(used, p)
        remaining = remaining[used]
        total = sentinel = len(used) - 1
    rate = np.zeros(flows)
    index = np.arange(flows)           # original flow id of each row of p
    while index.size:
        count = _link_counts(p, None, total + 1)
        count[sentinel] = 0
        share = np.full(total + 1, np.inf)
        np.divide(remaining, count, out=share, where=count > 0)
        np.maximum(share, 0.0, out=share)
        at = share[p]                                       # (rows, hops)
        best = at.min(axis=1)
        # A link is not a local bottleneck if a flow through it has a smaller share
        # elsewhere on its path.
        worse = at > best[:, None] * (1 + RTOL)
        veto = _link_counts(p, worse, total + 1)
        bottleneck = (count > 0) & (veto == 0)
        bottleneck[sentinel] = False
        hit = bottleneck[p].any(axis=1)
        r = best[hit]
        rate[index[hit]] = r
        used = p[hit]
        remaining -= np.bincount(used.ravel(), weights=np.repeat(r, used.shape[1]),
                                 minlength=total + 1)
        remaining[sentinel] = np.inf
        np.maximum(remaining, 0.0, out=remaining)
        keep = ~hit
        p = p[keep]
        index = index[keep]
    return rate


def _link_counts(p: np.ndarray, mask: np.ndarray | None, length: int) -> np.ndarray:
    """Flows per link (only rows where ``mask``), one hop column at a time: bincount casts
    its input to int64, and a whole 21 M x 6 int32 array would cost another GiB."""
    count = np.zeros(length, dtype=np.int64)
    for j in range(p.shape[1]):
        col = p[:, j] if mask is None else p[:, j][mask[:, j]]
        count += np.bincount(col, minlength=length)
    return count


def _compact_columns(p: np.ndarray, sentinel: int) -> np.ndarray:
    """Drop all-padding columns (paths shorter than the array's width)."""
    used = (p != sentinel).any(axis=0)
    return p[:, used] if not used.all() else p
