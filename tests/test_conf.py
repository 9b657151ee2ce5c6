"""System conf: the shipped files load; every bad input gets one line naming file, field, fix."""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path

import pytest
import yaml

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.fabric.build import build_plane
from tests.conftest import MINI, T2HX


# Expected sizes come from the conf under test and the topologies' closed forms, so a
# porting team's edit of t2hx.yaml keeps the suite green while the generators stay checked.

def hyperx_cables(dims: list[int], multiplicity: int) -> int:
    """Each switch links to every other switch of its row in every dimension."""
    return math.prod(dims) * sum(d - 1 for d in dims) * multiplicity // 2


def xgft_switches(m: list[int], w: list[int]) -> int:
    """Level l (1..h) of XGFT(h; m; w) has prod(m[l:]) * prod(w[:l]) switches."""
    return sum(math.prod(m[level:]) * math.prod(w[:level]) for level in range(1, len(m) + 1))


def xgft_inter_switch_cables(m: list[int], w: list[int], p: list[int]) -> int:
    """Every switch of level l-1 >= 1 has w[l-1] parents, p[l-1] cables to each."""
    below = [math.prod(m[level:]) * math.prod(w[:level]) for level in range(len(m) + 1)]
    return sum(below[level - 1] * w[level - 1] * p[level - 1] for level in range(2, len(m) + 1))


def test_t2hx_conf_loads_its_nodes(t2hx_system) -> None:
    s, nodes = t2hx_system, t2hx_system.nodes
    hosts = s.hostnames()
    assert len(hosts) == nodes["racks"] * nodes["per_rack"] == len(set(hosts))
    fmt = nodes["hostname"]
    assert hosts[0] == fmt.format(rack=1, slot=1, index=0)
    assert hosts[-1] == fmt.format(rack=nodes["racks"], slot=nodes["per_rack"],
                                   index=len(hosts) - 1)
    raw = yaml.safe_load(T2HX.read_text())["planes"]
    for name, plane in s.planes.items():
        assert plane.hca == raw[name]["hca"]
        assert plane.missing_cables["list"] == raw[name].get("missing_cables", {}).get("list", [])


def test_host_indices_start_where_the_conf_says(tmp_path: Path) -> None:
    """{index} counts from nodes.index_base (default 0), over all racks: cn{index:03d} with
    index_base: 1 names 4 racks of 16 cn001..cn064; down nodes use those names."""
    raw = yaml.safe_load(MINI.read_text())
    raw["nodes"].update(hostname="cn{index:03d}")
    assert load_system(write(tmp_path, raw)).hostnames()[:2] == ["cn000", "cn001"]
    raw["nodes"].update(index_base=1, down=["cn064"])
    system = load_system(write(tmp_path, raw))
    hosts = system.hostnames()
    assert hosts == [f"cn{i:03d}" for i in range(1, 65)]
    assert len(build_plane(system, "hyperx").hcas()) == 64
    # {rack} and {slot} stay 1-based whatever the index base.
    raw["nodes"].update(hostname="r{rack}s{slot:02d}i{index}", down=[])
    assert load_system(write(tmp_path, raw)).hostnames()[0] == "r1s01i1"


def test_t2hx_planes_have_the_confs_shape(t2hx_system) -> None:
    hosts = len(t2hx_system.hostnames())
    hx_conf, ft_conf = t2hx_system.plane("hyperx"), t2hx_system.plane("fattree")
    hx, ft = build_plane(t2hx_system, "hyperx"), build_plane(t2hx_system, "fattree")
    t = hx_conf.topology
    assert len(hx.switches()) == math.prod(t["dims"]) and len(hx.hcas()) == hosts
    missing = len(hx_conf.missing_cables["list"]) + hx_conf.missing_cables["random"]
    assert len(hx.inter_switch_cables()) == hyperx_cables(t["dims"], t["multiplicity"]) - missing
    t = ft_conf.topology
    p = t["p"] or [1] * len(t["m"])
    assert len(ft.switches()) == xgft_switches(t["m"], t["w"]) and len(ft.hcas()) == hosts
    missing = len(ft_conf.missing_cables["list"]) + ft_conf.missing_cables["random"]
    assert len(ft.inter_switch_cables()) == xgft_inter_switch_cables(t["m"], t["w"], p) - missing


