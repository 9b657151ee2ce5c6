"""Placements, seed 001's mappings, collective messages and two-opt on real fabrics."""

import numpy as np
import pytest

from t2hx.conf import load_system
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from t2hx.routing.opensm import route
from t2hx.fabric.shortcut import circulant, random_shortcut
from t2hx.placement import basic, costs, mappings
from t2hx.placement.collective_messages import messages
from t2hx.placement.seeding import rng_for
from t2hx.placement.twoopt import ContentionObjective, HopObjective, incidence, two_opt
from t2hx import ROOT


def hosts(n):
    return [f"h{i:04d}" for i in range(n)]


@pytest.fixture(scope="module")
def shortcut64():
    return random_shortcut("sc64", hosts(64), 64, 6, 1, seed=3)


@pytest.fixture(scope="module")
def mini_routed(tmp_path_factory):
    system = load_system(ROOT / "conf/systems/mini.yaml")
    fabric = build_plane(system, "hyperx")
    out = tmp_path_factory.mktemp("dfsssp")
    route(fabric, out, "dfsssp")
    return fabric, load_tables(fabric, out)


# -- basic placements -----------------------------------------------------------------------
def test_linear_is_the_identity():
    assert basic.linear(672, 56).tolist() == list(range(56))


@pytest.mark.parametrize("p", [0.8, 0.5])
def test_clustered_strides_follow_the_geometric_law(p):
    order = basic.clustered(40_000, 10_001, rng_for(7, "law"), p=p)
    strides = np.diff(order)                       # 10^4 strides, no wrap-around this short
    assert strides.min() >= 1
    assert abs(strides.mean() - 1 / p) <= 0.05 / p
    # P(Δ = 1) = p as well, not just the mean
    assert abs((strides == 1).mean() - p) < 0.02


def test_clustered_always_gives_distinct_nodes_and_nests():
    full = basic.clustered(672, 672, rng_for(1, "clustered"))
    assert sorted(full.tolist()) == list(range(672))
    part = basic.clustered(672, 100, rng_for(1, "clustered"))
    assert part.tolist() == full[:100].tolist()
    assert part[0] == 0


def test_a_clustered_job_that_fits_one_leaf_gets_it():
    """Seed 000 §5.1: at 7 nodes the clustered list is the linear one (one HyperX switch);
    one node more and the geometric strides apply. The t2hx hostfiles follow (the leaf size
    comes from the conf's planes: 7 per HyperX switch, 14 per fat-tree leaf)."""
    assert basic.clustered(672, 7, rng_for(1, "c"), one_leaf=7).tolist() == list(range(7))
    eight = basic.clustered(672, 8, rng_for(1, "c"), one_leaf=7)
    assert eight.tolist() == basic.clustered(672, 8, rng_for(1, "c")).tolist() != list(range(8))
    root = ROOT / "hostfiles" / "t2hx"
    assert (root / "clustered" / "7.txt").read_text() == (root / "linear" / "7.txt").read_text()
    assert (root / "clustered" / "14.txt").read_text() != (root / "linear" / "14.txt").read_text()


def test_spread_shares_a_job_evenly_over_the_first_roomy_leaves():
    """Seed 004 §4.3.4: 28 nodes on ten switches of 18 nodes: eight leaves give 3, two give
    2, each its first nodes; a leaf without room for the larger share is passed over."""
    leaf_of = np.repeat(np.arange(20), 18)
    got = basic.spread(leaf_of, 28, 10)
    per_leaf = np.bincount(leaf_of[got], minlength=20)
    assert per_leaf[:10].tolist() == [3] * 8 + [2] * 2 and per_leaf[10:].sum() == 0
    assert got.tolist()[:4] == [0, 1, 2, 18] and sorted(got.tolist()) == got.tolist()
    holey = leaf_of.copy()
    holey[2:18] = 99                  # leaf 0 keeps two usable nodes: too few for a share of 3
    assert 0 not in holey[basic.spread(holey, 28, 10)]
    assert basic.spread(leaf_of, 4, 10).tolist() == [0, 18, 36, 54]     # n < switches
    with pytest.raises(T2hxError, match="only 2 leaf switches"):
        basic.spread(np.repeat(np.arange(2), 18), 28, 10)
    with pytest.raises(T2hxError, match="at least 1"):
        basic.spread(leaf_of, 28, 0)


def test_seed004_fig8_hostfile_is_28_nodes_on_ten_leaves_of_one_island():
    system = load_system(ROOT / "conf/systems/sc16-taurus.yaml")
    fabric = build_plane(system, "ib")
    names = (ROOT / "hostfiles/sc16-taurus/spread/28.txt").read_text().split()
    leaves = {fabric.switch_of(fabric.index(n)) for n in names}
    assert len(names) == len(set(names)) == 28 and len(leaves) == 10
    assert max(int(n.removeprefix("taurusi")) for n in names) <= 270    # island 1: 270 nodes


