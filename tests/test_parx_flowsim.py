"""PARX in the flow model: a parx network is routed with the plugin's LID policy and picks
each message's LID by Table 1 (as parx/table1.c does), also from re-route dumps; routing
caches keep runs with different inputs apart."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from t2hx import ROOT
from t2hx.routing import parx
from t2hx.errors import RoutingError, WorkloadError
from t2hx.flowsim import patterns
from t2hx.routing_engines import DEMAND, RoutingInput
from t2hx.flowsim.network import open_network, read_hostfile
from tests.test_parx_routing import pruned_distances, report, routed_t2hx
from tests.test_parx_table1 import lib  # noqa: F401  (fixture: parx/libparx_table1.so)

# Two switches of quadrant Q0 joined by one cable (mini: hx-0-1 and hx-1-1, 4 nodes each).
PAIR = [f"m2n{i:02d}" for i in range(1, 9)]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("parx-flowsim")


@pytest.fixture(scope="module")
def parx_net(mini, work):
    return open_network(mini, "hyperx", "parx", hosts=mini.hostnames(), work=work)


def test_table1_chooser_matches_the_c_selection(mini, parx_net, lib) -> None:  # noqa: F811
    chooser = parx_net.chooser
    assert isinstance(chooser, parx.Table1Chooser) and chooser.threshold == 512
    n = len(parx_net.fabric.hcas())
    src, dst = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    for size in (0, 511, 512, 1 << 20):
        got = chooser(src, dst, size)
        coin = parx.message_coins(src, dst, size)
        want = [lib.parx_table1_select(int(chooser.quadrant[s]), int(chooser.quadrant[d]),
                                       size, 512, ctypes.c_uint(int(c)))
                for s, d, c in zip(src, dst, coin)]
        assert got.tolist() == want
    # where Table 1 offers two LIDs, the pairs use both
    two = (chooser.quadrant[src] == 0) & (chooser.quadrant[dst] == 0)
    assert set(chooser(src[two], dst[two], 1 << 20).tolist()) == {0, 2}


def test_parx_network_routes_with_the_lid_policy(parx_net) -> None:
    tab = parx_net.tables
    assert parx_net.engine == "parx" and tab.lmc == 2
    quads = parx.node_quadrants(parx_net.fabric)
    for h in parx_net.fabric.hcas():
        assert parx.lid_quadrant(tab.hca_lid(h)) == quads[h]
    opensm_conf = (parx_net.dumps / "opensm.conf").read_text()
    assert "routing_engine parx,no_fallback" in opensm_conf and "qos TRUE" in opensm_conf


def test_small_messages_take_minimal_paths_large_ones_detour(parx_net) -> None:
    """Per message: Table 1a's LID keeps the HyperX's shortest path (unless the missing
    cable forces a longer one under that LID's rule), 1b's detours for same-half pairs."""
    fab = parx_net.fabric
    n = parx_net.ranks
    src, dst = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    sw = np.array([pos_of(fab)[fab.switch_of(h)] for h in parx_net.rank_hca])
    src, dst = src[sw[src] != sw[dst]], dst[sw[src] != sw[dst]]
    full = pruned_distances(fab, None)[0][sw[src], sw[dst]] + 1     # switches crossed
    q = parx_net.chooser.quadrant[parx_net.rank_hca_idx]
    for size, large in ((64, False), (1 << 20, True)):
        _, hops = parx_net.paths(src, dst, size)
        lid = parx_net.lid_index(src, dst, size)
        forced = np.zeros(len(src), dtype=bool)
        for x in range(4):
            rule = pruned_distances(fab, x)[0][sw[src], sw[dst]] + 1
            forced |= (lid == x) & (rule > full)
            assert (hops[lid == x] == rule[lid == x]).all()
        if not large:
            assert (hops[~forced] == full[~forced]).all() and forced.mean() < 0.05
        else:
            same_half = ~(((q[src] + q[dst]) % 2 == 0) & (q[src] != q[dst]))
            # mini lacks the cable hx-0-0 - hx-1-0: the minimal path between them already
            # detours through the right half, which LID0 keeps
            cut = [pos_of(fab)[fab.index(x)] for x in ("hx-0-0", "hx-1-0")]
            around = np.isin(sw[src], cut) & np.isin(sw[dst], cut)
            assert (hops[same_half & ~around] > full[same_half & ~around]).all()


def test_per_message_sizes_pick_their_own_lids(parx_net) -> None:
    """In a call of mixed sizes each message takes a LID of its own size's Table 1 (1a or
    1b; which of two is a per-message coin, tests/test_parx_per_message.py)."""
    src, dst = np.arange(0, 32), np.arange(32, 64)
    sizes = np.where(np.arange(32) % 2, 1 << 20, 8)
    lid = parx_net.lid_index(src, dst, sizes)
    q = parx_net.chooser.quadrant[parx_net.rank_hca_idx]
    for s, d, size, x in zip(src, dst, sizes, lid):
        assert x in parx.choices(int(q[s]), int(q[d]), size >= 512)
    assert (lid != parx_net.lid_index(src, dst, 8)).any()
    mixed, hops = parx_net.paths(src, dst, sizes)
    for x in np.unique(lid):
        sel = lid == x
        p, h = parx_net._all_pairs(int(x))
        assert (mixed[sel, :p.shape[2]] == p[src[sel], dst[sel]]).all()
        assert (hops[sel] == h[src[sel], dst[sel]]).all()


def pos_of(fab) -> dict[int, int]:
    return {s: k for k, s in enumerate(fab.switches())}


def test_parx_beats_dfsssp_on_two_switches_of_one_quadrant(mini, work) -> None:
    """Fig 1 in miniature: 8 nodes on two Q0 switches joined by one cable."""
    bw = {}
    for engine in ("dfsssp", "parx"):
        net = open_network(mini, "hyperx", engine, hosts=PAIR, work=work)
        bw[engine] = patterns.average(patterns.mpigraph(net).send)
    assert bw["parx"] > 1.3 * bw["dfsssp"], bw
    # everything below the threshold: Table 1a's minimal paths, no detour gain
    small = open_network(mini, "hyperx", "parx", hosts=PAIR, work=work,
                         parx_threshold=1 << 30)
    assert patterns.average(patterns.mpigraph(small).send) < 1.1 * bw["dfsssp"]


def test_routing_dir_of_a_reroute_gets_table1_and_others_are_refused(mini, work,
                                                                     parx_net) -> None:
    dumps = parx_net.dumps
    net = open_network(mini, "hyperx", "parx", hosts=PAIR, dumps=dumps)
    assert isinstance(net.chooser, parx.Table1Chooser)
    dfsssp = open_network(mini, "hyperx", "dfsssp", hosts=PAIR, work=work)
    with pytest.raises(RoutingError, match="PARX's Table 1 needs LMC 2") as err:
        open_network(mini, "hyperx", "parx", hosts=PAIR, dumps=dfsssp.dumps)
    assert "\n" not in str(err.value)
    with pytest.raises(WorkloadError, match="parx routes with LMC 2, not 0"):
        open_network(mini, "hyperx", "parx", hosts=PAIR, work=work, lmc=0)


def test_routing_cache_keeps_inputs_apart(mini, work, tmp_path) -> None:
    a, b, a2 = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "copy-of-a.txt"
    a.write_text("m2n01 m2n05:255\n")
    b.write_text("m2n01 m2n06:255 m3n01:17\n")
    a2.write_text(a.read_text())
    na = open_network(mini, "hyperx", "parx", hosts=PAIR, work=work,
                      routing_input=RoutingInput(DEMAND, str(a)))
    nb = open_network(mini, "hyperx", "parx", hosts=PAIR, work=work,
                      routing_input=RoutingInput(DEMAND, str(b)))
    da, db = na.dumps, nb.dumps
    assert da != db and da.name.startswith("parx-lmc2-") and db.name.startswith("parx-lmc2-")
    assert f"parx_demand={a}" in (da / "opensm.conf").read_text()
    mtime = (da / "opensm-lfts.dump").stat().st_mtime_ns
    again = open_network(mini, "hyperx", "parx", hosts=PAIR, work=work,
                      routing_input=RoutingInput(DEMAND, str(a2)))
    assert again.dumps == da
    assert (da / "opensm-lfts.dump").stat().st_mtime_ns == mtime   # same content: reused
    # a changed demand file at the same path is routed again, into its own directory
    a.write_text("m2n01 m2n07:255\n")
    changed = open_network(mini, "hyperx", "parx", hosts=PAIR, work=work,
                      routing_input=RoutingInput(DEMAND, str(a)))
    assert changed.dumps not in (da, db)


def test_fig1_and_ebb14_on_the_t2hx_hyperx(t2hx_system, routed, tmp_path_factory,
                                          record_property) -> None:
    """Seed 000 Fig 1 (mpiGraph, 1 MiB, rack 1's 28 nodes) and eBB on 14 nodes in the flow
    model: PARX with Table 1 above DFSSSP (paper: +66 % and ~1.9x)."""
    dumps = {"parx": routed_t2hx(t2hx_system, "parx", tmp_path_factory)[1].out_dir,
             "dfsssp": routed(t2hx_system, "hyperx", "dfsssp").run.out_dir}
    hostfiles = ROOT / "hostfiles" / "t2hx" / "linear"
    rack = read_hostfile(hostfiles / "28.txt", t2hx_system)
    assert rack == t2hx_system.hostnames()[:28]          # rack 1, four switches of one row
    fourteen = read_hostfile(hostfiles / "14.txt", t2hx_system)
    fig1, ebb = {}, {}
    for engine, where in dumps.items():
        net = open_network(t2hx_system, "hyperx", engine, hosts=rack, dumps=where)
        fig1[engine] = round(patterns.average(patterns.mpigraph(net).send) / 1024, 3)
        net = open_network(t2hx_system, "hyperx", engine, hosts=fourteen, dumps=where)
        e = patterns.ebb(net, 1 << 20, rounds=1000, reps=1, seed=1).round_times
        ebb[engine] = round((1 << 20) / float(np.nanmean(e)) / 1.048576, 1)
    report(record_property, "flow model, t2hx HyperX", {
        "Fig 1 mpiGraph avg GiB/s": fig1, "eBB 14 nodes MiB/s": ebb})
    assert fig1["parx"] > 1.3 * fig1["dfsssp"]
    assert ebb["parx"] > 1.5 * ebb["dfsssp"]


def test_parx_networks_pay_the_measured_mpi_cost_per_message() -> None:
    """PARX's sender adds the PARX-aware MPI path's measured cost to every message (the
    conf default is bench/parx_mpi_cost.py's LID walk); other engines add nothing."""
    import json

    from t2hx import ROOT
    from t2hx.conf import MPI_STACKS, PARX_MESSAGE_NS, load_system, system_path
    from t2hx.flowsim.network import LogGP

    measured = json.loads((ROOT / "bench/results/parx_mpi_cost.json").read_text())
    assert PARX_MESSAGE_NS == measured["lid_walk_ns"]
    model = load_system(system_path("t2hx")).model
    hops = np.array([0.0, 3.0])
    parx, dfsssp = LogGP.from_conf(model, "parx"), LogGP.from_conf(model, "dfsssp")
    # and the stacks' own PML costs (docs/modelling.md#mpi-stacks): bfo-parx against ob1
    mpi = model["mpi"]
    stack = MPI_STACKS[mpi["parx_stack"]]["message_ns"] - MPI_STACKS[mpi["stack"]]["message_ns"]
    assert np.allclose(parx.latency(hops) - dfsssp.latency(hops),
                       (PARX_MESSAGE_NS + stack) * 1e-9)
    assert LogGP.from_conf(model).send_extra == 0.0
