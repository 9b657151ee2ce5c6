"""Seed 001's process mappings on ring-based shortcut topologies (§3.2, §4.4).

Each returns indices into a host list (rank order) of a fabric whose hosts are indexed in
``fabric.hcas()`` order; with one node per switch (seed 001's setting) host ``i`` sits on
ring switch ``i``. ``usable`` (a boolean mask) excludes down nodes.

- random: a random node set in random order. Seed 001's "ascending-order" totals for the
  random mapping (Tables 3.4–3.6: 1,373 / 12,308 / 12,347 hops, i.e. the network's average
  distance per message) match random rank order, not node-ID order; ``ascending=True``
  gives the ID-sorted variant.
- hierarchical tree: breadth-first search over switches from a (random) root switch,
  taking the usable hosts of each switch as it is reached, neighbours in ascending order,
  until ``n`` hosts; ranks in node-ID order (seed 001 §3.3.1's ascending-order placement:
  1,082 bcast hops on our 1,024-switch network vs the thesis' 1,080; ``ascending=False``
  keeps BFS order).
- ring-consecutive: ``n`` consecutive hosts along the ring from a (random) start.
- circulant (Algorithm 4.1): start at a random node, then stride ``N/n``; with
  ``N = 2^k`` nodes on ``G(N, log2 N)`` the chosen nodes form ``G(n, log2 n)``.
- CCO, chain concatenation order (§2.4.2, the thesis' competitor of two-opt): a rank order
  for nodes already chosen. The thesis says only that CCO "constructs a breadth-first
  search tree with a source node as root, and visits a destination node with an order
  based on the BFS tree"; ours visits that tree depth first (children in ascending switch
  order), so each rank's successor hangs off the same or a nearby branch and the chains of
  a binomial tree stay short.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from t2hx.fabric.graph import Fabric
from t2hx.placement.costs import host_switches, switch_graph
from t2hx.placement.nodes import PlacementError, check_count

def _usable(total: int, usable: np.ndarray | None) -> np.ndarray:
    return np.ones(total, dtype=bool) if usable is None else np.asarray(usable, dtype=bool)


def random_mapping(total: int, n: int, rng: np.random.Generator,
                   usable: np.ndarray | None = None, ascending: bool = False) -> np.ndarray:
    ok = np.flatnonzero(_usable(total, usable))
    check_count(n, len(ok))
    pick = ok[rng.permutation(len(ok))[:n]]
    return np.sort(pick) if ascending else pick


def hierarchical_mapping(fabric: Fabric, n: int, rng: np.random.Generator,
                         usable: np.ndarray | None = None, root: int | None = None,
                         ascending: bool = True) -> np.ndarray:
    sw, pos, _dist = switch_graph(fabric)
    at = host_switches(fabric, pos)
    ok = _usable(len(at), usable)
    check_count(n, int(ok.sum()))
    hosts_of: list[list[int]] = [[] for _ in sw]
    for h in np.flatnonzero(ok):
        hosts_of[at[h]].append(int(h))
    adj: list[list[int]] = [[] for _ in sw]
    for c in fabric.inter_switch_cables():
        adj[pos[c.a]].append(pos[c.b])
        adj[pos[c.b]].append(pos[c.a])
    if root is None:
        root = int(at[rng.choice(np.flatnonzero(ok))])   # a switch with a usable host
    picked: list[int] = []
    seen = {root}
    queue = deque([root])
    while queue and len(picked) < n:
        u = queue.popleft()
        picked += hosts_of[u][:n - len(picked)]
        for v in sorted(set(adj[u])):
            if v not in seen:
                seen.add(v)
                queue.append(v)
    out = np.asarray(picked, dtype=np.int64)
    return np.sort(out) if ascending else out


def ring_mapping(total: int, n: int, rng: np.random.Generator,
                 usable: np.ndarray | None = None, start: int | None = None) -> np.ndarray:
    ok = np.flatnonzero(_usable(total, usable))
    check_count(n, len(ok))
    first = int(rng.integers(len(ok))) if start is None else int(np.searchsorted(ok, start))
    return ok[(first + np.arange(n)) % len(ok)]


def circulant_mapping(total: int, n: int, rng: np.random.Generator,
                      usable: np.ndarray | None = None, start: int | None = None) -> np.ndarray:
    check_count(n, total)
    if total % n:
        raise PlacementError(f"circulant mapping needs n dividing the {total} nodes, got {n}",
                             field="count", fix="use a power-of-two count on a power-of-two "
                             "circulant (seed 001 Algorithm 4.1)")
    first = int(rng.integers(total)) if start is None else start
    out = (first + (total // n) * np.arange(n)) % total
    ok = _usable(total, usable)
    if not ok[out].all():
        bad = int(out[np.argmin(ok[out])])
        raise PlacementError(f"circulant mapping hits down node #{bad}", field="nodes.down",
                             fix="pick another seed/start or repair the node")
    return out.astype(np.int64)


def cco_order(fabric: Fabric, hosts: np.ndarray) -> np.ndarray:
    """Positions into ``hosts`` (host indices, ``hosts[0]`` the source) in chain
    concatenation order: a depth-first walk of the breadth-first tree of the switch graph
    rooted at the source's switch, each switch's hosts in the given order."""
    sw, pos, _dist = switch_graph(fabric)
    at = host_switches(fabric, pos)
    adj: list[set[int]] = [set() for _ in sw]
    for c in fabric.inter_switch_cables():
        adj[pos[c.a]].add(pos[c.b])
        adj[pos[c.b]].add(pos[c.a])
    root = int(at[hosts[0]])
    children: list[list[int]] = [[] for _ in sw]
    seen = {root}
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for v in sorted(adj[u]):
            if v not in seen:
                seen.add(v)
                children[u].append(v)
                queue.append(v)
    on: dict[int, list[int]] = {}
    for k, h in enumerate(np.asarray(hosts).tolist()):
        on.setdefault(int(at[h]), []).append(k)
    out: list[int] = []
    stack = [root]
    while stack:
        u = stack.pop()
        out += on.get(u, [])
        stack += reversed(children[u])
    if len(out) != len(hosts):
        raise PlacementError("chosen hosts are not all reachable from the source's switch",
                             field="placement", fix="choose hosts of one connected fabric")
    return np.asarray(out, dtype=np.int64)