def test_random_is_a_permutation_of_a_subset():
    order = basic.random_order(672, 56, rng_for(1, "random"))
    assert len(set(order.tolist())) == 56 and 0 <= order.min() and order.max() < 672
    assert sorted(basic.random_order(64, 64, rng_for(2, "r")).tolist()) == list(range(64))
    assert order.tolist() != sorted(order.tolist())


def test_placements_refuse_impossible_requests():
    with pytest.raises(T2hxError, match="only 10 usable"):
        basic.linear(10, 11)
    with pytest.raises(T2hxError, match="p = 1.5"):
        basic.clustered(10, 3, rng_for(1), p=1.5)


# -- collectives ----------------------------------------------------------------------------
def test_binomial_bcast_is_seed_001_table_3_1():
    m = messages("bcast", 8)
    steps = {}
    for s, d, k in zip(m.src.tolist(), m.dst.tolist(), m.step.tolist()):
        steps.setdefault(k, set()).add((s, d))
    assert steps == {0: {(0, 4)}, 1: {(0, 2), (4, 6)}, 2: {(0, 1), (2, 3), (4, 5), (6, 7)}}


@pytest.mark.parametrize("n", [2, 5, 7, 8, 12, 512])
def test_collectives_reach_every_rank(n):
    b = messages("bcast", n)
    assert len(b) == n - 1 and sorted(b.dst.tolist()) == list(range(1, n))
    a = messages("allreduce", n)
    assert set(a.dst.tolist()) == set(range(n))    # every rank gets the result
    t = messages("alltoall", n)
    assert len(t) == n * (n - 1).bit_length()
    if n & (n - 1) == 0:
        assert len(a) == n * (n.bit_length() - 1)


def test_incidence_lists_every_message_at_both_ends():
    m = messages("allreduce", 12)
    inc, other = incidence(m)
    for r in range(12):
        mine = sorted(i for i in inc[r].tolist() if i < len(m))
        assert mine == sorted(np.flatnonzero((m.src == r) | (m.dst == r)).tolist())


# -- costs ----------------------------------------------------------------------------------
def test_graph_hops_match_the_fabric_bfs(shortcut64):
    ref = shortcut64.hop_matrix()                  # one host per switch, same order
    assert np.array_equal(costs.graph_hops(shortcut64), ref)


