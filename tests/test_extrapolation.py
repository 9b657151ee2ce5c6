"""The steady-state extrapolation of long pipelines and rings (t2hx/flowsim/steady.py)
against the whole call: exact on a uniform chain, within a stated tolerance where ranks
share links, in both network engines; the truncated calls keep what the real call does
around their repeated steps (the last segment, the ring's prologue and phase boundaries)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from t2hx.flowsim import patterns, rooted, steady, symmetric, timeline
from t2hx.flowsim.network import open_network
from t2hx.flowsim.packet import open_packet

KIB = 1 << 10
MIB = 1 << 20
RATE = 4e9          # bytes/s a rank combines (the confs' reduce_gbps 32)
RULES = "ompi-1.10"
#: A ring of 16 ranks has 15 steps per phase: its truncated calls keep 4 and 8 steps of each
#: phase, extrapolating over 7 (the study never truncates a ring, whose depth is n − 1).
RING_SHORT = (4, 8)
#: (per rank, IMB's t_min/t_max/t_avg and rank 0) relative tolerances of the extrapolated
#: call against the whole one. Measured on these networks, either engine: the pipelines
#: at most 0.49 % and 0.44 % (0 to rounding in the flow model but for the linear split
#: binary Bcast), the rings, truncated far inside their 15 steps, 3.3 % and 1.8 %
#: (docs/modelling.md#per-rank-timelines).
PIPELINE = (0.01, 0.01)
RING = (0.05, 0.03)


def stats(t: np.ndarray) -> np.ndarray:
    return np.array([t.min(), t.max(), t.mean(), t[0]])


@pytest.fixture(scope="module", params=["linear", "random"])
def net(request, mini, mini_hyperx_dir):
    """16 ranks of the mini HyperX: the first 16 hosts in order (consecutive ranks one
    switch apart at most), or 16 hosts drawn at random in random order, whose neighbours'
    paths share cables (:func:`test_the_random_placement_shares_cables`)."""
    hosts = mini.hostnames()
    if request.param == "random":
        hosts = list(np.random.default_rng(2019).permutation(hosts))
    return open_network(mini, "hyperx", "dfsssp", hosts=hosts[:16], dumps=mini_hyperx_dir)


@pytest.fixture(scope="module", params=["flow", "packet"])
def engine(request, net):
    return net if request.param == "flow" else open_packet(net)


def _shared_cables(net, src: np.ndarray, dst: np.ndarray) -> int:
    """Links that more than one of these messages crosses."""
    paths, _ = net.paths(src, dst)
    links = paths[paths >= 0]
    return int((np.bincount(links) > 1).sum())


def test_the_random_placement_shares_cables(mini, mini_hyperx_dir) -> None:
    """The contended case is contended: the ring's neighbours, and the pipelines' parents
    and children, cross some cables together."""
    hosts = list(np.random.default_rng(2019).permutation(mini.hostnames()))[:16]
    net = open_network(mini, "hyperx", "dfsssp", hosts=hosts, dumps=mini_hyperx_dir)
    r = np.arange(16)
    assert _shared_cables(net, r, (r + 1) % 16) > 0


# -- exact where every segment costs the same --------------------------------------------
@pytest.mark.parametrize("name,alg,m", [("Bcast", "pipeline@8192", MIB),
                                        ("Bcast", "pipeline@65536", 8 * MIB),
                                        ("Reduce", "pipeline@1024", 256 * KIB),
                                        ("Reduce", "pipeline@32768", 4 * MIB)])
@pytest.mark.parametrize("short", [(3, 5), (8, 16)])
def test_the_rule_is_exact_on_a_uniform_chain(mini, mini_hyperx_dir, name, alg, m, short
                                              ) -> None:
    """Four ranks on one switch: every hop crosses the same two host links, none shared,
    so T_j(S) = T_j(S2) + (S − S2)·t for every S, eager or rendezvous segments alike, and
    the rule gives the whole call's ends to rounding, whatever S1 and S2."""
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:4],
                       dumps=mini_hyperx_dir)
    r = np.arange(3)
    assert len(set(net.paths(r, r + 1)[1].tolist())) == 1          # hops: one switch
    assert _shared_cables(net, r, r + 1) == _shared_cables(net, r + 1, r) == 0
    call = rooted.call(name, alg, 4, m, RULES, RATE)
    assert call.repeats > 4 * short[1]
    whole = net.run_program(call.whole())
    assert steady.extrapolated(net.run_program, call, *short) == pytest.approx(whole,
                                                                             rel=1e-9)


@pytest.mark.parametrize("name,alg,m", [("Bcast", "pipeline@8192", MIB),
                                        ("Reduce", "pipeline@1024", 256 * KIB)])
