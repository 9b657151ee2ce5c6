"""Ring allreduce and Multi-PingPong as per-rank programs (t2hx/flowsim/patterns.py): what
baidu-allreduce's ``RingAllreduce`` and IMB's ``-multi 0 PingPong`` post, rank by rank,
and that a rank goes on as soon as its own partners let it, in both network engines."""

from __future__ import annotations

import math

import numpy as np
import pytest

from t2hx.errors import WorkloadError
from t2hx.flowsim import imbloop, patterns
from t2hx.flowsim.network import open_network
from t2hx.flowsim.packet import open_packet
from t2hx.flowsim.timeline import Program, eager_limit

KIB = 1 << 10
MIB = 1 << 20
FLOAT = patterns.FLOAT_BYTES


def hyperx(mini, routing, hosts: list[str]):
    return open_network(mini, "hyperx", "dfsssp", hosts=hosts, dumps=routing)


@pytest.fixture(scope="module")
def net8(mini, mini_hyperx_dir):
    return hyperx(mini, mini_hyperx_dir, mini.hostnames()[:8])


@pytest.fixture(scope="module", params=["flow", "packet"])
def engine(request, net8):
    return net8 if request.param == "flow" else open_packet(net8)


def ring_part(prog: Program) -> np.ndarray:
    """The ring's messages: the last 2(n − 1) steps of n sends (the lengths' allgather
    comes first; the copy and the reductions are each rank's local work in between)."""
    sends = np.flatnonzero(np.array(prog.src) != np.array(prog.dst))
    return sends[-2 * (prog.n - 1) * prog.n:]


def local_work(prog: Program) -> list[int]:
    return [k for k in range(len(prog.src)) if prog.src[k] == prog.dst[k]]


# -- ring allreduce -------------------------------------------------------------------------
def test_segments_split_the_buffer_as_baidu_does() -> None:
    assert patterns.ring_segments(10, 4) == [3, 3, 2, 2]
    for n, elements in ((7, 0), (7, 5), (7, 700), (13, 1000003)):
        seg = patterns.ring_segments(elements, n)
        assert sum(seg) == elements and max(seg) - min(seg) <= 1
        assert seg == sorted(seg, reverse=True)     # the extra elements go first


@pytest.mark.parametrize("n", [4, 5, 7])
@pytest.mark.parametrize("extra", [0, 3], ids=["divisible", "remainder"])
def test_each_rank_sends_its_right_neighbour_two_n_minus_one_chunks(n, extra) -> None:
    elements = 6 * n + extra
    prog = patterns.ring_allreduce_program(n, elements, 1e9, 1e9, "ompi-1.10")
    ring = ring_part(prog)
    src, dst, size = (np.array(x)[ring] for x in (prog.src, prog.dst, prog.size))
    assert (dst == (src + 1) % n).all()
    assert (np.bincount(src, minlength=n) == 2 * (n - 1)).all()
    sent = np.bincount(src, weights=size, minlength=n)
    seg = patterns.ring_segments(elements, n)
    # chunk r + 1 is the one rank r never sends in the reduce-scatter, r + 2 in the allgather
    assert sent.tolist() == [FLOAT * (2 * elements - seg[(r + 1) % n] - seg[(r + 2) % n])
                             for r in range(n)]
    assert sent.sum() == 2 * (n - 1) * FLOAT * elements
    if not extra:
        assert (sent == 2 * (n - 1) / n * FLOAT * elements).all()