def test_minimal_paths_are_shortest_and_connected(shortcut64):
    paths = costs.minimal_paths(shortcut64)
    hops = costs.graph_hops(shortcut64)
    length = (paths >= 0).sum(axis=2)
    assert np.array_equal(length, hops + 2)        # injection + switch hops + ejection
    cables = shortcut64.cables
    node_of = [(c.a, c.b) for c in cables]
    for s, d in [(0, 17), (5, 63), (40, 2)]:       # consecutive links chain up
        links = [x for x in paths[s, d] if x >= 0]
        walk = [node_of[x // 2][x % 2] for x in links]
        ends = [node_of[x // 2][1 - x % 2] for x in links]
        assert walk[1:] == ends[:-1]


def test_routed_hops_are_minimal_under_dfsssp(mini_routed):
    fabric, tables = mini_routed
    assert np.array_equal(costs.routed_hops(tables), costs.graph_hops(fabric))


# -- seed 001 mappings ----------------------------------------------------------------------
def test_circulant_mapping_reaches_the_minimum_of_table_4_1():
    fabric = circulant("g16", hosts(16), 16, [1, 2, 4, 8])
    hops = costs.graph_hops(fabric)
    for seed in range(4):
        place = mappings.circulant_mapping(16, 8, rng_for(seed, "c"))
        totals = [HopObjective(hops, messages(c, 8)).total(place)
                  for c in ("bcast", "allreduce", "alltoall")]
        assert totals == [7, 24, 24]               # n−1, n·log2 n, n·log2 n


def test_hierarchical_mapping_is_a_bfs_ball(shortcut64):
    hops = costs.graph_hops(shortcut64)
    usable = np.ones(64, dtype=bool)
    usable[[1, 2, 3]] = False
    place = mappings.hierarchical_mapping(shortcut64, 20, rng_for(1), usable, root=0)
    assert place.tolist() == sorted(place.tolist()) and not {1, 2, 3} & set(place.tolist())
    left = np.setdiff1d(np.flatnonzero(usable), place)
    assert hops[0, place].max() <= hops[0, left].min()


def test_ring_mapping_is_consecutive_and_skips_down_nodes():
    usable = np.ones(32, dtype=bool)
    usable[5] = False
    place = mappings.ring_mapping(32, 8, rng_for(1), usable, start=2)
    assert place.tolist() == [2, 3, 4, 6, 7, 8, 9, 10]
    wrap = mappings.ring_mapping(32, 4, rng_for(1), start=30)
    assert wrap.tolist() == [30, 31, 0, 1]


# -- two-opt --------------------------------------------------------------------------------
@pytest.mark.parametrize("collective", ["bcast", "allreduce", "alltoall"])
def test_two_opt_lowers_total_hops(shortcut64, collective):
    hops = costs.graph_hops(shortcut64)
    start = mappings.random_mapping(64, 32, rng_for(1, "m"))
    obj = HopObjective(hops, messages(collective, 32))
    result = two_opt(obj, start, 3000, rng_for(1, "2opt"))
    assert result.final < result.initial
    assert result.final == obj.total(result.placement)
    assert sorted(result.placement.tolist()) == sorted(start.tolist())


def _check_deltas(obj, start, swaps=300):
    rng = np.random.default_rng(5)
    place = np.array(start)
    total = obj.total(place)
    n = len(place)
    for _ in range(swaps):
        a, b = rng.choice(n, 2, replace=False)
        d = obj.delta(place, int(a), int(b))
        after = place.copy()
        after[[a, b]] = after[[b, a]]
        if rng.random() < 0.5:                    # accept half of them, as two-opt may
            obj.accept()
            place = after
            assert obj.total(place) == total + d   # full recomputation (resets state)
            total += d
        else:
            fresh = type(obj).total(obj, after)
            assert fresh - total == d
            obj.total(place)                       # restore the state of ``place``


@pytest.mark.parametrize("collective", ["bcast", "allreduce", "alltoall"])
def test_incremental_delta_equals_full_recomputation(shortcut64, collective):
    start = mappings.random_mapping(64, 24, rng_for(2, "m"))
    msgs = messages(collective, 24)
    _check_deltas(HopObjective(costs.graph_hops(shortcut64), msgs), start)
    _check_deltas(ContentionObjective(costs.minimal_paths(shortcut64), msgs,
                                      costs.link_count(shortcut64)), start)


def test_contention_two_opt_under_real_routing(mini_routed):
    fabric, tables = mini_routed
    paths = costs.routed_paths(tables)
    start = basic.random_order(64, 32, rng_for(3, "r"))
    msgs = messages("alltoall", 32)
    obj = ContentionObjective(paths, msgs, tables.links)
    _check_deltas(obj, start, swaps=100)
    result = two_opt(obj, start, 1500, rng_for(3, "2opt"))
    assert result.final < result.initial
    assert result.final == obj.total(result.placement)
    hop = HopObjective(costs.routed_hops(tables), msgs)
    assert two_opt(hop, start, 1500, rng_for(3, "2opt")).final < hop.total(start)


def test_two_opt_is_reproducible(shortcut64):
    obj = HopObjective(costs.graph_hops(shortcut64), messages("bcast", 32))
    start = mappings.random_mapping(64, 32, rng_for(4))
    one = two_opt(obj, start, 2000, rng_for(9)).placement
    two = two_opt(obj, start, 2000, rng_for(9)).placement
    assert one.tolist() == two.tolist()


def test_cco_walks_the_breadth_first_tree_depth_first_from_rank_0():
    """Seed 001 §2.4.2's CCO on a 16-switch ring (one host per switch): the BFS tree from
    rank 0's switch is two arms, walked depth first, so the chosen hosts come in ring order
    along the first arm, then back along the other."""
    ring = circulant("ring16", hosts(16), 16, [1])
    chosen = np.array([0, 5, 3, 15, 1, 2, 12])
    order = mappings.cco_order(ring, chosen)
    assert chosen[order].tolist() == [0, 1, 2, 3, 5, 15, 12]
    assert sorted(order.tolist()) == list(range(len(chosen)))


def test_cco_keeps_the_base_nodes_and_shortens_a_broadcast(shortcut64):
    """A random draw of 24 of 64 nodes put in CCO: same nodes, rank 0 stays the root, and the
    binomial Broadcast's total hops drop against the random order."""
    chosen = mappings.random_mapping(64, 24, rng_for(5))
    ordered = chosen[mappings.cco_order(shortcut64, chosen)]
    assert ordered[0] == chosen[0] and sorted(ordered) == sorted(chosen)
    hops = HopObjective(costs.graph_hops(shortcut64), messages("bcast", 24))
    assert hops.total(ordered) < hops.total(chosen)
