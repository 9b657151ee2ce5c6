"""Concurrent jobs on the packet engine (t2hx/flowsim/packetjobs.py) on the mini HyperX
routed by real OpenSM: joins in the kernel, a job alone times as its phases do, jobs on
disjoint links do not see each other, and jobs that share a hot VL interfere more than
max-min sharing says."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.errors import WorkloadError
from t2hx.flowsim import packetk
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.fluid import Comm, Compute, Job, run_jobs
from t2hx.flowsim.packet import open_packet
from t2hx.flowsim.packetjobs import mean_step, run_jobs_packet, window_of

from tests.test_packetsim import AS_FLOW, ARB, MIB, chain, congestion_tree, switch_of


def test_a_message_waits_for_the_last_of_its_dependencies_and_joins_take_no_time() -> None:
    links = chain(2, cap=64)
    # 0, 1: data on the chain; 2: a join of both, 3 µs later; 3: after the join
    msgs = packetk.Messages(np.array([4096, 65536, 0, 0], np.int64),
                            np.array([0, 2, 4, 4, 6], np.int64),
                            np.array([0, 1, 0, 1, 0, 1], np.int32), np.zeros(4, np.int8),
                            np.array([0, 1, 2], np.int32), np.array([0, 0, 3e-6, 1e-6]),
                            np.array([0, 0, 0, 2, 3], np.int64))
    first, end, _ = packetk.simulate(links, msgs, ARB)
    assert end[1] > end[0]
    assert first[2] == end[2] == pytest.approx(end[1] + 3e-6)
    assert first[3] == pytest.approx(end[2] + 1e-6)
    msgs.bytes[2] = 1                               # a join cannot carry bytes
    with pytest.raises(WorkloadError, match="bad input"):
        packetk.simulate(links, msgs, ARB)


def two_steps(ranks: list[int], size: float) -> list:
    r = np.array(ranks)
    return [Comm(r, np.roll(r, 1), size), Compute(2e-5), Comm(r, np.roll(r, -2), size / 4)]


def test_a_job_alone_takes_its_phases_times(mini_hyperx) -> None:
    pk = open_packet(mini_hyperx)
    ranks = list(range(0, 16, 2))
    job = Job("a", two_steps(ranks, MIB), repeat=3, start=1e-6)
    run_jobs_packet(pk, [job], iterations=3)
    r = np.array(ranks)
    phases = [Phase.of(r, np.roll(r, 1), MIB, compute=2e-5),
              Phase.of(r, np.roll(r, -2), MIB / 4)]
    step = pk.run(phases).phase_time.sum()
    # within 0.01 %: a phase alone starts on a drained fabric, a job's next step on one
    # whose host interfaces still owe read-request bytes for a few ns
    assert np.diff([1e-6] + job.ends) == pytest.approx([step] * 3, rel=1e-4)
    assert mean_step(job, window_of([job])) == pytest.approx(step, rel=1e-4)
    assert pk.stats["credit_errors"] == 0


def test_jobs_on_disjoint_switches_do_not_see_each_other(mini_hyperx) -> None:
    sw = switch_of(mini_hyperx)
    a = [r for r in range(mini_hyperx.ranks) if sw[r] == sw[0]][:4]
    b = [r for r in range(mini_hyperx.ranks) if sw[r] == sw[-1]][:4]
    pk = open_packet(mini_hyperx)
    alone = [run_jobs_packet(pk, [Job(n, two_steps(x, MIB), 4)], 4)[0].ends
             for n, x in (("a", a), ("b", b))]
    both = run_jobs_packet(pk, [Job("a", two_steps(a, MIB), 4),
                                Job("b", two_steps(b, MIB), 4)], 4)
    for job, ends in zip(both, alone):
        assert job.ends == pytest.approx(ends, rel=1e-9)


@pytest.mark.parametrize("victim_sl", [0, 1])
def test_a_victim_job_on_the_hot_vl_suffers_more_than_max_min_says(mini_hyperx,
                                                                  victim_sl) -> None:
    """The congestion tree as two jobs: six senders into one hot node, and a victim that
    shares only an upstream link with three of them. The flow model slows the victim to its
    fair share of that link; the packet engine also blocks it behind the hot packets when
    it shares their VL, and not when it has its own (the flow model's host interface, so
    blocking is the only difference)."""
    src, dst, victim = congestion_tree(mini_hyperx)
    hot = [Comm(np.array(src[:6]), np.array(dst[:6]), 2 * MIB)]
    cold = [Comm(np.array([victim]), np.array([dst[-1]]), 2 * MIB)]
    pk = open_packet(mini_hyperx, params=AS_FLOW, sl_of=lambda a, b, lid:
                     np.where((a == victim) | (b == victim), victim_sl, 0))
    engines = {"flow": lambda jobs: run_jobs(mini_hyperx, jobs),
               "packet": lambda jobs: run_jobs_packet(pk, jobs, 20)}
    slow = {}
    for engine, run in engines.items():
        alone = run([Job("victim", cold, 20)])[0]
        mix = run([Job("hot", hot, 20), Job("victim", cold, 20)])
        slow[engine] = mean_step(mix[1], window_of(mix)) / mean_step(alone, window_of([alone]))
    assert slow["flow"] == pytest.approx(2.0, rel=0.05)     # half the shared link
    if victim_sl == 0:
        assert slow["packet"] > 1.5 * slow["flow"]
    else:
        assert slow["packet"] == pytest.approx(slow["flow"], rel=0.05)
