"""The floyd routing engine (parx/floyd.c): SimGrid's Floyd routing installed by the stock
opensm on ibsim, compared pair by pair with a Python rendering of SimGrid's FloydZone
(src/kernel/routing/FloydZone.cpp of SimGrid: add_route, do_seal, get_local_route) on the
same graph (docs/routing.md#floyd).

The rendering is SimGrid's zone with every host and switch a netpoint, numbered in creation
order: the switches in the order of our fabric (their GUID order, the mapping floyd uses),
hosts placed among them. Floyd's routes are suffix-consistent (from any switch on the route
s->t, the route to t is the rest of it), which is what lets destination-based LFTs carry
them; the tests check that property on the rendering, then that the LFTs give exactly its
routes: between every pair of switches (their LIDs), and between every pair of hosts (every
LID of the destination).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from t2hx import ROOT
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import SWITCH_GUID_BASE, Fabric
from t2hx.fabric.shortcut import random_shortcut
from t2hx.routing.lft import Tables, load_tables
from t2hx.routing.opensm import route

PARX = ROOT / "parx"


@pytest.fixture(scope="module")
def plugin() -> Path:
    """parx/libparx.so, built (make is quiet and idempotent)."""
    subprocess.run(["make", "-s", "-C", str(PARX)], check=True)
    return PARX / "libparx.so"


def route_floyd(fab: Fabric, out: Path, lmc: int, plugin: Path) -> Tables:
    """Routes with our plugin's floyd engine, its arguments given by hand: the event plugin,
    the engine without fallback, the plane's LMC; one SL, so no QoS."""
    libs = [str(plugin.parent)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    run = route(fab, out, "floyd", lmc=lmc, timeout=120,
                extra_conf={"event_plugin_name": "parx", "routing_engine": "floyd,no_fallback"},
                env={"LD_LIBRARY_PATH": ":".join(libs)})
    s = run.summary
    assert (s["engine_used"], s["fallback"], s["vls"], s["errors"]) == ("floyd", False, 1, []), s
    assert "Floyd routes between" in run.log.read_text()
    # one SL for every (switch, LID) path
    sls = {line.split()[2] for line in (out / "parx-path-sl.dump").read_text().splitlines()
           if not line.startswith("#")}
    assert sls == {"0"}
    return load_tables(fab, out, lmc=lmc)


class FloydZone:
    """SimGrid's FloydZone on netpoints 0 .. n-1 (ids in creation order), every route one link
    (cost = its link count, 1), with the loopback SimGrid's network models add."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cost: list[list[int | None]] = [[None] * n for _ in range(n)]   # None: ULONG_MAX
        self.pred = [[-1] * n for _ in range(n)]
        self.declared: set[tuple[int, int]] = set()

    def add_route(self, src: int, dst: int, links: int = 1, symmetrical: bool = True) -> None:
        for a, b in ((src, dst), (dst, src)) if symmetrical else ((src, dst),):
            assert (a, b) not in self.declared, "SimGrid refuses a route declared twice"
            self.declared.add((a, b))
            self.cost[a][b] = links
            self.pred[a][b] = a

    def do_seal(self) -> None:
        n, cost, pred = self.n, self.cost, self.pred
        for i in range(n):
            if (i, i) not in self.declared:
                cost[i][i], pred[i][i] = 1, i
        for c in range(n):
            cost_c, pred_c = cost[c], pred[c]
            for a in range(n):
                ac = cost[a][c]
                if ac is None:
                    continue
                cost_a, pred_a = cost[a], pred[a]
                for b in range(n):
                    cb = cost_c[b]
                    if cb is not None:
                        ab = cost_a[b]
                        if ab is None or ac + cb < ab:
                            cost_a[b] = ac + cb
                            pred_a[b] = pred_c[b]

    def get_local_route(self, src: int, dst: int) -> list[int]:
        """The netpoints of the route src -> dst: the predecessor chain of row src."""
        stack, cur = [], dst
        while True:
            pred = self.pred[src][cur]
            assert pred != -1, f"no route from {src} to {dst}"
            stack.append(cur)
            cur = pred
            if cur == src:
                break
        return [src] + stack[::-1]


def simgrid_order(fab: Fabric, hosts_after_switch: bool) -> list[int]:
    """Fabric nodes as netpoints: the switches in fabric order, which must be their GUID order
    (floyd's mapping), each followed by its hosts, or all switches first, then the hosts."""
    sw = fab.switches()
    assert sw == sorted(sw, key=lambda s: fab.nodes[s].guid)
    if not hosts_after_switch:
        return sw + fab.hcas()
    return [x for s in sw for x in [s] + [h for h in fab.hcas() if fab.switch_of(h) == s]]


def simgrid_zone(fab: Fabric, order: list[int]) -> tuple[FloydZone, dict[int, int]]:
    """The zone (sealed) and fabric node -> netpoint id. A route per cabled pair, once:
    parallel cables are one route, as a platform declares it."""
    npid = {node: k for k, node in enumerate(order)}
    zone = FloydZone(len(order))
    for a, b in sorted({tuple(sorted((npid[c.a], npid[c.b]))) for c in fab.cables}):
        zone.add_route(a, b)
    zone.do_seal()
    return zone, npid


def switch_routes(fab: Fabric, zone: FloydZone, npid: dict[int, int]) -> dict[tuple, list]:
    """The route between every ordered pair of switches, as fabric nodes."""
    node_of = {k: node for node, k in npid.items()}
    return {(s, t): [node_of[x] for x in zone.get_local_route(npid[s], npid[t])]
            for s in fab.switches() for t in fab.switches() if s != t}


def suffix_violations(fab: Fabric, zone: FloydZone, npid: dict[int, int]) -> int:
    """Pairs (s, t) whose route from some node v on it to t is not the rest of it."""
    bad = 0
    for s in range(zone.n):
        for t in range(zone.n):
            if s != t:
                path = zone.get_local_route(s, t)
                bad += any(zone.get_local_route(v, t) != path[i:]
                           for i, v in enumerate(path[1:-1], 1))
    return bad


def lft_switch_path(tab: Tables, s: int, t: int) -> list[int]:
    """The switches a packet from switch s to t's LID visits."""
    lid, path = int(tab.base_lid[t, 0]), [s]
    while path[-1] != t and len(path) <= len(tab.fabric.nodes):
        port = int(tab.lft[path[-1], lid])
        assert port > 0, (path, lid, port)
        path.append(int(tab.link_dst[tab.link_of[path[-1], port]]))
    return path


def differing_pairs(fab: Fabric, tab: Tables, zone: FloydZone, npid: dict[int, int]) -> int:
    """Pairs whose LFT path is not SimGrid's route: every ordered switch pair (switch LIDs),
    every ordered host pair at each of the destination's LIDs (2^LMC)."""
    node_of = {k: node for node, k in npid.items()}
    differ = sum(lft_switch_path(tab, s, t) != path
                 for (s, t), path in switch_routes(fab, zone, npid).items())
    hcas = fab.hcas()
    src = np.array([a for a in hcas for b in hcas if a != b])
    dst = np.array([b for a in hcas for b in hcas if a != b])
    for index in range(1 << tab.lmc):
        links = tab.paths(src, tab.base_lid[dst, 1] + index)
        for k, row in enumerate(links):
            got = [int(src[k])] + [int(tab.link_dst[x]) for x in row if x >= 0]
            want = [node_of[x] for x in zone.get_local_route(npid[int(src[k])], npid[int(dst[k])])]
            differ += got != want
    return differ


def test_floyd_routes_the_mini_hyperx_as_simgrid(mini, plugin, tmp_path) -> None:
    """The HyperX plane of mini.yaml (4x4, a cable missing, 64 hosts) at its LMC."""
    fab = build_plane(mini, "hyperx")
    lmc = mini.plane("hyperx").opensm["lmc"]
    tab = route_floyd(fab, tmp_path, lmc, plugin)
    zone, npid = simgrid_zone(fab, simgrid_order(fab, hosts_after_switch=False))
    assert suffix_violations(fab, zone, npid) == 0
    assert differing_pairs(fab, tab, zone, npid) == 0


def test_floyd_routes_a_random_shortcut_network_as_simgrid(plugin, tmp_path) -> None:
    """A random shortcut network of 64 switches, degree 11 (seed 001's 2 log2 N - 1), one host
    each, LMC 1. Its switch GUIDs keep the fabric order but reverse their byte-swapped order,
    which is OpenSM's switch table order (GUIDs keyed in network byte order), as in fabrics
    beyond 255 switches such as thesis-rsn1024: floyd must order by GUID, not by that table,
    and on this graph the reversed order gives other routes."""
    n = 64
    fab = random_shortcut("rsn64", [f"rsn{i:02d}" for i in range(n)], n, 11, seed=1)
    for k, s in enumerate(fab.switches()):
        fab.nodes[s].guid = SWITCH_GUID_BASE + ((k + 1) << 8) + (n - k)
    fab.validate()
    by_table = sorted(fab.switches(), key=lambda s: int.from_bytes(
        fab.nodes[s].guid.to_bytes(8, "big"), "little"))
    assert by_table == fab.switches()[::-1]
    tab = route_floyd(fab, tmp_path, 1, plugin)
    zone, npid = simgrid_zone(fab, simgrid_order(fab, hosts_after_switch=True))
    assert suffix_violations(fab, zone, npid) == 0
    assert differing_pairs(fab, tab, zone, npid) == 0
    # the node order matters: the other order's routes differ, and hosts placed elsewhere
    # among the netpoints change none
    table_zone, table_npid = simgrid_zone(fab, by_table + fab.hcas())
    assert switch_routes(fab, table_zone, table_npid) != switch_routes(fab, zone, npid)
    alt_zone, alt_npid = simgrid_zone(fab, simgrid_order(fab, hosts_after_switch=False))
    assert switch_routes(fab, alt_zone, alt_npid) == switch_routes(fab, zone, npid)
