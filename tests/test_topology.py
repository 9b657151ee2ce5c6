"""Topology generators produce the graphs the papers describe; netfiles round-trip."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from t2hx.errors import ConfError
from t2hx.fabric import dragonfly, fattree, hyperx, islands, shortcut
from t2hx.fabric.netfile import read_netfile, render, write_netfile


def hosts(n: int) -> list[str]:
    return [f"h{i:04d}" for i in range(n)]


def degrees(fabric) -> Counter:
    deg: Counter = Counter()
    for c in fabric.inter_switch_cables():
        deg[c.a] += 1
        deg[c.b] += 1
    return deg


@pytest.mark.parametrize("dims", [[4, 4], [3, 5], [2, 3, 4], [6]])
def test_hyperx_is_all_to_all_in_every_dimension(dims: list[int]) -> None:
    f = hyperx.hyperx("hx", hosts(2 * math.prod(dims)), dims, 2, switch_ports=64)
    n = math.prod(dims)
    assert len(f.switches()) == n and len(f.hcas()) == 2 * n
    assert set(degrees(f).values()) == {sum(d - 1 for d in dims)}
    hops = f.hop_matrix()
    assert hops.max() == len(dims) if max(dims) > 1 else 0
    f.validate()


def test_hyperx_cable_multiplicity() -> None:
    f = hyperx.hyperx("hx", hosts(8), [2, 2], 2, multiplicity=3)
    assert len(f.inter_switch_cables()) == 4 * 3


def test_xgft_counts_match_the_formula() -> None:
    m, w, p = [14, 16, 3], [1, 18, 3], [1, 1, 6]
    f = fattree.xgft("ft", hosts(672), m, w, p)
    levels = Counter(f.nodes[s].attrs["level"] for s in f.switches())
    assert levels == {1: 48, 2: 54, 3: 54}
    assert len(f.inter_switch_cables()) == 48 * 18 + 54 * 3 * 6
    ports = Counter()
    for c in f.cables:
        ports[c.a] += 1
        ports[c.b] += 1
    assert max(ports[s] for s in f.switches()) <= 36
    assert f.hop_matrix().max() == 4  # leaf → L2 → core → L2 → leaf


def test_islands_are_full_bisection_trees_joined_by_a_full_director() -> None:
    """Seed 004's Taurus-like network (conf/systems/sc16-taurus.yaml): every island a
    2-level full-bisection tree, the director's 216 external ports all used, its chips a
    full-bisection 2-level tree, and an island's hosts at most 4 switch hops from any other's."""
    sizes = [270, 108, 180, 486, 485, 485]
    f = islands.islands("ib", hosts(2014), sizes, 18, 18, 2, 216)
    f.validate()
    sw = f.switches()
    level = Counter(f.nodes[s].attrs["level"] for s in sw)
    assert level == {1: sum(math.ceil(n / 18) for n in sizes), 2: 6 * 18, 3: 12, 4: 6}
    deg = Counter()
    for c in f.cables:
        deg[c.a] += 1
        deg[c.b] += 1
    assert max(deg[s] for s in sw) <= 36
    line = [s for s in sw if f.nodes[s].attrs["level"] == 3]
    top = [s for s in sw if f.nodes[s].attrs["level"] == 4]
    assert all(deg[s] == 36 for s in line + top)         # 18 outside + 18 inside, 36 up
    for s in sw:
        if f.nodes[s].attrs["level"] == 1:              # as many uplinks as hosts (at most)
            up = sum(1 for c in f.cables if s in (c.a, c.b) and f.nodes[c.a if c.b == s else
                                                                      c.b].kind == "switch")
            assert up == 18
    first = [h for h in f.hcas() if f.nodes[h].name == "h0000"][0]
    assert f.switch_of(first) == f.switch_of(f.index("h0017"))
    assert f.switch_of(first) != f.switch_of(f.index("h0018"))
    assert f.hop_matrix().max() <= 4


@pytest.mark.parametrize("args,field", [
    (([270, 100], 18, 18, 2, 216), "topology.nodes"),               # 370 != 2014 hosts
    (([1000, 1014], 18, 18, 2, 216), "topology.switch_ports"),      # 56 leaves per spine
    (([1007, 1007], 18, 18, 8, 216), "topology.switch_ports"),
    (([400] * 5 + [14], 18, 18, 3, 216), "topology.director_ports"),
])
def test_islands_refuse_what_does_not_fit(args, field: str) -> None:
    with pytest.raises(ConfError) as err:
        islands.islands("ib", hosts(2014), *args)
    assert err.value.field == field


def test_kary_ntree_full_bisection_and_taper() -> None:
    full = fattree.kary("ft", hosts(64), 4, 3)
    assert len(full.switches()) == 3 * 16
    up = sum(1 for c in full.inter_switch_cables()
             if full.nodes[c.a].attrs["level"] == 1 or full.nodes[c.b].attrs["level"] == 1)
    assert up == 64  # one uplink per host below: 1:1
    tapered = fattree.kary("ft", hosts(64), 4, 3, taper=0.5)
    up2 = sum(1 for c in tapered.inter_switch_cables()
              if tapered.nodes[c.a].attrs["level"] == 1 or tapered.nodes[c.b].attrs["level"] == 1)
    assert up2 == 32  # 2:1 oversubscription


def test_multi_rail_hosts_have_one_port_per_rail() -> None:
    f = fattree.kary("ft", hosts(16), 4, 2, rails=2)
    h = f.hcas()[0]
    assert f.nodes[h].ports == 2
    peers = {c.b for c in f.cables if c.a == h}
    assert len(peers) == 2  # two different leaves
    f.validate()


def test_random_shortcut_is_regular_connected_and_seeded() -> None:
    a = shortcut.random_shortcut("sc", hosts(64), 64, 5, seed=3)
    b = shortcut.random_shortcut("sc", hosts(64), 64, 5, seed=3)
    c = shortcut.random_shortcut("sc", hosts(64), 64, 5, seed=4)
    deg = degrees(a)
    assert sum(1 for v in deg.values() if v != 5) <= 1
    ring = {(min(i, (i + 1) % 64), max(i, (i + 1) % 64)) for i in range(64)}
    edges = {(min(x.a, x.b), max(x.a, x.b)) for x in a.inter_switch_cables()}  # switches first
    assert ring <= edges
    assert [(x.a, x.b) for x in a.cables] == [(x.a, x.b) for x in b.cables]
    assert [(x.a, x.b) for x in a.cables] != [(x.a, x.b) for x in c.cables]
    assert (a.hop_matrix() >= 0).all()


def test_random_shortcut_1024_degree_19_as_in_seed_001() -> None:
    edges = shortcut.random_shortcut_edges(1024, 19, 1)
    deg = np.bincount(np.array(edges).ravel(), minlength=1024)
    assert (deg == 19).sum() >= 1023 and len(set(edges)) == len(edges)


def test_circulant_jumps() -> None:
    f = shortcut.circulant("c", hosts(16), 16, [1, 4])
    assert set(degrees(f).values()) == {4}
    hops = f.hop_matrix()
    assert hops[0, 4] == 1 and hops[0, 8] == 2
    with pytest.raises(ConfError, match="exceeds n/2"):
        shortcut.circulant("c", hosts(16), 16, [1, 9])


def test_dragonfly_plane_has_full_groups_and_spread_global_links() -> None:
    """64 switches of degree 7: groups of 4 (3 local + 4 global links each); the 128 global
    links join every pair of the 16 groups once before any pair twice; one host per switch
    in switch order."""
    f = dragonfly.dragonfly("df", hosts(64), 64, 7)
    assert f.topology["group_size"] == 4 and set(degrees(f).values()) == {7}
    group = {i: int(n.name.removeprefix("sc-")) // 4 for i, n in enumerate(f.nodes)
             if n.kind == "switch"}
    pairs = Counter(tuple(sorted((group[c.a], group[c.b]))) for c in f.inter_switch_cables())
    assert all(pairs[(g, g)] == 6 for g in range(16))                 # complete K4 inside
    glob = [n for (a, b), n in pairs.items() if a != b]
    assert len(glob) == 120 and set(glob) == {1, 2} and sum(glob) == 128
    assert f.switch_of(f.index("h0005")) == f.index("sc-5")
    with pytest.raises(ConfError, match="must be below"):
        dragonfly.dragonfly("df", hosts(8), 8, 8)


def test_netfile_round_trip(tmp_path: Path) -> None:
    f = hyperx.hyperx("hx", hosts(32), [4, 4], 2)
    path = write_netfile(f, tmp_path / "hx.net")
    g = read_netfile(path, "copy", hosts(32))
    assert [n.name for n in g.nodes if n.kind == "hca"] == hosts(32)
    def key(fab):
        return sorted(tuple(sorted([(fab.nodes[c.a].name, c.pa), (fab.nodes[c.b].name, c.pb)]))
                      for c in fab.cables)
    assert key(f) == key(g)
    assert {n.name: n.guid for n in f.nodes} == {n.name: n.guid for n in g.nodes}
    assert render(g).count("\n") > 0


def test_reading_ibnetdiscover_output(tmp_path: Path) -> None:
    """ibnetdiscover's own format: GUID-named nodes, descriptions, lid/width comments."""
    text = (
        'switchguid=0x0008f10400410015\n'
        'Switch\t8 "S-0008f10400410015"\t\t# "ISR9024 Voltaire" base port 0 lid 1 lmc 0\n'
        '[1]\t"H-0008f10403960558"[1](8f10403960559) \t\t# "node1 mlx4_0" lid 4 4xQDR\n'
        '[2]\t"H-0008f10403961354"[1](8f10403961355) \t\t# "node2 mlx4_0" lid 5 4xQDR\n'
        '\n'
        'Ca\t2 "H-0008f10403960558"\t\t# "node1 mlx4_0"\n'
        '[1](8f10403960559) \t"S-0008f10400410015"[1]\t\t# lid 4 lmc 0 "ISR9024 Voltaire" lid 1 4xQDR\n'
        '\n'
        'Ca\t2 "H-0008f10403961354"\t\t# "node2 mlx4_0"\n'
        '[1](8f10403961355) \t"S-0008f10400410015"[2]\t\t# lid 5 lmc 0 "ISR9024 Voltaire" lid 1 4xQDR\n'
    )
    path = tmp_path / "ibnet.out"
    path.write_text(text)
    f = read_netfile(path, "real", ["node1", "node2"])
    assert f.hosts() == ["node1", "node2"]
    assert len(f.cables) == 2
    assert f.nodes[f.index("node1")].guid == 0x0008f10403960558
    with pytest.raises(ConfError, match="node3"):
        read_netfile(path, "real", ["node1", "node3"])
