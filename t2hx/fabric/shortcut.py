"""Ring-based shortcut topologies (seed 001): random shortcut (ring + random links until
every switch has the same degree) and circulant C(n; c1..ck) (ring + fixed jumps)."""

from __future__ import annotations

import numpy as np

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric
from t2hx.fabric.hyperx import attach_hosts


def random_shortcut_edges(n: int, degree: int, seed: int) -> list[tuple[int, int]]:
    """Ring edges plus random shortcuts; each switch ends with ``degree`` links where the
    parity allows (n·degree odd leaves one switch one short). Simple graph: no self-loops,
    no parallel links. Stubs are matched at random, retrying clashes with a fresh shuffle."""
    if degree < 2 or degree >= n:
        raise ConfError(f"degree {degree} must be in 2..{n - 1}", field="topology.degree",
                        fix="pick a degree between 2 and switches-1")
    rng = np.random.default_rng(seed)
    edges = {(min(i, (i + 1) % n), max(i, (i + 1) % n)) for i in range(n)}
    for _attempt in range(200):
        extra = set(edges)
        stubs = np.repeat(np.arange(n), degree - 2)
        for _round in range(50):
            rng.shuffle(stubs)
            left = []
            for a, b in zip(stubs[0::2], stubs[1::2]):
                e = (min(a, b), max(a, b))
                if a == b or e in extra:
                    left += [a, b]
                else:
                    extra.add((int(e[0]), int(e[1])))
            if len(left) <= 1:
                return sorted(extra)
            stubs = np.array(left)
    raise ConfError(f"could not draw a {degree}-regular shortcut graph on {n} switches",
                    field="topology.seed", fix="try another seed or degree")


def circulant_edges(n: int, offsets: list[int]) -> list[tuple[int, int]]:
    if 1 not in offsets:
        offsets = [1] + list(offsets)
    bad = [c for c in offsets if c > n // 2]
    if bad:
        raise ConfError(f"jump {bad[0]} exceeds n/2 = {n // 2}", field="topology.offsets",
                        fix="use jumps between 1 and switches/2")
    return sorted({(min(i, (i + c) % n), max(i, (i + c) % n))
                   for c in offsets for i in range(n)})


def switch_graph_fabric(name: str, kind: dict, hosts: list[str], n: int,
                        edges: list[tuple[int, int]], nodes_per_switch: int, switch_ports: int,
                        gbps: float) -> Fabric:
    """Switches ``sc-0`` … ``sc-{n-1}`` (coordinate = index, the ring order), hosts in switch
    order, one cable per edge."""
    fabric = Fabric(name, kind)
    switches = [fabric.add_node(f"sc-{i}", "switch", switch_ports, coord=(i,)) for i in range(n)]
    attach_hosts(fabric, hosts, switches, nodes_per_switch, gbps)
    for a, b in edges:
        fabric.connect(switches[a], switches[b], gbps)
    return fabric


def random_shortcut(name: str, hosts: list[str], switches: int, degree: int,
                    nodes_per_switch: int = 1, seed: int = 1, switch_ports: int = 36,
                    gbps: float = 32.0) -> Fabric:
    kind = {"kind": "shortcut", "switches": switches, "degree": degree, "seed": seed}
    return switch_graph_fabric(name, kind, hosts, switches,
                               random_shortcut_edges(switches, degree, seed), nodes_per_switch,
                               switch_ports, gbps)


def circulant(name: str, hosts: list[str], switches: int, offsets: list[int],
              nodes_per_switch: int = 1, switch_ports: int = 36, gbps: float = 32.0) -> Fabric:
    kind = {"kind": "circulant", "switches": switches, "offsets": list(offsets)}
    return switch_graph_fabric(name, kind, hosts, switches, circulant_edges(switches, offsets),
                               nodes_per_switch, switch_ports, gbps)


def edge_fabric(n: int, edges: list[tuple[int, int]]) -> Fabric:
    """A fabric of ``n`` switches joined by ``edges``, one node per switch (for graph-level
    analyses that reuse the fabric-based mappings)."""
    return switch_graph_fabric("graph", {"kind": "graph", "switches": n},
                               [f"n{i:05d}" for i in range(n)], n, edges, 1, n, 1.0)
