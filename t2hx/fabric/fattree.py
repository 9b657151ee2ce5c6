"""Fat-trees as extended generalized fat-trees, XGFT(h; m1..mh; w1..wh), with parallel
cables p1..ph per parent link.

A level-l vertex is labelled (A, B): A = (a_{l+1}..a_h) picks its subtree, B = (b_1..b_l)
its copy. Vertex (a_l·A, B) at level l-1 links to (A, B·b_l) at level l for every
b_l < w_l. Level 0 are the hosts, with w_1 * p_1 HCA ports. Multi-rail hosts come two ways:
w_1 > 1 cables each host to w_1 leaf copies, which share no switch, so the copies form
disjoint subnets (one OpenSM sees one of them: that is a dual-plane system, and
t2hx.fabric.build refuses such a plane); p_1 > 1 cables each host p_1 times to one leaf,
which keeps one connected plane (docs/fattree-configs.md).
k-ary n-trees are XGFT(n; k..k; 1, k..k); tapering lowers w above the leaves.
"""

from __future__ import annotations

import itertools
import math

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric


def labels(m: list[int], w: list[int], level: int) -> list[tuple[tuple, tuple]]:
    """All (A, B) labels of a level, with a_{l+1} varying fastest (hosts of one leaf and
    leaves of one pod stay consecutive)."""
    a_ranges = [range(x) for x in m[level:]]
    b_ranges = [range(x) for x in w[:level]]
    out = []
    for b in itertools.product(*reversed(b_ranges)):
        for a in itertools.product(*reversed(a_ranges)):
            out.append((tuple(reversed(a)), tuple(reversed(b))))
    return out


def xgft(name: str, hosts: list[str], m: list[int], w: list[int], p: list[int] | None = None,
         switch_ports: int = 36, gbps: float = 32.0) -> Fabric:
    h = len(m)
    p = p or [1] * h
    fabric = Fabric(name, {"kind": "xgft", "m": list(m), "w": list(w), "p": list(p)})
    room = math.prod(m)
    if len(hosts) > room:
        raise ConfError(f"topology has room for {room} hosts but the system has {len(hosts)}",
                        field="topology.m", fix="enlarge m or lower racks/per_rack")
    index: dict[tuple[int, tuple, tuple], int] = {}
    for k, (a, b) in enumerate(labels(m, w, 0)[:len(hosts)]):
        index[(0, a, b)] = fabric.add_node(hosts[k], "hca", w[0] * p[0], rank=k)
    for level in range(1, h + 1):
        for k, (a, b) in enumerate(labels(m, w, level)):
            index[(level, a, b)] = fabric.add_node(
                f"ft-l{level}-{k}", "switch", switch_ports, level=level, a=a, b=b)
    for level in range(1, h + 1):
        for (lvl, a, b), child in list(index.items()):
            if lvl != level - 1:
                continue
            for bl in range(w[level - 1]):
                parent = index[(level, a[1:], b + (bl,))]
                for _ in range(p[level - 1]):
                    fabric.connect(child, parent, gbps)
    return fabric


def kary_shape(k: int, n: int, taper: float = 1.0, rails: int = 1
               ) -> tuple[list[int], list[int]]:
    """XGFT (m, w) of a k-ary n-tree."""
    up = max(1, round(k * taper))
    return [k] * n, ([rails] + [up] + [k] * (n - 2) if n > 1 else [rails])


def kary(name: str, hosts: list[str], k: int, n: int, taper: float = 1.0, rails: int = 1,
         switch_ports: int | None = None, gbps: float = 32.0) -> Fabric:
    """k-ary n-tree with 2k-port switches; ``taper`` < 1 keeps that share of leaf uplinks
    (0.5 = 2:1 oversubscription); ``rails`` cables each host to that many leaves."""
    m, w = kary_shape(k, n, taper, rails)
    ports = switch_ports or 2 * k
    return xgft(name, hosts, m, w, None, ports, gbps)
