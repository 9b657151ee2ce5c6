"""Several ranks per node in the flow model (docs/modelling.md#ranks-per-node): a node's
ranks in a block as Open MPI's ``--map-by ppr:N:node`` places them, sharing its links, its
memory for their messages to each other, and its compute rates; on the mini HyperX routed by
real OpenSM under ibsim."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.errors import WorkloadError
from t2hx.flowsim import apps, appmodel
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.network import open_network, shm_rate

MIB = 1 << 20


@pytest.fixture(scope="module")
def packed(mini, mini_hyperx_dir):
    """The first 4 mini hosts with 2 ranks each: ranks 2k and 2k + 1 on host k."""
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4],
                        dumps=mini_hyperx_dir, ranks_per_node=2)


@pytest.fixture(scope="module")
def single(mini, mini_hyperx_dir):
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4],
                        dumps=mini_hyperx_dir)


def test_ranks_fill_each_host_in_a_block(packed, mini) -> None:
    hosts = mini.hostnames()[:4]
    assert packed.ranks == 8
    assert packed.hosts == [h for h in hosts for _ in range(2)]
    assert packed.rank_node.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_two_ranks_of_a_host_exchange_through_its_memory_alone(packed, single) -> None:
    p, hops = packed.paths(np.array([0, 3]), np.array([1, 2]))
    assert p[:, 0].tolist() == [packed.shm_link[0], packed.shm_link[1]]
    assert (p[:, 1:] < 0).all() and hops.tolist() == [0, 0]
    assert packed.capacity[packed.shm_link].tolist() == [shm_rate(packed.system)] * 4
    # a rank's own operations (timeline joins, compute) are as with one rank per node
    assert (packed.paths(np.array([2]), np.array([2]))[0]
            == single.paths(np.array([1]), np.array([1]))[0]).all()


def test_ranks_of_different_hosts_take_their_hosts_path(packed, single) -> None:
    p2, h2 = packed.paths(np.array([0, 1, 7]), np.array([2, 6, 4]))
    p1, h1 = single.paths(np.array([0, 0, 3]), np.array([1, 3, 2]))
    assert (p2[:, :p1.shape[1]] == p1).all() and (h2 == h1).all()


def test_a_hosts_ranks_share_its_link(packed, single) -> None:
    """Two ranks of host 0 sending to two ranks of host 1 take what one rank alone took."""
    one = single.run([Phase.of([0], [1], 64 * MIB)]).total
    two = packed.run([Phase.of([0, 1], [2, 3], 64 * MIB)]).total
    assert two == pytest.approx(2 * one, rel=0.01)


def test_intra_node_messages_load_memory_not_the_network(packed) -> None:
    size = 256 * MIB
    local = packed.run([Phase.of([0], [1], size)]).total
    assert local == pytest.approx(size / shm_rate(packed.system) + packed.loggp.latency(
        np.array([0.0]))[0], rel=1e-6)
    both = packed.run([Phase.of([0, 2], [1, 3], size)]).total   # two hosts' memories
    assert both == pytest.approx(local, rel=1e-6)
    shared = packed.run([Phase.of([0, 1], [1, 0], size)]).total  # one host's, twice
    assert shared == pytest.approx(2 * local, rel=0.01)


def test_a_rank_computes_with_its_share_of_the_node(packed, mini, mini_hyperx_dir) -> None:
    """The same 8 ranks on 4 nodes compute twice as long as on 8."""
    spread = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:8],
                          dumps=mini_hyperx_dir)
    node = appmodel.default_node()
    share = appmodel.rank_share(node, 4)
    assert share["mem_gbs"] == node["mem_gbs"] / 4
    assert share["peak_gflops"] == node["peak_gflops"] / 4
    app = apps_of("minife")
    inp = {"n_base": 31}
    alone = apps.run_app(spread, app, 1.0, inp=inp, node=node)
    two = apps.run_app(packed, app, 1.0, inp=inp, node=node)
    assert two.compute_s == pytest.approx(2 * alone.compute_s, rel=1e-9)


def apps_of(key: str):
    from t2hx import benchmarks

    return benchmarks.app(key, field="test")


def test_more_ranks_than_cores_is_refused_in_one_line(mini, mini_hyperx_dir) -> None:
    with pytest.raises(WorkloadError) as err:
        open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4],
                     dumps=mini_hyperx_dir, ranks_per_node=mini.nodes["cores"] + 1)
    assert err.value.field == "ranks_per_node" and "cores" in err.value.line()
    assert "\n" not in err.value.line()


def test_the_packet_engine_refuses_several_ranks_per_node(mini, mini_hyperx_dir) -> None:
    from t2hx.flowsim.models import open_packets
    from t2hx.simrequest import NetworkOptions, SimRequest

    request = SimRequest(str(mini.path), "hyperx", "dfsssp", "-", "imb", "Bcast",
                         network=NetworkOptions(routing_dir=str(mini_hyperx_dir),
                                                ranks_per_node=2), model="packet")
    with pytest.raises(WorkloadError, match="packet engine"):
        open_packets(request)


def test_one_rank_per_node_keeps_its_cache_and_noise_keys() -> None:
    """Runs at one rank per node keep their run-cache and noise keys' options as before
    ranks per node existed; more ranks key apart."""
    from t2hx.simrequest import NetworkOptions, SimRequest

    base = SimRequest("t2hx", "fattree", "ftree", "h.txt", "amg")
    assert "ranks_per_node" not in base.key_options()
    more = SimRequest("t2hx", "fattree", "ftree", "h.txt", "amg",
                      network=NetworkOptions(ranks_per_node=16))
    assert more.key_options() == {**base.key_options(), "ranks_per_node": 16}


def test_a_workloads_jobs_run_at_their_own_ranks_per_node(mini, mini_hyperx_dir) -> None:
    """Seed 003's workloads mix jobs of 16 and of one rank per node (t2hx/jobmix.py): each
    job reports its nodes, and the packed job's ranks compute with their share of a node."""
    from t2hx.flowsim import multijob
    from t2hx.flowsim.fluid import run_jobs

    h = mini.hostnames()[:4]
    net = open_network(mini, "hyperx", "dfsssp", hosts=[h[0], h[0], h[1], h[1], h[2], h[3]],
                       dumps=mini_hyperx_dir)
    node = appmodel.default_node()
    app = apps_of("minife")
    out = multijob.run_workload(net, [app, app], [np.arange(0, 4), np.arange(4, 6)],
                                [{"n_base": 31}] * 2, 1.0, [appmodel.rank_share(node, 2), node],
                                0.05, run_jobs)
    assert [j.nodes for j in out] == [2, 2]
    assert all(j.steps > 0 and j.alone_steps > 0 for j in out)
    assert out[0].alone_step_s > 1.5 * out[1].alone_step_s
