"""The committed reference packet-simulator outputs (tests/data/refsim/, docs/validation.md) are
complete and self-consistent, and the routing they were simulated on is the routing t2hx's
real OpenSM produces today from the committed confs."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.fabric.build import build_plane
from t2hx.flowsim.network import open_network
from t2hx.routing.lft import load_tables

REFSIM = ROOT / "bench" / "refsim"
DATA = ROOT / "tests" / "data" / "refsim"
FABRICS = {"fattree": ("fattree", "ftree"), "hyperx": ("hyperx", "dfsssp"),
           "hyperx-missing": ("hyperx", "dfsssp")}
PATTERNS = ("shift", "permutation", "incast", "alltoall", "bisection")
LINK_BPS = 4.0e9          # QDR 4x data rate: no flow can beat it


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"refsim_{name}", REFSIM / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


data = _load("data")


def test_fifteen_cases_with_their_run_records() -> None:
    assert data.fabrics() == sorted(FABRICS)
    cases = data.cases()
    assert len(cases) == 15
    for fab in FABRICS:
        meta = data.meta(fab)
        assert meta["patterns"] == list(PATTERNS)
        assert meta["simulator"]["commit"].startswith("fce9e79")
        assert meta["simulator"]["omnetpp"]["version"] == "5.7.1"
        assert meta["flit_bytes"] == 64 and meta["mtu_bytes"] == 2048
        assert meta["ini"]["**.flitSize"] == "64B"
        for pattern in PATTERNS:
            run = meta["runs"][pattern]
            assert run["wall_s"] > 0 and run["sim_time_s"] > 0 and run["events"] > 0
            assert run["command"].startswith("ib_flit_sim ")


@pytest.mark.parametrize("fab", sorted(FABRICS))
def test_every_flow_has_a_consistent_result(fab: str) -> None:
    sls = data.path_sls(fab)
    ranks = len(data.hosts(fab))
    routing = data.routing(fab)
    groups = routing["vl_groups"]
    assert len(sls) == ranks * (ranks - 1)
    assert set(sls.values()) <= {vl for g in groups for vl in g}
    for pattern in PATTERNS:
        case = data.case(fab, pattern)
        assert case.flows and len(case.results) == len(case.flows)
        assert len({(f.src, f.dst) for f in case.flows}) == len(case.flows)
        assert [f.id for f in case.flows] == list(range(len(case.flows)))
        for f, r in zip(case.flows, case.results):
            assert (r.src, r.dst, r.bytes, r.start_s) == (f.src, f.dst, f.bytes, f.start_s)
            assert 0 <= f.src < ranks and 0 <= f.dst < ranks and f.src != f.dst
            assert f.bytes % 2048 == 0 and f.start_s == 0.0
            assert f.sl == sls[(f.src, f.dst)]
            assert r.throughput_Bps == pytest.approx(r.bytes / (r.end_s - r.start_s),
                                                     rel=1e-8)
            # no flow beats the link, none ends after the run
            assert r.bytes / LINK_BPS < r.completion_s <= case.run["sim_time_s"] * (1 + 1e-12)
        assert max(r.end_s for r in case.results) == pytest.approx(case.run["sim_time_s"],
                                                                   rel=1e-9)
        assert case.run["flows"] == len(case.flows)


def test_patterns_are_the_documented_ones() -> None:
    cases = _load("cases")
    for fab in FABRICS:
        ranks = len(data.hosts(fab))
        for pattern in PATTERNS:
            pairs, size, params = cases.pattern_pairs(pattern, ranks)
            doc, flows = data.flows(fab, pattern)
            assert [(f.src, f.dst) for f in flows] == pairs
            assert {f.bytes for f in flows} == {size} and doc["params"] == params


@pytest.mark.parametrize("fab", sorted(FABRICS))
def test_reference_routing_is_todays_opensm_routing(fab: str, tmp_path: Path) -> None:
    plane, engine = FABRICS[fab]
    system = load_system(DATA / fab / "system.yaml")
    routing = data.routing(fab)
    assert (routing["plane"], routing["engine"]) == (plane, engine)
    assert data.hosts(fab) == system.hostnames()
    # the committed dumps are the ones the digest names
    committed = load_tables(build_plane(system, plane), DATA / fab / "routing")
    assert data.lft_digest(committed) == routing["lft_sha256"]
    # and real OpenSM under ibsim routes the committed conf to the same tables today
    net = open_network(system, plane, engine, hosts=system.hostnames(), work=tmp_path)
    assert data.lft_digest(net.tables) == routing["lft_sha256"]
    assert [int(net.tables.base_lid[h, 1]) for h in net.rank_hca] == routing["rank_lid"]
    summary = json.loads((net.dumps / "opensm-run.json").read_text())
    assert summary["vls"] == routing["vls_needed"]


def test_the_reference_against_itself_and_a_shifted_copy() -> None:
    case = data.case("fattree", "incast")
    exact = {(r.src, r.dst): r.end_s for r in case.results}
    assert data.errors(case, exact).within(1e-9, 1e-9)       # CSV rounding only
    slower = {k: v * 1.2 for k, v in exact.items()}       # 20 % longer everywhere
    e = data.errors(case, slower)
    assert e.completion_median == pytest.approx(0.2) and e.throughput_worst == pytest.approx(1 / 6)
    assert not e.within() and e.within(0.2 + 1e-9, 0.25)


@pytest.mark.parametrize("fab", sorted(FABRICS))
def test_exported_forwarding_tables_route_like_t2hx(fab: str, tmp_path: Path) -> None:
    """The exporter writes the model's tables from the committed dumps and walks every pair
    through them and the exported cabling: each path is t2hx's path (all-to-all: every
    ordered pair)."""
    export = _load("export")
    info = export.write_case(fab, "alltoall", tmp_path)
    assert info["flows"] == len(data.hosts(fab)) * (len(data.hosts(fab)) - 1)
    ned = (tmp_path / "refnet.ned").read_text()
    assert ned.count("IB4XQDRWire <-->") == len(build_plane(
        load_system(DATA / fab / "system.yaml"), FABRICS[fab][0]).cables)
    assert "refTotalFlows = 992" in ned
