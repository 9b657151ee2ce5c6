"""Build the fabric of one plane of a system conf: generator, hosts, missing cables."""

from __future__ import annotations

from collections import deque

import numpy as np

from t2hx.conf import Plane, System
from t2hx.errors import ConfError
from t2hx.fabric import dragonfly, fattree, hyperx, islands, shortcut
from t2hx.fabric.graph import Cable, Fabric
from t2hx.fabric.sitefabric import options_for, read_dump


def build_plane(system: System, plane_name: str) -> Fabric:
    plane = system.plane(plane_name)
    hosts = system.hostnames()
    fabric = generate(plane, hosts, system)
    fabric.name = f"{system.name}-{plane_name}"
    fabric.topology["hca"] = plane.hca
    if plane.topology["kind"] != "ibnetdiscover":
        # Each plane has its own HCAs and switches: keep their GUIDs apart, so the dumps of
        # one plane can never be mistaken for the other's.
        salt = (list(system.planes).index(plane_name) + 1) << 28
        for node in fabric.nodes:
            node.guid += salt
    remove_missing(fabric, plane, system)
    try:
        fabric.validate(system.path)
    except ConfError as err:
        raise ConfError(err.message, file=system.path, field=f"planes.{plane_name}.{err.field}",
                        fix=err.fix) from None
    _check_one_subnet(fabric, plane, system)
    return fabric


#: How to get several HCA ports per host without splitting the switches into subnets.
_SUBNET_FIX = {
    "kary": "drop rails (k-ary trees cable each rail to its own leaf copy, which shares no "
            "switch with the others); for dual rail use kind: xgft with p: [2, ...] (both "
            "ports to one leaf) or a second plane with its own hca: (docs/fattree-configs.md)",
    "xgft": "use w[0]: 1 with p[0] > 1 (every port to one leaf), or a second plane with its "
            "own hca: (docs/fattree-configs.md)",
}


def _check_one_subnet(fabric: Fabric, plane: Plane, system: System) -> None:
    """One plane is one subnet under one OpenSM: switches that meet only through HCAs (which
    do not forward) would leave all but one part unrouted, and the routing step would then
    blame its dumps instead of the conf."""
    parts = fabric.subnets()
    if parts > 1:
        kind = plane.topology["kind"]
        raise ConfError(f"the {kind} topology builds {parts} switch networks joined only "
                        "through hosts, but one plane is one subnet routed by one OpenSM",
                        file=system.path, field=f"planes.{plane.name}.topology",
                        fix=_SUBNET_FIX.get(kind, "cable the switches into one network"))


def check_planes(system: System) -> None:
    """Build every plane (milliseconds each): an error in a plane no command has used yet,
    e.g. more missing cables than it has, fails now and not when that plane's turn comes."""
    for name in system.planes:
        build_plane(system, name)


def generate(plane: Plane, hosts: list[str], system: System) -> Fabric:
    t, g = plane.topology, plane.gbps
    where = f"planes.{plane.name}.topology"
    if t["kind"] == "ibnetdiscover":
        # A dump's errors already name the dump and its line, or the conf field that fixes
        # them (t2hx.fabric.sitefabric): pass them on unchanged.
        return read_dump(system.path.parent / t["file"], plane.name,
                         options_for(t, plane.hca, plane.name, system.path), hosts, g)
    try:
        match t["kind"]:
            case "hyperx":
                return hyperx.hyperx(plane.name, hosts, t["dims"], t["nodes_per_switch"],
                                     t["multiplicity"], t["switch_ports"], g)
            case "xgft":
                return fattree.xgft(plane.name, hosts, t["m"], t["w"], t["p"],
                                    t["switch_ports"], g)
            case "kary":
                return fattree.kary(plane.name, hosts, t["k"], t["n"], t["taper"], t["rails"],
                                    t["switch_ports"], g)
            case "shortcut":
                return shortcut.random_shortcut(plane.name, hosts, t["switches"], t["degree"],
                                                t["nodes_per_switch"], t["seed"],
                                                t["switch_ports"], g)
            case "islands":
                return islands.islands(plane.name, hosts, t["nodes"], t["per_leaf"],
                                       t["spines"], t["uplinks"], t["director_ports"],
                                       t["switch_ports"], g)
            case "circulant":
                return shortcut.circulant(plane.name, hosts, t["switches"], t["offsets"],
                                          t["nodes_per_switch"], t["switch_ports"], g)
            case "dragonfly":
                return dragonfly.dragonfly(plane.name, hosts, t["switches"], t["degree"],
                                           t["nodes_per_switch"], t["switch_ports"], g)
    except ConfError as err:
        # Generators name no file: the conf is at fault, at the generator's field.
        sub = (err.field or "").removeprefix("topology") if (err.field or "").startswith(
            "topology") else ""
        raise ConfError(err.message, file=err.file or system.path, field=where + sub,
                        fix=err.fix) from None
    raise AssertionError(t["kind"])  # conf validation admits only the kinds above


