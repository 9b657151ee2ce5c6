"""Islands: several 2-level full-bisection fat-trees joined by one director switch, the
network of a machine grown in phases (seed 004 §4.3, Taurus: "multiple smaller 2-level
full-bisection fat-trees are connected by a 216-port director switch").

Island k has ceil(nodes_k / per_leaf) leaves, each with per_leaf hosts (the last leaf may
have fewer) and one cable to each of the island's ``spines`` spines (full bisection when
spines = per_leaf). Every spine has ``uplinks`` cables to the director. The director is what
such a chassis is inside: a 2-level fat-tree of switch chips, its line chips exposing
``director_ports`` external ports in total (half of each chip's ports, the other half to its
spine chips, each line chip cabled alike to every director spine chip). Island spines are
cabled to the director's line chips round-robin, so each island's uplinks spread over the
whole chassis.
"""

from __future__ import annotations

import math

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric


def islands(name: str, hosts: list[str], nodes: list[int], per_leaf: int, spines: int,
            uplinks: int, director_ports: int, switch_ports: int = 36,
            gbps: float = 32.0) -> Fabric:
    if sum(nodes) != len(hosts):
        raise ConfError(f"islands hold {sum(nodes)} nodes but the system has {len(hosts)}",
                        field="topology.nodes", fix="make the island sizes add up to "
                        "racks × per_rack")
    leaves = [math.ceil(n / per_leaf) for n in nodes]
    if per_leaf + spines > switch_ports or max(leaves) + uplinks > switch_ports:
        raise ConfError(f"a leaf needs {per_leaf + spines} ports and a spine "
                        f"{max(leaves) + uplinks}, more than switch_ports {switch_ports}",
                        field="topology.switch_ports", fix="use fewer nodes per leaf or "
                        "island, or larger switches")
    used = len(nodes) * spines * uplinks
    if used > director_ports:
        raise ConfError(f"{used} island uplinks exceed the director's {director_ports} ports",
                        field="topology.director_ports", fix="lower uplinks or spines")
    fabric = Fabric(name, {"kind": "islands", "nodes": list(nodes), "per_leaf": per_leaf,
                           "spines": spines, "uplinks": uplinks,
                           "director_ports": director_ports})
    line, top = _director(fabric, director_ports, switch_ports, gbps)
    host, port = 0, 0
    for k, (count, n_leaves) in enumerate(zip(nodes, leaves)):
        spine_ids = [fabric.add_node(f"is{k}-s{s}", "switch", switch_ports, level=2, island=k)
                     for s in range(spines)]
        for leaf in range(n_leaves):
            leaf_id = fabric.add_node(f"is{k}-l{leaf}", "switch", switch_ports, level=1,
                                      island=k)
            for _ in range(min(per_leaf, count - leaf * per_leaf)):
                fabric.connect(fabric.add_node(hosts[host], "hca", 1, rank=host), leaf_id,
                               gbps)
                host += 1
            for s in spine_ids:
                fabric.connect(leaf_id, s, gbps)
        for s in spine_ids:
            for _ in range(uplinks):
                fabric.connect(s, line[port % len(line)], gbps)
                port += 1
    return fabric


def _director(fabric: Fabric, ports: int, switch_ports: int, gbps: float
              ) -> tuple[list[int], list[int]]:
    """The director's line chips (external ports) and spine chips, cabled as a full-bisection
    2-level fat-tree."""
    half = switch_ports // 2
    n_line = math.ceil(ports / half)
    n_top = math.ceil(n_line * half / switch_ports)
    line = [fabric.add_node(f"dir-l{i}", "switch", switch_ports, level=3)
            for i in range(n_line)]
    top = [fabric.add_node(f"dir-s{i}", "switch", switch_ports, level=4)
           for i in range(n_top)]
    for i, chip in enumerate(line):
        for j in range(half):
            fabric.connect(chip, top[(i * half + j) % n_top], gbps)
    return line, top