def test_the_copy_and_each_reduction_hold_the_next_send_and_receive() -> None:
    n, elements, rate = 4, 4001, 1e9
    prog = patterns.ring_allreduce_program(n, elements, rate, 2 * rate, "ompi-4.1")
    seg = patterns.ring_segments(elements, n)
    work = local_work(prog)
    for r in range(n):
        mine = [prog.compute[k] for k in work if prog.src[k] == r]
        assert mine == pytest.approx([FLOAT * elements / (2 * rate)]
                                     + [FLOAT * seg[(r - i - 1) % n] / rate
                                        for i in range(n - 1)])
    for k in work:
        r = prog.src[k]
        sends = [j for j in range(len(prog.src)) if k in prog.send_after[j]]
        posts = [j for j in range(len(prog.src)) if k in prog.recv_after[j]]
        assert [prog.src[j] for j in sends] == [r] and [prog.dst[j] for j in posts] == [r]


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8, 13])
def test_the_lengths_allgather_brings_every_rank_every_length(n) -> None:
    prog = Program(n)
    patterns.lengths_allgather(prog, "ompi-1.10")
    assert len(prog.src) == n * math.ceil(math.log2(n))
    got = np.bincount(prog.dst, weights=prog.size, minlength=n)
    assert (got == (n - 1) * patterns.LENGTH_BYTES).all()
    if n & (n - 1) == 0:            # recursive doubling: pairs exchange
        pairs = set(zip(prog.src, prog.dst))
        assert all((d, s) in pairs for s, d in pairs)
    with pytest.raises(WorkloadError, match="ring or neighbour"):
        patterns.lengths_allgather(Program(7000), "ompi-1.10")


def first_late_receive(base: np.ndarray, late: np.ndarray, prog: Program, delay: float
                       ) -> list[int]:
    """For every rank, the first ring step whose receive completes ``delay`` later."""
    n = prog.n
    steps = ring_part(prog).reshape(2 * (n - 1), n)
    # step s's message from r − 1 is rank r's receive
    recv = steps[:, [(r - 1) % n for r in range(n)]]
    shifted = late[recv] - base[recv] > delay / 2
    assert shifted.any(axis=0).all()
    return [int(np.argmax(shifted[:, r])) for r in range(n)]


