"""IMB's steady-state rule against its whole measurement loop (t2hx/flowsim/imbloop.py).

``patterns.imb`` times one call that every rank starts at once. IMB 2021.7 times each call
of its loop from the rank's own exit of the ``-sync`` barrier before it, and prints each
rank's mean. The two agree as far as the ranks' barrier exits are apart: a rank entering
δ late or early moves its own time by at most δ while its messages only wait on latencies,
and by at most k·δ when its messages share a link fairly with k others (a head start of δ
drains δ·C bytes alone, which k-way sharing would have taken k·δ). So the tolerance is
k·S, S the barrier's largest exit skew measured in the same simulation and k the most
messages one rank has in the call; t_min, t_max and t_avg move no further than the
per-rank times they summarise.
"""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.flowsim import collectives, imbloop, rooted
from t2hx.flowsim.network import open_network
from t2hx.flowsim.packet import open_packet

KIB = 1 << 10
#: Repetitions of the simulated loop (IMB runs up to 1000; after the first barrier every
#: repetition starts from the same drained fabric, so a dozen shows any carry-over).
REPS = 12


@pytest.fixture(scope="module", params=[16, 13], ids=["16-ranks", "13-ranks"])
def net(request, mini, mini_hyperx_dir):
    """16 ranks: a recursive-doubling barrier; 13: Bruck, whose exits are skewed."""
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:request.param],
                        dumps=mini_hyperx_dir)


@pytest.fixture(scope="module", params=["flow", "packet"])
def engine(request, net):
    return net if request.param == "flow" else open_packet(net)


def stats(t: np.ndarray) -> np.ndarray:
    return np.array([t.min(), t.max(), t.mean()])


@pytest.mark.parametrize("rules", ["ompi-1.10", "ompi-4.1"])
@pytest.mark.parametrize("size", [KIB, 256 * KIB], ids=["eager", "rendezvous"])
@pytest.mark.parametrize("name", ["Gather", "Scatter"])
def test_one_call_is_the_loop_within_the_barrier_skew(engine, name, size, rules) -> None:
    n = engine.ranks
    prog = rooted.program(name, collectives.choose(name, n, size, rules), n, size, rules)
    one = engine.run_program(prog)
    starts, ends = imbloop.spans(engine, imbloop.loop(prog, REPS, rules))
    looped = (ends - starts).mean(axis=0)
    skew = float(np.ptp(starts, axis=1).max())
    degree = int(np.bincount(np.concatenate([prog.src, prog.dst]), minlength=n).max())
    gap = np.abs(stats(looped) - stats(one))
    assert (gap <= degree * skew + 1e-12).all(), (gap, skew, degree)


@pytest.mark.parametrize("rules", ["ompi-1.10", "ompi-4.1"])
@pytest.mark.parametrize("n", [2, 5, 8, 13])
def test_the_barrier_separates_the_calls(mini, mini_hyperx_dir, n, rules) -> None:
    """No rank enters call k + 1 before the slowest rank (the root's last send) ended call
    k, and every rank's call time is counted from its own barrier exit."""
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:n],
                       dumps=mini_hyperx_dir)
    prog = rooted.program("Scatter", "linear", n, 256 * KIB, rules)
    lp = imbloop.loop(prog, 3, rules)
    assert len(lp.prog.src) == 3 * (len(imbloop.barrier(n, rules).src) + len(prog.src))
    starts, ends = imbloop.spans(net, lp)
    assert starts.shape == ends.shape == (3, n)
    assert (starts[1:].min(axis=1) >= ends[:-1].max(axis=1)).all()
    times = ends - starts
    assert times[:, 1] == pytest.approx(times[0, 1], rel=1e-6)
    assert times[0, n - 1] > (n - 2) * times[0, 1]
