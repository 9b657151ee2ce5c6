"""The study's placements (docs/modelling.md#placements) on an ordered list of usable nodes.

Every function returns indices into that list, rank order: entry ``i`` hosts rank ``i``.
All draws for a list of ``N`` nodes are made up front and independently of ``n``, so the
placement of ``n`` nodes is a prefix of the placement of ``m > n`` nodes (nested
allocations; a ladder of runs grows its node set instead of redrawing it).
"""

from __future__ import annotations

import numpy as np

from t2hx.placement.nodes import PlacementError, check_count

DEFAULT_P = 0.8


def linear(total: int, n: int) -> np.ndarray:
    """Rank ``i`` on node ``i`` of the (physically ordered) node list: the identity."""
    check_count(n, total)
    return np.arange(n, dtype=np.int64)


def random_order(total: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """A random subset of ``n`` nodes in random order (first ``n`` of a permutation)."""
    check_count(n, total)
    return rng.permutation(total)[:n].astype(np.int64)


def clustered(total: int, n: int, rng: np.random.Generator, p: float = DEFAULT_P,
              start: int = 0, one_leaf: int = 0) -> np.ndarray:
    """Start at node ``start``, then stride ``Δ ~ Geometric(p)`` (Δ ≥ 1, mean 1/p):
    ``j = i + Δ``. Emulates the fragmented allocation of a busy production system.

    Past the end of the list the walk wraps around and counts only nodes not yet taken, so
    it always yields ``n`` distinct nodes (a hole left by the first pass is filled on the
    next). While nothing wraps (n·/p well below the list length) the strides are exactly the
    geometric draws. A job of at most ``one_leaf`` nodes (those sharing the start node's
    switch) gets that switch: the first ``n`` nodes, as a topology-aware scheduler gives a
    job that fits one leaf. With ``start = 0`` this follows seed 000 §5.1, whose 7-node
    clustered list was the linear one (all on one HyperX switch)."""
    check_count(n, total)
    if n <= one_leaf:
        return np.arange(start, start + n, dtype=np.int64) % total
    if not 0.0 < p <= 1.0:
        raise PlacementError(f"clustered stride probability p = {p} is outside (0, 1]",
                             field="p", fix="use e.g. p = 0.8 (mean stride 1.25)")
    if not 0 <= start < total:
        raise PlacementError(f"start node {start} is outside 0..{total - 1}", field="start",
                             fix="pick a start index within the usable node list")
    strides = rng.geometric(p, size=total)
    taken = np.zeros(total, dtype=bool)
    order = [start]
    taken[start] = True
    pos = start
    for delta in strides[:n - 1]:
        pos = _advance(taken, pos, int(delta))
        taken[pos] = True
        order.append(pos)
    return np.asarray(order, dtype=np.int64)


def spread(leaf_of: np.ndarray, n: int, switches: int) -> np.ndarray:
    """``n`` nodes spread evenly over the first ``switches`` leaf switches (in node-list order)
    that have room for their share, each switch's share its first nodes, in list order.
    Stands for a job fragmented over a production system's leaves (seed 004 §4.3.4: 28 nodes
    "ended up connected to ten different switches"). Not nested: another ``n`` redraws."""
    total = len(leaf_of)
    check_count(n, total)
    if switches < 1:
        raise PlacementError(f"spread over {switches} switches", field="switches",
                             fix="spread over at least 1 leaf switch, e.g. --switches 10")
    k = min(switches, n)
    share = -(-n // k)
    leaves, members = _leaves(leaf_of)
    roomy = [leaf for leaf in leaves if len(members[leaf]) >= share][:k]
    if len(roomy) < k:
        raise PlacementError(f"only {len(roomy)} leaf switches have {share} usable nodes for a "
                             f"{n}-node job spread over {k}", field="switches",
                             fix="spread over fewer switches or repair down nodes")
    big = n - (share - 1) * k          # leaves that take the larger share
    picked = [members[leaf][:share if j < big else share - 1] for j, leaf in enumerate(roomy)]
    return np.sort(np.concatenate(picked)).astype(np.int64)


def _leaves(leaf_of: np.ndarray) -> tuple[list[int], dict[int, list[int]]]:
    """Leaf switches in order of first appearance and each one's node indices, in order."""
    members: dict[int, list[int]] = {}
    for i, leaf in enumerate(leaf_of.tolist()):
        members.setdefault(int(leaf), []).append(i)
    return list(members), members


def _advance(taken: np.ndarray, pos: int, delta: int) -> int:
    """Move ``delta`` free nodes forward from ``pos``, circularly."""
    total = len(taken)
    while delta:
        pos = (pos + 1) % total
        if not taken[pos]:
            delta -= 1
    return pos
