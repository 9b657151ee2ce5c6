"""Host×host costs for placement: hop matrices and per-pair paths.

Two sources, one shape, so two-opt never cares where a cost came from:

- *minimal routing* on the fabric graph (seed 001 uses SimGrid's Floyd shortest paths):
  ``graph_hops`` (BFS hop counts) and ``minimal_paths`` (one shortest path per pair,
  destination-based like an InfiniBand LFT; ties go to the lowest-numbered next switch);
- *the actual routing*: ``routed_hops`` and ``routed_paths`` read OpenSM's tables
  (``t2hx.routing.lft.Tables``).

Hops are switch-to-switch links (the papers' hop count). Every message also crosses its
injection and ejection link; that constant +2 per message changes no two-opt decision, so it
is left out of hop matrices (paths do include those links: they carry load).
Hosts are indexed in ``fabric.hcas()`` order, which is the conf's hostname order.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from t2hx.errors import RoutingError
from t2hx.fabric.graph import Fabric
from t2hx.routing.lft import Tables


def switch_graph(fabric: Fabric) -> tuple[list[int], dict[int, int], np.ndarray]:
    """Switch node ids, their positions, and the (S, S) inter-switch hop distances."""
    sw = fabric.switches()
    pos = {s: k for k, s in enumerate(sw)}
    pairs = np.array([(pos[c.a], pos[c.b]) for c in fabric.inter_switch_cables()],
                     dtype=np.int64).reshape(-1, 2)
    adj = csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])),
                     shape=(len(sw), len(sw)))
    dist = shortest_path(adj, directed=False, unweighted=True)
    if np.isinf(dist).any():
        raise RoutingError(f"fabric '{fabric.name}' has switches that cannot reach each other",
                           field="topology", fix="connect every switch")
    return sw, pos, dist.astype(np.int32)


def host_switches(fabric: Fabric, pos: dict[int, int]) -> np.ndarray:
    """Position (in ``switches()``) of the switch each host is cabled to."""
    peer: dict[int, int] = {}
    for c in fabric.cables:
        peer.setdefault(c.a, c.b)
        peer.setdefault(c.b, c.a)
    return np.array([pos[peer[h]] for h in fabric.hcas()], dtype=np.int64)


def graph_hops(fabric: Fabric) -> np.ndarray:
    """(H, H) switch hops between hosts under minimal routing (same as
    ``Fabric.hop_matrix`` lifted to hosts, computed with scipy for speed)."""
    _sw, pos, dist = switch_graph(fabric)
    at = host_switches(fabric, pos)
    return dist[np.ix_(at, at)]


def routed_hops(tables: Tables) -> np.ndarray:
    """(H, H) switch hops between hosts along the paths OpenSM's tables give (LID 0)."""
    hcas = np.asarray(tables.fabric.hcas(), dtype=np.int64)
    lids = tables.hca_lids()
    src, dst = np.meshgrid(hcas, lids, indexing="ij")
    return tables.switch_hops(src.ravel(), dst.ravel()).reshape(len(hcas), len(hcas))


def routed_paths(tables: Tables) -> np.ndarray:
    """(H, H, L) directed link ids of every host pair's routed path, -1 padded."""
    hcas = np.asarray(tables.fabric.hcas(), dtype=np.int64)
    src, dst = np.meshgrid(hcas, tables.hca_lids(), indexing="ij")
    return tables.paths(src.ravel(), dst.ravel()).reshape(len(hcas), len(hcas), -1)


def minimal_paths(fabric: Fabric) -> np.ndarray:
    """(H, H, L) directed link ids (numbered as ``t2hx.routing.lft``: cable ``c`` is links
    ``2c`` a→b and ``2c+1`` b→a) of one shortest path per host pair, -1 padded."""
    sw, pos, dist = switch_graph(fabric)
    s = len(sw)
    link_uv = np.full((s, s), -1, dtype=np.int64)
    inject: dict[int, int] = {}
    eject: dict[int, int] = {}
    swset = set(sw)
    for c, cable in enumerate(fabric.cables):
        if cable.a in swset and cable.b in swset:
            u, v = pos[cable.a], pos[cable.b]
            if link_uv[u, v] < 0:           # parallel cables: the first one carries the route
                link_uv[u, v], link_uv[v, u] = 2 * c, 2 * c + 1
        elif cable.a in swset:
            inject.setdefault(cable.b, 2 * c + 1)
            eject.setdefault(cable.b, 2 * c)
        else:
            inject.setdefault(cable.a, 2 * c)
            eject.setdefault(cable.a, 2 * c + 1)
    nxt = _next_hops(link_uv, dist)
    at = host_switches(fabric, pos)
    hcas = fabric.hcas()
    inj = np.array([inject[h] for h in hcas], dtype=np.int64)
    ej = np.array([eject[h] for h in hcas], dtype=np.int64)
    h = len(hcas)
    cur = np.repeat(at, h)
    goal = np.tile(at, h)
    hops = [np.repeat(inj, h)]
    for _ in range(int(dist.max())):
        moving = cur != goal
        step = np.where(moving, nxt[cur, goal], cur)
        hops.append(np.where(moving, link_uv[cur, step], -1))
        cur = step
    # Ejection goes right after the last switch hop: shift it into the first free slot.
    paths = np.stack(hops + [np.full(h * h, -1)], axis=1)
    first_free = (paths >= 0).sum(axis=1)
    paths[np.arange(h * h), first_free] = np.tile(ej, h)
    return paths.reshape(h, h, -1).astype(np.int32)


def _next_hops(link_uv: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """nxt[u, t]: the lowest-numbered neighbour of u one hop closer to t (u itself at t)."""
    s = len(dist)
    nxt = np.tile(np.arange(s), (s, 1))
    for u in range(s):
        nb = np.flatnonzero(link_uv[u] >= 0)
        closer = dist[nb, :] == dist[u, :] - 1          # (deg, S)
        pick = np.argmax(closer, axis=0)
        has = closer.any(axis=0)
        nxt[u, has] = nb[pick[has]]
    return nxt


def link_count(fabric: Fabric) -> int:
    return 2 * len(fabric.cables)
