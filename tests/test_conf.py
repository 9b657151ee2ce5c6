"""System conf: the shipped files load; every bad input gets one line naming file, field, fix."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.fabric.build import build_plane
from tests.conftest import MINI, T2HX


def test_t2hx_describes_the_rewired_tsubame2(t2hx_system) -> None:
    s = t2hx_system
    hosts = s.hostnames()
    assert len(hosts) == 672 == len(set(hosts))
    assert hosts[0] == "r01n01" and hosts[-1] == "r24n28"
    assert s.plane("fattree").hca == "mlx4_0" and s.plane("hyperx").hca == "mlx4_1"
    assert s.plane("hyperx").missing_cables["list"] and len(
        s.plane("hyperx").missing_cables["list"]) == 15
    assert s.plane("fattree").missing_cables["random"] == 197


def test_t2hx_planes_have_the_papers_shape(t2hx_system) -> None:
    hx = build_plane(t2hx_system, "hyperx")
    ft = build_plane(t2hx_system, "fattree")
    assert len(hx.switches()) == 96 and len(hx.hcas()) == 672
    assert len(hx.inter_switch_cables()) == 8 * 66 + 12 * 28 - 15
    assert len(ft.switches()) == 156 and len(ft.hcas()) == 672
    assert len(ft.inter_switch_cables()) == 48 * 18 + 54 * 3 * 6 - 197


def test_rack_shares_hyperx_switches_along_dimension_0(t2hx_system) -> None:
    """Rack 1 = switches x=0..3 of row 0, 7 hosts each (the Figure 1 effect)."""
    hx = build_plane(t2hx_system, "hyperx")
    rack = [hx.index(h) for h in t2hx_system.hostnames()[:28]]
    coords = sorted({hx.nodes[hx.switch_of(h)].attrs["coord"] for h in rack})
    assert coords == [(0, 0), (1, 0), (2, 0), (3, 0)]


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
