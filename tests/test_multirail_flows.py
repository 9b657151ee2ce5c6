"""Rails in the flow solvers (docs/modelling.md#multirail): each part of a message routed on
its own HCA port or plane by the real OpenSM routing (ibsim), checked against SimGrid on the
same parts, and the behaviour each policy must show."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from t2hx.errors import ConfError
from t2hx.flowsim import bulk, patterns
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.maxmin import maxmin_rates
from t2hx.flowsim.network import open_network
from t2hx.flowsim.validate_simgrid import run_simgrid

MIB = 1 << 20


def system(tmp, name: str, dual: str, policy: str) -> str:
    """16 nodes on 4 leaves: `plane` = both HCA ports on the leaf (XGFT p1 = 2) or `planes`
    = one HCA in each of two planes."""
    tree = {"kind": "xgft", "m": [4, 4], "w": [1, 8 if dual == "ports" else 4],
            "p": [2 if dual == "ports" else 1, 1], "switch_ports": 16}
    planes = {"ft": {"hca": "mlx5_0", "gbps": 100.0, "topology": tree,
                     "opensm": {"routing": ["ftree"]}}}
    lanes = ["ft:1", "ft:2"]
    if dual == "planes":
        planes["ft2"] = {**planes["ft"], "hca": "mlx5_1"}
        lanes = ["ft:1", "ft2:1"]
    data = {"name": name, "nodes": {"hostname": "d{index:02d}", "racks": 4, "per_rack": 4},
            "planes": planes,
            "model": {"multirail": {"policy": policy, "rails": 2, "lanes": lanes}}}
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rails")
    hosts = [f"d{i:02d}" for i in range(16)]
    out = {}
    for dual in ("ports", "planes"):
        for policy in ("single", "round_robin", "stripe"):
            conf = system(tmp, f"{dual}-{policy}", dual, policy)
            out[dual, policy] = open_network(conf, "ft", "ftree", hosts=hosts,
                                             work=tmp / "work")
    return out


@pytest.mark.parametrize("dual", ["ports", "planes"])
def test_striping_a_large_message_doubles_its_bandwidth(nets, dual):
    one = [Phase.of([0], [12], MIB)]          # leaf 0 -> leaf 3
    single = bulk.run(nets[dual, "single"], one, keep_rates=True)
    stripe = bulk.run(nets[dual, "stripe"], one, keep_rates=True)
    assert stripe.rates[0][0] == pytest.approx(2 * single.rates[0][0], rel=1e-9)
    assert stripe.total < 0.52 * single.total
    # Below the threshold a message stays whole on one rail: same time as one rail.
    small = [Phase.of([0], [12], 4096)]
    assert bulk.run(nets[dual, "stripe"], small).total == \
        pytest.approx(bulk.run(nets[dual, "single"], small).total, rel=1e-9)


@pytest.mark.parametrize("dual", ["ports", "planes"])
def test_round_robin_gives_one_peer_one_rail_and_two_peers_two(nets, dual):
    rr, single = nets[dual, "round_robin"], nets[dual, "single"]
    one = [Phase.of([0], [12], MIB)]
    assert bulk.run(rr, one).total == pytest.approx(bulk.run(single, one).total, rel=1e-9)
    two = [Phase.of([0, 0], [12, 13], MIB)]    # peers 12 and 13: rails 0 and 1
    assert bulk.run(rr, two).total < 0.52 * bulk.run(single, two).total


def test_planes_use_disjoint_links_and_ports_their_own_port(nets):
    planes = nets["planes", "stripe"]
    first = len(planes.tables.link_gbps)
    msg, paths, _, part = planes.flows(np.array([0]), np.array([12]), np.array([MIB]))
    assert msg.tolist() == [0, 0] and part.tolist() == [MIB // 2, MIB // 2]
    on = [set(p[p >= 0].tolist()) for p in paths]
    assert max(on[0]) < first <= min(on[1])              # plane ft, then plane ft2
    ports = nets["ports", "stripe"]
    _, paths, _, _ = ports.flows(np.array([0]), np.array([12]), np.array([MIB]))
    t = ports.tables
    hca = ports.rank_hca[0]
    assert paths[0][0] == t.link_of[hca, 1] and paths[1][0] == t.link_of[hca, 2]
    assert not set(paths[0].tolist()) & set(paths[1].tolist()) - {-1}


def test_single_rail_flows_are_the_paths():
    """One rail: flows() is paths() with each message whole (every existing conf)."""
    from t2hx.conf import load_system, system_path
    mini = load_system(system_path("mini"))
    net = open_network(mini, "fattree", "ftree", hosts=mini.hostnames()[:8])
    src, dst = np.arange(8), (np.arange(8) + 3) % 8
    msg, p, h, part = net.flows(src, dst, MIB)
    p0, h0 = net.paths(src, dst, MIB)
    assert net.rails == [] and (msg == np.arange(8)).all()
    assert (p == p0).all() and (h == h0).all() and (part == MIB).all()


@pytest.mark.parametrize("dual", ["ports", "planes"])
def test_dual_rail_rates_match_simgrid(nets, dual):
    net = nets[dual, "stripe"]
    phases = [Phase.of(np.arange(16), patterns.bisections(16, 1, seed=s)[0], MIB)
              for s in (1, 2)] + [Phase.of(np.arange(16), (np.arange(16) + 4) % 16, MIB)]
    paths, _, group, size, owner = bulk.part_arrays(net, phases)
    src, dst = bulk.endpoints(phases)
    rail = np.concatenate([net.rail_parts(ph.src, ph.dst, ph.size)[1] for ph in phases])
    # SimGrid routes one path per ordered host pair: one host per (rank, rail) port.
    host = lambda ranks: ranks[owner] * 2 + rail        # noqa: E731
    ours = maxmin_rates(paths, net.capacity, group)
    theirs, _ = run_simgrid("rates", host(src), host(dst), paths, net.capacity, size, group)
    assert np.max(np.abs(ours - theirs) / theirs) < 0.02


def test_a_lane_on_a_missing_port_or_plane_is_a_one_line_error(tmp_path):
    conf = system(tmp_path, "bad", "planes", "stripe")
    data = yaml.safe_load(open(conf))
    data["model"]["multirail"]["lanes"] = ["ft:1", "nope:1"]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="model.multirail.lanes"):
        open_network(str(tmp_path / "bad.yaml"), "ft", "ftree", hosts=["d00", "d01"],
                     work=tmp_path / "w")
    data["model"]["multirail"]["lanes"] = ["ft:1", "ft:2"]     # one-port HCAs
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="port 2"):
        open_network(str(tmp_path / "bad.yaml"), "ft", "ftree", hosts=["d00", "d01"],
                     work=tmp_path / "w")


@pytest.mark.parametrize("dual", ["ports", "planes"])
def test_both_fluid_engines_stripe_and_agree(nets, dual):
    """The event-driven engines (capacity, workloads) see the parts too: the exact one and
    the compiled one halve a 4 MiB exchange and give the same end time."""
    from t2hx.flowsim.fluid import Comm, Job, run_jobs
    from t2hx.flowsim.fluid_fast import run_jobs_fast

    def end(net, engine) -> float:
        job = Job("x", [Comm(np.array([0, 12]), np.array([12, 0]), np.array([4 * MIB] * 2))])
        return engine(net, [job])[0].ends[0]

    for engine in (run_jobs, run_jobs_fast):
        one, two = end(nets[dual, "single"], engine), end(nets[dual, "stripe"], engine)
        assert two == pytest.approx(one / 2, rel=0.02)
    assert end(nets[dual, "stripe"], run_jobs) == \
        pytest.approx(end(nets[dual, "stripe"], run_jobs_fast), rel=1e-9)
