"""A Dragonfly of given switch count and switch degree (seed 001 §5.1's baseline): groups of
``a`` switches fully connected inside, ``h = degree − (a − 1)`` global links per switch,
global links spread over the group pairs in rounds so that every pair of groups gets one
before any pair gets two (the "balanced" arrangement), one node per switch.

Seed 001 builds the 1,024-switch Dragonfly of degree 19 as 64 groups of 16 switches with 4
global links each (§5.2.2); :func:`group_size` picks that: among the group sizes dividing
the switch count whose global ports reach every other group, the one closest to Kim et al.'s
balance (a = 2h, i.e. a = 2(d + 1)/3; at 1,024 switches 16 is the only such size). Where none does (the switch
count outgrows what degree ``d`` can make diameter-3: about ``a·(a·h + 1)`` switches), it
takes the group size that reaches the most groups, and the diameter grows past 3: that is a
property of the degree, and the analysis reports it as it comes out.
"""

from __future__ import annotations

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric
from t2hx.fabric.shortcut import switch_graph_fabric


def group_size(n: int, degree: int) -> int:
    """Switches per group for ``n`` switches of ``degree`` inter-switch links."""
    sizes = [a for a in range(2, min(degree, n) + 1) if n % a == 0]
    if not sizes:
        raise ConfError(f"no group size divides {n} switches with degree {degree}",
                        field="topology.switches",
                        fix="use a switch count with a divisor ≤ degree")
    full = [a for a in sizes if n // a - 1 <= a * (degree - a + 1)]
    if full:
        return min(full, key=lambda a: (abs(a - 2 * (degree + 1) / 3), a))
    return max(sizes, key=lambda a: (a * (degree - a + 1) / (n // a - 1), a))


def dragonfly_edges(n: int, degree: int) -> list[tuple[int, int]]:
    """Switch pairs (i < j) of the Dragonfly; switch ``i`` is in group ``i // a``."""
    a = group_size(n, degree)
    groups, h = n // a, degree - (a - 1)
    edges = {(g * a + i, g * a + j) for g in range(groups) for i in range(a)
             for j in range(i + 1, a)}
    free = {g: [g * a + s for _ in range(h) for s in range(a)] for g in range(groups)}
    pairs = sorted(((x, y) for x in range(groups) for y in range(x + 1, groups)),
                   key=lambda p: (min(p[1] - p[0], groups - p[1] + p[0]), p))
    while True:
        added = False
        for x, y in pairs:
            link = _global_link(free[x], free[y], edges)
            if link:
                edges.add(link)
                added = True
        if not added:
            return sorted(edges)


def _global_link(xs: list[int], ys: list[int], edges: set) -> tuple[int, int] | None:
    """Take the first free port of each group whose switches are not linked yet."""
    for i, u in enumerate(xs):
        for j, v in enumerate(ys):
            e = (min(u, v), max(u, v))
            if e not in edges:
                del xs[i], ys[j]
                return e
    return None


def dragonfly(name: str, hosts: list[str], switches: int, degree: int,
              nodes_per_switch: int = 1, switch_ports: int = 36, gbps: float = 32.0) -> Fabric:
    """The Dragonfly as a plane; switch ``sc-i`` is in group ``i // group_size`` (so the
    ring and linear placements fill one group after another, as the thesis' ring-based
    consecutive mapping on its Dragonfly does, §5.2.2)."""
    if degree >= switches:
        raise ConfError(f"degree {degree} must be below the {switches} switches",
                        field="topology.degree", fix="pick a degree between 2 and switches-1")
    kind = {"kind": "dragonfly", "switches": switches, "degree": degree,
            "group_size": group_size(switches, degree)}
    return switch_graph_fabric(name, kind, hosts, switches, dragonfly_edges(switches, degree),
                               nodes_per_switch, switch_ports, gbps)
