"""PARX picks a path per message, as its MPI does (seed 000 §3.2.4: at random where Table 1
lists two LIDs): in both network engines, messages of one pair take both LIDs where Table 1
offers two and always the one it lists otherwise; the coin is fair and reproducible."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.flowsim import bulk
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.network import Network, open_network
from t2hx.flowsim.packet import open_packet
from t2hx.routing import parx

# 16 mini hosts on four switches: hx-0-0 and hx-0-1 (Q0), hx-2-0 (Q3), hx-0-2 (Q1).
HOSTS = ([f"m1n{i:02d}" for i in range(1, 5)] + [f"m2n{i:02d}" for i in range(1, 5)]
         + [f"m1n{i:02d}" for i in range(9, 13)] + [f"m3n{i:02d}" for i in range(1, 5)])
TWO = (0, 4)         # Q0 → Q0, switches joined by a cable: Table 1b offers LID 0 or 2
ONE = (0, 8)         # Q0 → Q3: Table 1b lists LID 2 only
MIB = 1 << 20


@pytest.fixture(scope="module")
def parx16(mini, tmp_path_factory):
    return open_network(mini, "hyperx", "parx", hosts=HOSTS,
                        work=tmp_path_factory.mktemp("parx-per-message"))


@pytest.fixture(scope="module", params=["flow", "packet"])
def engine(request, parx16):
    return parx16 if request.param == "flow" else open_packet(parx16)


def lid_paths(net, src: int, dst: int, size: int = MIB) -> dict[tuple[int, ...], int]:
    """Path (directed links) → LID index, for the LIDs Table 1 offers a pair's messages."""
    t, q = net.tables, net.chooser.quadrant[net.rank_hca_idx]
    a, b = int(net.rank_hca[src]), int(net.rank_hca[dst])
    opts = parx.choices(int(q[src]), int(q[dst]), size >= net.chooser.threshold)
    return {tuple(t.path(a, t.hca_lid(b, x))): x for x in opts}


def taken(engine, ph: Phase) -> list[tuple[int, ...]]:
    """The links each message of a phase travels in the engine: the paths the flow model's
    max-min solver gets, the route of the data the packet kernel injects (without the host
    links)."""
    if isinstance(engine, Network):
        paths = bulk.part_arrays(engine, [ph])[0]
        return [tuple(int(x) for x in row if x >= 0) for row in paths]
    msgs, data, _ = engine.messages(ph)
    off = msgs.route_off
    return [tuple(int(x) for x in msgs.route[off[m] + 1:off[m + 1] - 1]) for m in data]


def lids_taken(engine, ph: Phase) -> list[int]:
    net = engine if isinstance(engine, Network) else engine.net
    known = {k: x for s, d in set(zip(ph.src.tolist(), ph.dst.tolist()))
             for k, x in lid_paths(net, s, d).items()}
    return [known[p] for p in taken(engine, ph)]


def test_the_pairs_have_the_quadrants_the_tests_need(parx16) -> None:
    q = parx16.chooser.quadrant[parx16.rank_hca_idx]
    assert parx.choices(q[TWO[0]], q[TWO[1]], True) == (0, 2)
    assert parx.choices(q[ONE[0]], q[ONE[1]], True) == (2,)
    # LID 0 and 2 of the TWO pair follow different links: the engines' paths tell them apart
    assert sorted(lid_paths(parx16, *TWO).values()) == [0, 2]


def test_messages_of_one_pair_take_both_lids_where_table1_offers_two(engine) -> None:
    ph = Phase.of(np.full(8, TWO[0]), np.full(8, TWO[1]), MIB)
    assert set(lids_taken(engine, ph)) == {0, 2}


def test_a_pair_with_one_table1_lid_always_takes_it(engine) -> None:
    ph = Phase.of(np.full(8, ONE[0]), np.full(8, ONE[1]), MIB)
    assert lids_taken(engine, ph) == [2] * 8


def test_one_message_per_phase_draws_anew_in_each_phase(engine) -> None:
    """eBB's rounds: the pair sends one message per phase beside other pairs that change;
    over the rounds it takes both LIDs (the coin is per message, not per pair)."""
    lids = set()
    for other in range(9, 16):
        ph = Phase.of([TWO[0], ONE[0] + 1], [TWO[1], other], MIB)
        lids.add(lids_taken(engine, ph)[0])
    assert lids == {0, 2}


def test_identical_messages_draw_identically(parx16) -> None:
    """Reproducible: the same call gives the same LIDs (phases are simulated once and
    results cached by their messages)."""
    src, dst = np.array([TWO[0]] * 16), np.array([TWO[1]] * 16)
    first = parx16.lid_index(src, dst, MIB)
    assert np.array_equal(first, parx16.lid_index(src.copy(), dst.copy(), MIB))
    assert set(first.tolist()) == {0, 2}


def test_the_coin_is_fair_over_many_messages() -> None:
    rng = np.random.default_rng(5)
    src = rng.integers(0, 64, 40_000)
    dst = rng.integers(0, 64, 40_000)
    coins = parx.message_coins(src, dst, 4096)
    assert set(coins.tolist()) == {0, 1}
    assert abs(coins.mean() - 0.5) < 0.01
    # one sender's consecutive messages to one destination: fair too, not alternating
    one = parx.message_coins(np.zeros(4000, np.int64), np.ones(4000, np.int64), MIB)
    assert abs(one.mean() - 0.5) < 0.03
    assert 0.4 < np.mean(one[1:] != one[:-1]) < 0.6
    # one pair, one message per call, in calls that differ elsewhere (eBB's rounds)
    per_call = [int(parx.message_coins(np.array([0, 1]), np.array([1, d]), MIB)[0])
                for d in range(2, 4002)]
    assert abs(np.mean(per_call) - 0.5) < 0.03


def test_chooser_picks_by_table1_with_the_message_coins(parx16) -> None:
    chooser = parx16.chooser
    n = len(chooser.quadrant)
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, n, 5000), rng.integers(0, n, 5000)
    size = rng.choice([8, 511, 512, MIB], 5000)
    coin = parx.message_coins(src, dst, size)
    want = [parx.select(int(chooser.quadrant[s]), int(chooser.quadrant[d]), int(z), 512, int(c))
            for s, d, z, c in zip(src, dst, size, coin)]
    assert chooser(src, dst, size).tolist() == want