def test_closed_forms_match_the_paper_numbers() -> None:
    """The formulas above reproduce seed 000's 12x8 HyperX and 3-pod fat-tree by hand."""
    assert hyperx_cables([12, 8], 1) == 8 * 66 + 12 * 28
    assert xgft_switches([14, 16, 3], [1, 18, 3]) == 48 + 54 + 54
    assert xgft_inter_switch_cables([14, 16, 3], [1, 18, 3], [1, 1, 6]) == 48 * 18 + 54 * 3 * 6


def test_rack_shares_hyperx_switches_along_dimension_0(t2hx_system) -> None:
    """Rack 1 = the first switches of row 0 along dimension 0 (the Figure 1 effect)."""
    hx = build_plane(t2hx_system, "hyperx")
    per_rack = t2hx_system.nodes["per_rack"]
    per_switch = t2hx_system.plane("hyperx").topology["nodes_per_switch"]
    rack = [hx.index(h) for h in t2hx_system.hostnames()[:per_rack]]
    coords = sorted({hx.nodes[hx.switch_of(h)].attrs["coord"] for h in rack})
    dims = t2hx_system.plane("hyperx").topology["dims"]
    assert coords == sorted(grid_coord(k, dims) for k in range(-(-per_rack // per_switch)))


def grid_coord(k: int, dims: list[int]) -> tuple[int, ...]:
    """The k-th switch's coordinate, dimension 0 varying fastest."""
    out = []
    for d in dims:
        k, x = divmod(k, d)
        out.append(x)
    return tuple(out)


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


BASE = yaml.safe_load(MINI.read_text())


def mutate(fn):
    data = copy.deepcopy(BASE)
    fn(data)
    return data


def setp(path: str, value):
    def fn(d):
        *head, last = path.split(".")
        for k in head:
            d = d[k]
        d[last] = value
    return fn


def delp(path: str):
    def fn(d):
        *head, last = path.split(".")
        for k in head:
            d = d[k]
        del d[last]
    return fn


BAD = [
    ("nodes.racks", setp("nodes.racks", "four"), "expected an integer"),
    ("nodes.racks", setp("nodes.racks", 0), "below the minimum"),
    ("nodes.per_rack", delp("nodes.per_rack"), "missing required field"),
    ("name", delp("name"), "missing required field"),
    ("colour", setp("colour", "blue"), "unknown key"),
    ("nodes.spare", setp("nodes.spare", 3), "unknown key"),
    ("nodes.hostname", setp("nodes.hostname", "node"), "twice"),
    ("nodes.down", setp("nodes.down", ["nosuchhost"]), "not a host"),
    ("nodes.down", setp("nodes.down", "m1n01"), "expected a list"),
    ("planes.hyperx.hca", delp("planes.hyperx.hca"), "missing required field"),
    ("planes.hyperx.topology.kind", setp("planes.hyperx.topology.kind", "torus"),
     "unknown topology kind"),
    ("planes.hyperx.topology.dims", setp("planes.hyperx.topology.dims", [4, "x"]),
     "expected an integer"),
    ("planes.hyperx.topology.dims", setp("planes.hyperx.topology.dims", [4, 1]),
     "below the minimum"),
    ("planes.hyperx.topology.nodes_per_switch",
     setp("planes.hyperx.topology.nodes_per_switch", 2), "room for 32 hosts"),
    ("planes.hyperx.topology", setp("planes.hyperx.topology.switch_ports", 8),
     "more links than its 8 ports"),
    ("planes.fattree.topology.w", setp("planes.fattree.topology.w", [1, 8, 2]),
     "same length"),
    ("planes.fattree.topology", setp("planes.fattree.topology.switch_ports", 12),
     "more links than its 12 ports"),
    ("planes.fattree.topology.m", setp("planes.fattree.topology.m", [4, 8]), "room for 32"),
    ("planes.hyperx.opensm.routing", setp("planes.hyperx.opensm.routing", ["magic"]),
     "not allowed"),
    ("planes.hyperx.opensm.lmc", setp("planes.hyperx.opensm.lmc", 9), "above the maximum"),
    ("planes.hyperx.opensm.lmc", setp("planes.hyperx.opensm.lmc", True), "expected an integer"),
    ("planes.hyperx.gbps", setp("planes.hyperx.gbps", "fast"), "expected a number"),
    ("planes.hyperx.missing_cables.list",
     setp("planes.hyperx.missing_cables.list", [["hx-0-0", "hx-9-9"]]), "unknown switch"),
    ("planes.hyperx.missing_cables.list",
     setp("planes.hyperx.missing_cables.list", [["hx-0-0", "hx-1-1"]]), "no cable between"),
    ("planes.hyperx.missing_cables.list",
     setp("planes.hyperx.missing_cables.list", [["hx-0-0"]]), "pair of node names"),
    ("planes.hyperx.missing_cables.random",
     setp("planes.hyperx.missing_cables.random", 500), "only"),
    ("planes.fattree.missing_cables",
     setp("planes.fattree.missing_cables", {"list": [["ft-l1-0", f"ft-l2-{k}"] for k in range(8)]}),
     "disconnected"),
    ("planes", setp("planes", {}), "no planes"),
    ("planes.hyperx", setp("planes.hyperx.fabric", "x"), "unknown key"),
    # These once ended in tracebacks (KeyError, TypeError, ValueError) or ran for hours.
    ("nodes.hostname", setp("nodes.hostname", "rv-{rak}-{slot}"), "unknown placeholder {rak}"),
    ("nodes.hostname", setp("nodes.hostname", "n{index:>999999}"), "format spec"),
    ("nodes.hostname", setp("nodes.hostname", "n{rack!x}"), "bad pattern"),
    ("nodes.hostname", setp("nodes.hostname", "n {index}"), "hostname pattern gives"),
    ("nodes.per_rack", setp("nodes.per_rack", 10**9), "LIDs"),
    ("nodes.index_base", setp("nodes.index_base", 2), "not allowed"),
    ("planes.hyperx.topology", setp("planes.hyperx.topology.dims", [10**6, 10**6]), "LIDs"),
    ("planes.hyperx.topology.kind", setp("planes.hyperx.topology.kind", []),
     "unknown topology kind"),
    ("planes.hyperx.gbps", setp("planes.hyperx.gbps", float("nan")), "not a finite number"),
    ("planes.hyperx.missing_cables.seed", setp("planes.hyperx.missing_cables.seed", -1),
     "below the minimum"),
    ("planes.1", setp("planes", {1: {}}), "is not a name"),
    # Names become folders and device names: nothing that leaves them or is empty.
    ("name", setp("name", "../../tmp/evil"), "a name of letters"),
    ("planes.hyperx.hca", setp("planes.hyperx.hca", ""), "HCA device name"),
    ("nodes.down", setp("nodes.down", ["m1n01", "m1n01"]), "listed twice"),
    ("planes.hyperx.topology.degree",
     setp("planes.hyperx.topology", {"kind": "dragonfly", "switches": 32, "degree": 40}),
     "must be below the 32 switches"),
    ("planes.hyperx.topology.switches",
     setp("planes.hyperx.topology", {"kind": "dragonfly", "switches": 31, "degree": 7}),
     "no group size divides 31"),
    # Accepted silently once, each changed what was routed without a word.
    ("planes.fattree.topology",
     setp("planes.fattree.topology", {"kind": "kary", "k": 8, "n": 2, "rails": 2}),
     "2 switch networks joined only through hosts"),
    ("planes.fattree.topology", setp("planes.fattree.topology.w", [2, 8]),
     "2 switch networks"),
    ("planes.hyperx.opensm.options",
     setp("planes.hyperx.opensm.options", {"routing_engine": "minhop"}),
     "'routing_engine' is set by t2hx"),
    ("planes.fattree.opensm.options", setp("planes.fattree.opensm.options", {"lmc": 1}),
     "set opensm.lmc"),
    ("planes.hyperx.opensm.lmc", setp("planes.hyperx.opensm.lmc", 3),
     "always routes at LMC 2"),
    ("planes.hyperx.opensm.routing", setp("planes.hyperx.opensm.routing", []),
     "no routing engine"),
    ("planes.fattree.opensm.routing", setp("planes.fattree.opensm.routing", ["ftree", "ftree"]),
     "listed twice"),
]


@pytest.mark.parametrize("field,fn,message", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_bad_conf_gets_one_clear_line(tmp_path: Path, field: str, fn, message: str) -> None:
    path = write(tmp_path, mutate(fn))
    with pytest.raises(ConfError) as exc:
        system = load_system(path)
        for plane in system.planes:
            build_plane(system, plane)
    line = exc.value.line()
    assert "\n" not in line
    assert str(path) in line, line
    assert field in line, line
    assert message in line, line
    assert "fix:" in line, line


def test_invalid_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfError, match="not valid YAML"):
        load_system(bad)
    with pytest.raises(ConfError, match="cannot read"):
        load_system(tmp_path / "absent.yaml")


@pytest.mark.parametrize("data,message", [
    (("# Säule\n" + MINI.read_text()).encode("latin-1"), r"not UTF-8 text \(byte 0xe4 on line 1"),
    (MINI.read_text().encode("utf-16"), "not UTF-8 text"),
    (MINI.read_text().replace("  racks: 4\n", "  racks: 4\n  racks: 5\n").encode(),
     "key 'racks' given twice"),
    (MINI.read_text().replace("name: mini", "name: 2019-13-45").encode(), "not valid YAML"),
])
def test_unreadable_text_is_one_line(tmp_path: Path, data: bytes, message: str) -> None:
    """Bytes that are not UTF-8 and keys PyYAML would silently overwrite."""
    path = tmp_path / "conf.yaml"
    path.write_bytes(data)
    with pytest.raises(ConfError, match=message) as exc:
        load_system(path)
    assert str(path) in exc.value.line()


def test_random_missing_cables_are_seeded_and_keep_the_plane_connected(mini) -> None:
    data = mutate(setp("planes.hyperx.missing_cables", {"random": 10, "seed": 7}))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d), data)
        a = build_plane(load_system(path), "hyperx")
        b = build_plane(load_system(path), "hyperx")
    assert [(c.a, c.b) for c in a.cables] == [(c.a, c.b) for c in b.cables]
    assert len(a.inter_switch_cables()) == 4 * 6 + 4 * 6 - 10
    assert (a.hop_matrix() >= 0).all()


def test_special_files_are_refused_not_read(tmp_path: Path) -> None:
    """A FIFO given as a conf would block forever, a device never ends: refused at once."""
    fifo = tmp_path / "conf.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfError) as exc:
        load_system(fifo)
    assert "not a regular file" in exc.value.line() and str(fifo) in exc.value.line()
    with pytest.raises(ConfError) as exc:
        load_system("/dev/zero")
    assert "not a regular file" in exc.value.line()


@pytest.mark.parametrize("path", sorted((ROOT / "conf" / "systems").glob("*.yaml")),
                         ids=lambda p: p.stem)
def test_every_shipped_system_builds_every_plane(path: Path) -> None:
    """A conf the repository ships loads, and each of its planes builds and validates."""
    from t2hx.fabric.build import check_planes

    check_planes(load_system(path))
