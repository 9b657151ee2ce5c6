"""The six fat-tree configurations of seed 003 (Table 1) at 4,608 nodes: counts match the
layout documented in docs/fattree-configs.md, and real OpenSM (ftree) routes them. The
4,608-node routing of every configuration is bench/scale.py's job; here the smallest one is
routed, plus a small dual-rail analogue whose tables are checked pair by pair."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx.cli import main
from t2hx.conf import load_system, system_path
from t2hx.fabric import cost
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from t2hx.routing.opensm import route

NODES = 4608
# name: (gbps, rails, planes, taper, hosts per leaf, pods, leaves per pod, cores per L2 switch)
LAYOUT = {
    "sc17-sr-edr": (100.0, 1, 1, 1, 18, 16, 16, 8),
    "sc17-drp-t-edr": (100.0, 2, 2, 2, 24, 12, 16, 8),
    "sc17-drp-edr": (100.0, 2, 2, 1, 18, 16, 16, 8),
    "sc17-sr-hdr": (200.0, 1, 1, 1, 18, 16, 16, 8),
    "sc17-dr-t-hdr": (200.0, 2, 1, 2, 12, 24, 16, 16),
    "sc17-dr-hdr": (200.0, 2, 1, 1, 9, 32, 16, 16),
}


def expected(layout: tuple) -> dict:
    """Counts of one plane from the documented layout, independent of the generator."""
    gbps, rails, planes, taper, per_leaf, pods, leaves, cores = layout
    ports_per_host = rails // planes
    down = per_leaf * ports_per_host
    up = down // taper
    l2 = pods * up
    l3 = up * cores
    return {"leaves": pods * leaves, "l2": l2, "l3": l3,
            "switches": pods * leaves + l2 + l3,
            "host_cables": NODES * ports_per_host,
            "switch_cables": pods * leaves * up + l2 * leaves,
            "leaf_ports": down + up, "l2_ports": 2 * leaves, "l3_ports": leaves * pods // cores}


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_counts_match_the_documented_layout(name: str) -> None:
    system = load_system(system_path(name))
    gbps, rails, planes, taper = LAYOUT[name][:4]
    assert len(system.hostnames()) == NODES
    assert len(system.planes) == planes
    want = expected(LAYOUT[name])
    for plane_name in system.planes:
        assert system.plane(plane_name).gbps == gbps
        fabric = build_plane(system, plane_name)
        got = cost.plane_counts(fabric)
        assert got["levels"] == {1: want["leaves"], 2: want["l2"], 3: want["l3"]}
        assert got["host_cables"] == want["host_cables"]
        assert got["switch_cables"] == want["switch_cables"]
        assert got["subnets"] == 1  # one OpenSM must see every switch of the plane
        used: dict[int, int] = {}
        for c in fabric.cables:
            used[c.a] = used.get(c.a, 0) + 1
            used[c.b] = used.get(c.b, 0) + 1
        for level, key in ((1, "leaf_ports"), (2, "l2_ports"), (3, "l3_ports")):
            ports = {used[s] for s in fabric.switches() if fabric.nodes[s].attrs["level"] == level}
            assert ports == {want[key]} and want[key] <= 36
        hca = fabric.hcas()[0]
        assert sum(1 for c in fabric.cables if hca in (c.a, c.b)) == rails // planes
        # Tapering: leaf downlinks / uplinks as Table 1 says.
        leaf = next(s for s in fabric.switches() if fabric.nodes[s].attrs["level"] == 1)
        hosts_down = sum(1 for c in fabric.cables if leaf in (c.a, c.b)
                         and fabric.nodes[c.b if c.a == leaf else c.a].kind == "hca")
        assert hosts_down == taper * (used[leaf] - hosts_down)
    total = cost.system_counts(system)
    assert total["switches"] == planes * want["switches"]
    assert total["cables"] == planes * (want["host_cables"] + want["switch_cables"])
    assert total["hca_ports"] == NODES * rails


def test_cost_table_cli(capsys) -> None:
    names = [str(system_path(n)) for n in LAYOUT]
    assert main(["fabric", "cost", *names, "--reference", "sc17-sr-edr"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 + len(LAYOUT)
    row = next(line for line in out if "| sc17-dr-hdr |" in line).split("|")
    assert row[-3].strip() == "2.00" and row[-2].strip() == "2.00"  # twice SR-EDR
    assert main(["fabric", "cost", names[0], "--reference", "nope"]) == 2
    assert "--reference" in capsys.readouterr().err


def test_xgft_w1_rails_split_into_subnets_p1_rails_do_not() -> None:
    from t2hx.fabric import fattree
    hosts = [f"h{i}" for i in range(16)]
    split = fattree.xgft("ft", hosts, [4, 4], [2, 4])
    joined = fattree.xgft("ft", hosts, [2, 8], [1, 4], [2, 1])
    assert split.subnets() == 2 and joined.subnets() == 1
    assert joined.nodes[joined.hcas()[0]].ports == 2


def test_smallest_configuration_routes_at_full_scale(tmp_path: Path) -> None:
    system = load_system(system_path("sc17-drp-t-edr"))
    fabric = build_plane(system, "fattree")
    run = route(fabric, tmp_path, "ftree", timeout=600)
    assert run.summary["engine_used"] == "ftree" and not run.summary["fallback"]
    assert not run.summary["errors"]
    log = (tmp_path / "opensm.log").read_text()
    assert f"Fabric has {NODES} CAs, {NODES} CA ports ({NODES} of them CNs), 432 switches" in log


def test_dual_rail_analogue_routes_both_ports_of_every_host(tmp_path: Path) -> None:
    """DR-HDR's shape (two ports per host on one leaf, 1:1) at 3 pods x 4 leaves x 3 hosts."""
    conf = {
        "name": "sc17-dr-mini", "description": "dual-rail analogue",
        "nodes": {"hostname": "d{index:02d}", "racks": 1, "per_rack": 36},
        "planes": {"fattree": {"hca": "mlx5_0", "gbps": 200.0,
                               "topology": {"kind": "xgft", "m": [3, 4, 3], "w": [1, 6, 2],
                                            "p": [2, 1, 2], "switch_ports": 36},
                               "opensm": {"routing": ["ftree"], "lmc": 0}}},
    }
    path = tmp_path / "sc17-dr-mini.yaml"
    path.write_text(yaml.safe_dump(conf))
    system = load_system(path)
    fabric = build_plane(system, "fattree")
    assert fabric.subnets() == 1
    run = route(fabric, tmp_path / "ftree", "ftree", timeout=300)
    assert run.summary["engine_used"] == "ftree" and not run.summary["errors"]
    tables = load_tables(fabric, tmp_path / "ftree")
    hcas = np.array(fabric.hcas())
    for port in (1, 2):
        lids = np.array([tables.hca_lid(h, port=port) for h in hcas])
        assert len(set(lids.tolist())) == len(hcas)
        s, d = np.divmod(np.arange(len(hcas) ** 2), len(hcas))
        keep = s != d
        # switch_hops raises PathError on a black hole or loop: every pair must arrive.
        hops = tables.switch_hops(hcas[s[keep]], lids[d[keep]])
        assert hops.min() == 0 and hops.max() == 4  # same leaf .. across pods via a core
        assert set(np.unique(hops).tolist()) == {0, 2, 4}