def remove_missing(fabric: Fabric, plane: Plane, system: System) -> None:
    spec = plane.missing_cables
    where = f"planes.{plane.name}.missing_cables"
    doomed = [_named_cable(fabric, pair, system, f"{where}.list") for pair in spec["list"]]
    fabric.remove_cables(doomed)
    if spec["random"]:
        fabric.remove_cables(random_cables(fabric, spec["random"], spec["seed"], system, where))


def _named_cable(fabric: Fabric, pair: list[str], system: System, where: str) -> Cable:
    a, b = (fabric._index.get(n) for n in pair)
    if a is None or b is None:
        bad = pair[0] if a is None else pair[1]
        raise ConfError(f"unknown switch '{bad}'", file=system.path, field=where,
                        fix="name switches as the generator does (see `t2hx fabric build`)")
    for c in fabric.cables:
        if {c.a, c.b} == {a, b}:
            return c
    raise ConfError(f"no cable between '{pair[0]}' and '{pair[1]}'", file=system.path,
                    field=where, fix="list only cables the topology has")


def random_cables(fabric: Fabric, count: int, seed: int, system: System,
                  where: str) -> list[Cable]:
    """``count`` inter-switch cables drawn with ``seed``; a draw that would disconnect the
    fabric is passed over (a real site cannot run a partitioned plane either)."""
    pool = fabric.inter_switch_cables()
    if count > len(pool):
        raise ConfError(f"{count} missing cables but only {len(pool)} inter-switch cables",
                        file=system.path, field=f"{where}.random", fix="lower the count")
    order = np.random.default_rng(seed).permutation(len(pool))
    degree: dict[tuple[int, int], int] = {}
    for c in fabric.cables:
        key = (min(c.a, c.b), max(c.a, c.b))
        degree[key] = degree.get(key, 0) + 1
    chosen: list[Cable] = []
    for k in order:
        if len(chosen) == count:
            break
        cable = pool[k]
        key = (min(cable.a, cable.b), max(cable.a, cable.b))
        degree[key] -= 1
        if degree[key] == 0 and not _connected_without(fabric, key, degree):
            degree[key] += 1
            continue
        chosen.append(cable)
    if len(chosen) < count:
        raise ConfError(f"cannot remove {count} cables without partitioning the fabric",
                        file=system.path, field=f"{where}.random", fix="lower the count")
    return chosen


def _connected_without(fabric: Fabric, gone: tuple[int, int], degree: dict) -> bool:
    adj: dict[int, list[int]] = {}
    for (a, b), n in degree.items():
        if n > 0:
            adj.setdefault(a, []).append(b)
            adj.setdefault(b, []).append(a)
    start, goal = gone
    seen, queue = {start}, deque([start])
    while queue:
        u = queue.popleft()
        if u == goal:
            return True
        for v in adj.get(u, ()):
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return False