@pytest.mark.parametrize("chunk", [KIB, 64 * KIB], ids=["eager", "rendezvous"])
def test_a_late_rank_holds_up_its_neighbours_one_step_at_a_time(engine, chunk) -> None:
    """Rank d's copy takes 1 ms longer: d posts its step-0 receive late, its right
    neighbour's step-0 receive waits for d's send, the next one's at step 1, and so on. A
    rendezvous ``Send`` also waits for the receiver to post, so the delay walks left as
    well, one rank per step (d − 1 at step 1, d − 2 at step 2, …). In lockstep phases
    every rank would wait at step 0. Everyone ends about 1 ms later (the ring closes)."""
    n, d, delay = engine.ranks, 2, 1e-3
    prog = patterns.ring_allreduce_program(n, n * chunk // FLOAT, 4e9, 4e9, "ompi-1.10")
    base = imbloop.completions(engine, prog)[1]
    copy = next(k for k in local_work(prog) if prog.src[k] == d)
    prog.compute[copy] += delay
    late = imbloop.completions(engine, prog)[1]
    right = [(r - d - 1) % n for r in range(n)]
    left = [(d - r) % n if chunk > eager_limit(engine.system) else n for r in range(n)]
    expect = [0 if r == d else min(right[r], left[r]) for r in range(n)]
    assert first_late_receive(base, late, prog, delay) == expect
    assert late.max() - base.max() == pytest.approx(delay, rel=0.05)


def test_ring_allreduce_is_rank_zeros_time(engine) -> None:
    elements = 8 * 16 * KIB
    rate = engine.loggp.reduce_rate
    prog = patterns.ring_allreduce_program(8, elements, rate, rate, engine.loggp.collectives)
    assert patterns.ring_allreduce(engine, elements) == engine.run_program(prog)[0]


# -- Multi-PingPong -------------------------------------------------------------------------
def test_pairs_are_consecutive_ranks_and_the_pong_answers_the_ping() -> None:
    prog = patterns.pingpong_program(7, 4 * KIB, repetitions=3)
    assert sorted(set(zip(prog.src, prog.dst))) == [(0, 1), (1, 0), (2, 3), (3, 2),
                                                    (4, 5), (5, 4)]
    assert len(prog.src) == 3 * 2 * 3               # rank 6 joins no group
    for k in range(0, len(prog.src), 2):
        assert prog.send_after[k + 1] == prog.recv_after[k + 1] == [k]


@pytest.mark.parametrize("engine_name", ["flow", "packet"])
def test_pairs_that_share_a_cable_slow_each_other_down(mini, mini_hyperx_dir, engine_name
                                                       ) -> None:
    """Hosts m1n01-04 and m1n09-12 hang off two neighbouring switches. In linear order the
    pairs stay on their switch and each takes its time alone. Interleaved, the four pairs
    cross the one cable between the switches: all four pings (k·m bytes) cross it before
    the last pong can leave, so the slowest pair's round trip takes at least (k + 1)·m
    over the cable's rate."""
    def opened(hosts):
        net = hyperx(mini, mini_hyperx_dir, hosts)
        return net if engine_name == "flow" else open_packet(net)

    a, b = mini.hostnames()[0:4], mini.hostnames()[8:12]
    pairs = [opened(hosts[i:i + 2]) for hosts in (a, b) for i in (0, 2)]
    linear = patterns.pingpong_times(opened(a + b), MIB)
    assert linear == pytest.approx(np.concatenate([patterns.pingpong_times(x, MIB)
                                                   for x in pairs]), rel=1e-6)
    net = opened([h for p in zip(a, b) for h in p])
    pings, _ = net.paths(np.arange(0, 8, 2), np.arange(1, 8, 2))
    cable = set.intersection(*(set(p[p >= 0].tolist()) for p in pings))
    assert len(cable) == 1
    crossing = patterns.pingpong_times(net, MIB)
    rate = net.capacity[cable.pop()]
    assert 2 * crossing.max() >= (len(pings) + 1) * MIB / rate
    alone = patterns.pingpong_times(opened([a[0], b[0]]), MIB)
    assert (crossing > alone.max()).all()
    # repetitions back to back: the pairs drift apart, but each cable direction still
    # carries every pair's message of every repetition
    drifting = patterns.pingpong_times(net, MIB, repetitions=8)
    assert 2 * drifting.max() >= len(pings) * MIB / rate
    # both ranks of a pair end with the pong's delivery
    assert crossing[0::2] == pytest.approx(crossing[1::2])


def test_multi_pingpong_rows_are_imbs_over_every_grouped_rank(engine) -> None:
    """t_min/t_max/t_avg over the grouped ranks' own times, Mbytes/sec from t_max, the
    repetitions from one repetition's round trip as IMB's schedule sets them."""
    from t2hx.benchmarks import imbtext, mupp
    from t2hx.simrequest import BenchmarkOptions, SimRequest

    request = SimRequest("mini", "hyperx", "dfsssp", "", "mupp",
                         options=BenchmarkOptions(msglog="0:16"))
    out = mupp.run(request, engine)
    sizes = imbtext.msglog("0:16")
    assert [r.size for r in out.rows] == sizes
    for row in out.rows:
        times = patterns.pingpong_times(engine, row.size, row.reps) * 1e6
        assert (row.t_min, row.t_max, row.t_avg) == pytest.approx(
            (times.min(), times.max(), times.mean()))
        assert row.mbytes == (pytest.approx(row.size / row.t_max) if row.size else 0.0)
    assert out.rows[0].reps >= out.rows[-1].reps


@pytest.mark.parametrize("m", [4 * KIB, MIB])
def test_a_long_pingpong_loop_is_extrapolated_as_the_whole_loop_runs(engine, mini,
                                                                      mini_hyperx_dir, m):
    """Pairs that share a cable drift apart over the loop; the loop extrapolated from
    LOOP_PROBE repetitions matches the whole loop of 80 per rank (in the packet engine the
    drift settles over about 16 repetitions at 1 MiB, hence the probes' lengths)."""
    a, b = mini.hostnames()[0:4], mini.hostnames()[8:12]
    net = hyperx(mini, mini_hyperx_dir, [h for p in zip(a, b) for h in p])
    net = net if engine.__class__ is net.__class__ else open_packet(net)
    reps = 80
    whole = net.run_program(patterns.pingpong_program(8, m, reps)) / reps / 2
    assert patterns.pingpong_times(net, m, reps) == pytest.approx(whole, rel=0.02)


