"""The flow model against SimGrid on the routed t2hx HyperX (real OpenSM dfsssp), and the
seed 000 Fig 1 effect (FT/ftree vs HX/dfsssp, 28 nodes of rack 1)."""

import numpy as np
import pytest

from t2hx.flowsim import bulk, collectives, patterns
from t2hx.flowsim.fluid import simulate_flows
from t2hx.flowsim.maxmin import maxmin_rates
from t2hx.flowsim.network import open_network
from t2hx.flowsim.validate_simgrid import run_simgrid


@pytest.fixture(scope="module")
def hx(t2hx_system, routed):
    return routed(t2hx_system, "hyperx", "dfsssp").run.out_dir


def _net(system, out, hosts):
    return open_network(system, "hyperx", "dfsssp", hosts=hosts, dumps=out)


def _compare_rates(net, phases):
    paths, _, group, size = bulk.flow_arrays(net, phases)
    src, dst = bulk.endpoints(phases)
    ours = maxmin_rates(paths, net.capacity, group)
    theirs, _ = run_simgrid("rates", net.rank_hca[src], net.rank_hca[dst], paths,
                            net.capacity, size, group)
    return ours, theirs


def test_mpigraph_rack_rates_match_simgrid(t2hx_system, hx) -> None:
    net = _net(t2hx_system, hx, t2hx_system.hostnames()[:28])
    ours, theirs = _compare_rates(net, patterns.mpigraph_phases(28, 1 << 20, 1))
    assert np.max(np.abs(ours - theirs) / theirs) < 0.02
    # the rack's 4 switches are joined by single cables: 7 streams share one
    assert ours.min() == pytest.approx(net.capacity.max() / 7, rel=1e-6)


def test_random_bisection_rates_match_simgrid(t2hx_system, hx) -> None:
    hosts = t2hx_system.hostnames()
    rng = np.random.default_rng(5)
    net = _net(t2hx_system, hx, [hosts[i] for i in sorted(rng.choice(len(hosts), 56,
                                                                        replace=False))])
    partner = patterns.bisections(56, 1, seed=11)[0]
    ph = [bulk.Phase.of(np.arange(56), partner, 1 << 20)]
    ours, theirs = _compare_rates(net, ph)
    assert np.max(np.abs(ours - theirs) / theirs) < 0.02


def test_alltoall_event_driven_matches_simgrid(t2hx_system, hx) -> None:
    hosts = t2hx_system.hostnames()
    net = _net(t2hx_system, hx, hosts[::42])          # 16 nodes spread over the plane
    _, ph = collectives.phases("Alltoall", 16, 1 << 18, algorithm="linear")
    paths, _, _, _ = bulk.flow_arrays(net, ph)
    src, dst = bulk.endpoints(ph)
    rng = np.random.default_rng(2)
    size = rng.uniform(0.5, 2.0, len(src)) * (1 << 18)   # uneven sizes and starts exercise
    start = rng.uniform(0, 2e-4, len(src))               # arrivals and departures
    ours = simulate_flows(paths, net.capacity, size, start)
    theirs, _ = run_simgrid("fluid", net.rank_hca[src], net.rank_hca[dst], paths,
                            net.capacity, size, start=start)
    assert np.max(np.abs(ours - theirs) / theirs) < 0.05


def test_fig1_hyperx_well_below_fattree(t2hx_system, hx, routed) -> None:
    rack = t2hx_system.hostnames()[:28]
    ft_dir = routed(t2hx_system, "fattree", "ftree").run.out_dir
    ft = open_network(t2hx_system, "fattree", "ftree", hosts=rack, dumps=ft_dir)
    g_ft = patterns.mpigraph(ft)
    g_hx = patterns.mpigraph(_net(t2hx_system, hx, rack))
    ratio = patterns.average(g_hx.send) / patterns.average(g_ft.send)
    assert ratio < 0.6
    peak = 4e9 / 2**20
    # HX: pairs that share a switch-to-switch cable 7 ways get ~1/7 of a link
    assert g_hx.send[~np.eye(28, dtype=bool)].min() < peak / 6
    assert np.median(g_ft.send[~np.eye(28, dtype=bool)]) > 0.9 * peak


@pytest.mark.parametrize("kernel", ["ft", "mg", "lu"])
def test_seed_001_npb_communication_matches_simgrid(routed, kernel) -> None:
    """A sample of seed 001's study on the thesis' own tool: one step of NPB FT's, MG's and
    LU's modelled communication (class A, 128 ranks of the random mapping on the 1,024-switch
    random shortcut network, OpenSM min-hop, the thesis' collective algorithms) gets the same
    max-min rates from SimGrid's CM02 model on the same routes. Messages under 1 KiB finish
    inside the ε over which SimGrid's rate is read back, so only larger ones are compared
    (MG's and LU's Allreduce steps)."""
    from t2hx import ROOT, benchmarks
    from t2hx.conf import load_system
    from t2hx.flowsim import apps

    system = load_system(ROOT / "conf" / "systems" / "thesis-rsn1024.yaml")
    hosts = (ROOT / "hostfiles" / "thesis-rsn1024" / "random" / "128.txt").read_text().split()
    out = routed(system, "shortcut", "minhop").run.out_dir
    net = open_network(system, "shortcut", "minhop", hosts=hosts, dumps=out)
    phases = [p for p in apps.iteration_phases(benchmarks.app(f"npb-{kernel}"), 128, 1.0,
                                               net.loggp.reduce_rate, {"class": "A"},
                                               rules=net.loggp.collectives)
              if len(p.src)]
    ours, theirs = _compare_rates(net, phases)
    _, _, _, size = bulk.flow_arrays(net, phases)
    big = size >= 1024
    assert big.sum() >= 400
    assert np.max(np.abs(ours[big] - theirs[big]) / theirs[big]) < 1e-6