def test_bulk_batches_give_the_same_rates_as_one_call(tmp_path: Path, monkeypatch) -> None:
    """bulk.run solves phases in batches to bound memory at 4,608 nodes; phases are
    independent, so any batch size must give identical results."""
    from t2hx.flowsim import bulk, patterns
    from t2hx.flowsim.network import open_network
    system = load_system(system_path("mini"))
    net = open_network(system, "hyperx", "dfsssp", hosts=system.hostnames(), work=tmp_path)
    whole = patterns.mpigraph(net)
    whole_ebb = patterns.ebb(net, rounds=4, reps=2)
    assert len(bulk._batches(patterns.mpigraph_phases(64, 1, 1), bulk.BATCH_FLOWS)) == 1
    monkeypatch.setattr(bulk, "BATCH_FLOWS", 100)   # 63 phases of 64 messages: 63 batches
    assert len(bulk._batches(patterns.mpigraph_phases(64, 1, 1), 100)) == 63
    batched = patterns.mpigraph(net)
    assert np.array_equal(whole.send, batched.send)
    assert np.array_equal(whole_ebb.round_times, patterns.ebb(net, rounds=4, reps=2).round_times)
    # The HyperX really contends (unequal rates): the comparison is not vacuous.
    assert len(np.unique(np.round(whole.send[~np.eye(64, dtype=bool)]))) > 1


def test_chunked_path_walk_equals_one_walk(tmp_path: Path, monkeypatch) -> None:
    """Tables.paths walks big pair sets in chunks (memory at 4,608 nodes): same paths."""
    from t2hx.routing import lft
    from t2hx.flowsim.network import open_network
    system = load_system(system_path("mini"))
    net = open_network(system, "hyperx", "dfsssp", hosts=system.hostnames(), work=tmp_path)
    hcas = np.array(net.fabric.hcas())
    src = np.repeat(hcas, len(hcas))
    dst = np.tile(net.tables.hca_lids(), len(hcas))
    whole = net.tables.paths(src, dst)
    monkeypatch.setattr(lft, "PATH_CHUNK", 7)       # uneven chunks, some with shorter paths
    chunked = net.tables.paths(src, dst)
    assert chunked.dtype == np.int32 and np.array_equal(whole, chunked)
    assert len(np.unique((whole >= 0).sum(axis=1))) > 1
