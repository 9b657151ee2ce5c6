"""The usable nodes of a system and the study's node-count ladders (docs/modelling.md#the-study)."""

from __future__ import annotations

from collections.abc import Iterable

from t2hx.conf import System
from t2hx.errors import T2hxError

#: Capability ladders of the study: multiples of 7 (one HyperX switch holds 7 nodes) and
#: powers of two for codes that need them (seed 000 §4.4.1).
LADDERS: dict[str, tuple[int, ...]] = {
    "sevens": (7, 14, 28, 56, 112, 224, 448, 672),
    "powers": (4, 8, 16, 32, 64, 128, 256, 512),
}


class PlacementError(T2hxError):
    """A placement request cannot be met."""


def ladder_counts(limit: int) -> list[int]:
    """Every ladder count that fits into ``limit`` usable nodes, ascending."""
    return sorted({n for ladder in LADDERS.values() for n in ladder if n <= limit})


def usable_nodes(system: System, nodes: Iterable[str] | None = None) -> list[str]:
    """Hostnames in physical order (the conf's rack-major order), down nodes excluded.

    ``nodes`` restricts the list to an allocation (e.g. what a scheduler granted); naming a
    node the system lacks, one marked down, or one twice is an error, not a silent skip."""
    order = system.hostnames()
    down = set(system.nodes["down"])
    if nodes is None:
        return [h for h in order if h not in down]
    wanted = list(nodes)
    known = set(order)
    seen: set[str] = set()
    for name in wanted:
        if name not in known:
            raise PlacementError(f"node '{name}' is not a host of system '{system.name}'",
                                 file=system.path, field="nodes",
                                 fix="list hostnames the conf's nodes.hostname pattern produces")
        if name in down:
            raise PlacementError(f"node '{name}' is marked down", file=system.path,
                                 field="nodes.down", fix=f"drop '{name}' from the node list "
                                 "or remove it from nodes.down once it is repaired")
        if name in seen:
            raise PlacementError(f"node '{name}' is listed twice", field="nodes",
                                 fix="list every node once")
        seen.add(name)
    return [h for h in order if h in seen]


def check_count(n: int, available: int, where: object = None) -> None:
    if n < 1:
        raise PlacementError(f"node count {n} is not positive", file=where, field="count",
                             fix="ask for at least one node")
    if n > available:
        raise PlacementError(f"{n} nodes requested but only {available} usable", file=where,
                             field="count", fix=f"ask for at most {available} nodes or "
                             "repair nodes listed in nodes.down")
