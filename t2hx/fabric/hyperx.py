"""n-dimensional HyperX: switches on a grid, all-to-all in every dimension."""

from __future__ import annotations

import itertools

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric


def coords(dims: list[int]) -> list[tuple[int, ...]]:
    """Grid coordinates with dimension 0 varying fastest (so a rack of consecutive switches
    lies along dimension 0, as on the rewired TSUBAME2)."""
    return [tuple(reversed(c)) for c in itertools.product(*(range(d) for d in reversed(dims)))]


def switch_name(c: tuple[int, ...]) -> str:
    return "hx-" + "-".join(str(v) for v in c)


def hyperx(name: str, hosts: list[str], dims: list[int], nodes_per_switch: int,
           multiplicity: int = 1, switch_ports: int = 36, gbps: float = 32.0) -> Fabric:
    fabric = Fabric(name, {"kind": "hyperx", "dims": list(dims),
                           "nodes_per_switch": nodes_per_switch})
    grid = coords(dims)
    switches = [fabric.add_node(switch_name(c), "switch", switch_ports, coord=c) for c in grid]
    attach_hosts(fabric, hosts, switches, nodes_per_switch, gbps)
    pos = {c: s for c, s in zip(grid, switches)}
    for c in grid:
        for dim, size in enumerate(dims):
            for other in range(c[dim] + 1, size):
                peer = c[:dim] + (other,) + c[dim + 1:]
                for _ in range(multiplicity):
                    fabric.connect(pos[c], pos[peer], gbps)
    return fabric


def attach_hosts(fabric: Fabric, hosts: list[str], edges: list[int], per_edge: int,
                 gbps: float) -> None:
    """Host k goes to edge switch k // per_edge, in edge order: hostname order then follows
    the physical layout (racks of consecutive switches)."""
    room = len(edges) * per_edge
    if len(hosts) > room:
        raise ConfError(f"topology has room for {room} hosts but the system has {len(hosts)}",
                        field="topology.nodes_per_switch",
                        fix="enlarge the topology or lower racks/per_rack")
    for k, host in enumerate(hosts):
        h = fabric.add_node(host, "hca", 1, rank=k)
        fabric.connect(h, edges[k // per_edge], gbps)