def test_the_rule_is_exact_on_a_deep_eager_chain(mini, mini_hyperx_dir, name, alg, m
                                                ) -> None:
    """Sixteen ranks in host order over four switches: the hops differ, but no link is
    shared and an eager segment never waits for its receiver, so every rank's end is its
    path's fill plus S times its slowest hop upstream: linear in S from the start, and the
    rule is exact with both truncated calls shorter than the chain."""
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:16],
                       dumps=mini_hyperx_dir)
    r = np.arange(15)
    assert len(set(net.paths(r, r + 1)[1].tolist())) > 1
    assert _shared_cables(net, r, r + 1) == 0
    call = rooted.call(name, alg, 16, m, RULES, RATE)
    assert call.depth == 15
    whole = net.run_program(call.whole())
    assert steady.extrapolated(net.run_program, call, 3, 5) == pytest.approx(whole, rel=1e-9)


# -- within the tolerance where links are shared -------------------------------------------
Case = tuple[steady.Repeated, tuple[int, int], tuple[float, float]]


def _calls(n: int, rate: float) -> dict[str, Case]:
    """The study's long pipelines and rings on n ranks, each with its truncated calls and
    its tolerances."""
    calls = {}
    for name, alg, m in (("Bcast", "pipeline@8192", 4 * MIB),
                         ("Reduce", "pipeline@1024", 512 * KIB),
                         ("Bcast", "split_binary@1024", MIB)):
        call = rooted.call(name, alg, n, m, RULES, rate)
        calls[f"{name}-{alg}"] = call, call.shortened(), PIPELINE
    calls["Allreduce-ring"] = (symmetric.call("Allreduce", "ring", n, MIB, RULES, rate),
                               RING_SHORT, RING)
    calls["baidu-ring"] = (patterns.ring_allreduce_call(n, MIB // 4, rate, rate, RULES),
                           RING_SHORT, RING)
    return calls


CASES = ["Bcast-pipeline@8192", "Reduce-pipeline@1024", "Bcast-split_binary@1024",
         "Allreduce-ring", "baidu-ring"]


@pytest.mark.parametrize("case", CASES)
def test_the_extrapolation_is_near_the_whole_call(engine, case) -> None:
    """1.10's 8 KiB pipeline Bcast of 4 MiB and 1 KiB pipeline Reduce of 512 KiB (512
    segments, depth 15, truncated to 158 and 286 as the study truncates them), its split
    binary Bcast of 1 MiB (512 segments a half, depth 3), IMB's ring Allreduce and baidu's
    ring (15 steps a phase): each rank's extrapolated end, and IMB's t_min/t_max/t_avg
    and the ring's rank 0, within :data:`PIPELINE` resp. :data:`RING` of the whole
    call's."""
    call, short, (per_rank, summary) = _calls(engine.ranks, engine.loggp.reduce_rate)[case]
    assert call.repeats > short[1]
    whole = engine.run_program(call.whole())
    guess = steady.extrapolated(engine.run_program, call, *short)
    assert guess == pytest.approx(whole, rel=per_rank)
    assert stats(guess) == pytest.approx(stats(whole), rel=summary)


# -- when the rule applies -------------------------------------------------------------------
def test_imb_extrapolates_only_pipelines_long_enough(mini_hyperx) -> None:
    """IMB's rows take the extrapolation where the truncated calls hold at most half the
    segments (1.10's 1.25 MiB Reduce on 64 ranks, a chain of 1,280 segments: 254 + 382 of
    them), the whole call otherwise (1 MiB: 1,024 segments)."""
    net = dataclasses.replace(mini_hyperx, loggp=dataclasses.replace(mini_hyperx.loggp,
                                                                     collectives=RULES))
    n, rate = net.ranks, net.loggp.reduce_rate
    long_row, short_row = patterns.imb(net, "Reduce", [1280 * KIB, MIB])
    assert long_row.algorithm == short_row.algorithm == "pipeline@1024"
    long = rooted.call("Reduce", long_row.algorithm, n, 1280 * KIB, RULES, rate)
    assert sum(long.shortened()) <= steady.MAX_SHARE * long.repeats
    t = steady.extrapolated(net.run_program, long, *long.shortened()) * 1e6
    assert (long_row.t_min, long_row.t_max, long_row.t_avg) == pytest.approx(
        (t.min(), t.max(), t.mean()))
    exact = net.run_program(long.whole()) * 1e6
    assert stats(t) == pytest.approx(stats(exact), rel=PIPELINE[1])
    short = rooted.call("Reduce", short_row.algorithm, n, MIB, RULES, rate)
    assert sum(short.shortened()) > steady.MAX_SHARE * short.repeats
    t = net.run_program(short.whole()) * 1e6
    assert (short_row.t_min, short_row.t_max, short_row.t_avg) == pytest.approx(
        (t.min(), t.max(), t.mean()))


def test_bad_truncations_are_refused() -> None:
    call = rooted.call("Bcast", "pipeline@8192", 4, MIB, RULES)
    for s1, s2 in ((0, 8), (8, 8), (16, 8), (8, call.repeats)):
        with pytest.raises(ValueError, match="0 < S1 < S2 < S"):
            steady.extrapolated(lambda prog: np.zeros(4), call, s1, s2)


# -- what a truncated call keeps ---------------------------------------------------------
def test_a_truncated_call_keeps_the_first_repetitions_and_the_last() -> None:
    assert steady.kept(10, 0) == list(range(10))
    assert steady.kept(10, 6) == [0, 1, 2, 9]
    assert steady.kept(10, 9) == steady.kept(10, 20) == [9]
    assert steady.kept(0, 0) == []


@pytest.mark.parametrize("name,alg,m,element", [
    ("Bcast", "pipeline@8192", MIB + 100, 1),
    ("Bcast", "split_binary@1024", 256 * KIB + 3, 1),
    ("Reduce", "binomial@1024", 256 * KIB + 8, 4)])
def test_a_truncated_pipeline_is_the_real_one_with_fewer_segments(name, alg, m, element
                                                                  ) -> None:
    """Every edge carries the whole call's first segments and its last, shorter one, and
    leaves out the same number of the middle ones: what every rank receives (Bcast; split
    binary: its half down the tree, the other half whole from its partner) or sends on
    (Reduce) falls by exactly the segments left out."""
    n, drop, seg = 13, 20, 1024 if alg.endswith("@1024") else 8192
    call = rooted.call(name, alg, n, m, RULES, RATE)
    larger = m - m // 2 if alg.startswith("split") else m
    assert call.repeats == len(rooted.segments(larger, seg, element))
    whole, short = call.whole(), call.build(drop)
    moved = [np.bincount(p.dst if name == "Bcast" else p.src, weights=p.size, minlength=n)
             for p in (whole, short)]
    assert set((moved[0] - moved[1])[1:].tolist()) == {drop * seg}
    assert set(short.size) == set(whole.size)           # the last segment among them


@pytest.mark.parametrize("n", [5, 8])
def test_a_truncated_ring_keeps_its_prologue_and_phase_boundaries(n) -> None:
    """Baidu's ring: the lengths' allgather and the copy stay whole, and each phase keeps
    its first steps and its last (the reduce-scatter's last reduction is the one the
    allgather's first step waits on); IMB's ring likewise, ending its reduce-scatter with
    the combine of the last block."""
    elements, drop = 100 * n + 3, n - 3
    whole = patterns.ring_allreduce_program(n, elements, RATE, RATE, RULES)
    short = patterns.ring_allreduce_call(n, elements, RATE, RATE, RULES).build(drop)
    prologue = timeline.Program(n)
    patterns.lengths_allgather(prologue, RULES)
    head = len(prologue.src) + n                        # the allgather, then the copy
    assert short.size[:head] == whole.size[:head]
    assert short.compute[:head] == whole.compute[:head]
    steps = n - 1 - drop
    assert len(short.src) == head + 3 * n * steps       # a step: n sends, n reductions
    last_rs = slice(head + 2 * n * (steps - 1), head + 2 * n * steps)
    whole_last_rs = slice(head + 2 * n * (n - 2), head + 2 * n * (n - 1))
    assert short.size[last_rs] == whole.size[whole_last_rs]
    assert short.compute[last_rs] == whole.compute[whole_last_rs]
    first_ag = head + 2 * n * steps
    whole_first_ag = head + 2 * n * (n - 1)
    assert short.size[first_ag:first_ag + n] == whole.size[whole_first_ag:whole_first_ag + n]
    assert short.size[-n:] == whole.size[-n:]

    ring = symmetric.call("Allreduce", "ring", n, 4 * elements, RULES, RATE)
    assert ring.coupled and ring.repeats == ring.depth == n - 1
    full, cut = ring.whole(), ring.build(drop)
    assert len(cut.src) == len(full.src) - 2 * drop * n
    rs = n * steps + n                                  # the reduce-scatter, its combines
    assert cut.compute[rs - 2 * n:rs] == full.compute[n * (n - 1) - n:n * (n - 1) + n]
    assert cut.size[-n:] == full.size[-n:]
