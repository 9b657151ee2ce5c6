"""Per-rank timelines under the MPI protocol (t2hx/flowsim/timeline.py, rooted.py): a rank's
call ends with its own operations, which under rendezvous wait on the partner, in both
network engines; IMB's rows come from each rank's own time."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.flowsim import collectives, patterns, rooted, timeline

MIB = 1 << 20
KIB = 1 << 10


def test_eager_is_one_wire_message_and_rendezvous_three() -> None:
    prog = timeline.Program(3)
    small = prog.add(1, 0, 1024)
    prog.add(2, 0, MIB, recv_after=[small])
    wire = timeline.compile(prog, eager=12288)
    assert wire.kind.tolist() == [timeline.DATA, timeline.RTS, timeline.CTS, timeline.DATA]
    assert wire.size.tolist() == [1024, 0, 0, MIB]
    # the answer (CTS, message 2) waits for the RTS and for the receive being posted,
    # i.e. the root's earlier receive (message 0)
    assert sorted(wire.dep[wire.dep_off[2]:wire.dep_off[3]].tolist()) == [0, 1]
    assert wire.rank_done == [[0, 3], [0], [3]]
    with pytest.raises(ValueError, match="not its own"):
        timeline.compile(_waits_on_foreign(), eager=0)


def _waits_on_foreign() -> timeline.Program:
    prog = timeline.Program(4)
    first = prog.add(1, 0, 8)
    prog.add(2, 3, 8, send_after=[first])       # rank 2 never took part in message 0
    return prog


def test_fluid_times_share_a_link_and_follow_dependencies() -> None:
    """Two flows over one 1 GB/s link: the first alone for 1 s, then both at half rate; a
    third starts when the first is delivered."""
    paths = np.array([[0], [0], [0]])
    cap = np.array([1e9])
    size = np.array([2e9, 1e9, 1e9])
    lat = np.full(3, 0.5)
    # flow 1 waits for nothing but is released at 0 as well; flow 2 waits for flow 0
    off = np.array([0, 0, 0, 1])
    dep = np.array([0], np.int32)
    got = timeline.fluid_times(paths, cap, size, lat, off, dep)
    # 0..2 s: flows 0 and 1 share (0.5 GB/s each): flow 1 drains at 2 s, flow 0 has 1e9 left
    # and drains alone by 3 s; delivery adds the latency; flow 2 starts at 3.5 s, alone
    assert got.tolist() == pytest.approx([3.5, 2.5, 3.5 + 1.0 + 0.5])


def test_compute_delays_the_send_that_follows_it(engine) -> None:
    """Rank 1 reduces for 1 ms what rank 0 sent before passing it to rank 2: rank 2 ends at
    least 1 ms later than without the work, rank 0 does not move."""
    def ends(work: float) -> np.ndarray:
        prog = timeline.Program(3)
        first = prog.add(0, 1, 64 * KIB)
        prog.add(1, 2, 64 * KIB, send_after=[first], compute=work)
        return engine.run_program(prog)

    idle, busy = ends(0.0), ends(1e-3)
    assert busy[2] - idle[2] == pytest.approx(1e-3, rel=0.05)
    assert busy[0] == pytest.approx(idle[0])


@pytest.mark.parametrize("size,waits", [(MIB, True), (KIB, False)])
def test_a_rendezvous_sender_waits_for_its_busy_receiver(engine, size, waits) -> None:
    """Rank 1 sends to the root, which first receives 4 MiB from rank 2: a rendezvous send
    completes only after the root posted its receive; an eager send does not wait."""
    def ends(busy: bool) -> np.ndarray:
        prog = timeline.Program(3)
        before = [prog.add(2, 0, 4 * MIB)] if busy else []
        prog.add(1, 0, size, recv_after=before)
        return engine.run_program(prog)

    idle, busy = ends(False), ends(True)
    four_mib = busy[2]
    if waits:
        assert busy[1] > idle[1] + 0.9 * four_mib
    else:
        assert busy[1] == pytest.approx(idle[1], rel=0.05)


@pytest.mark.parametrize("name", ["Gather", "Scatter"])
def test_a_rooted_call_ranks_finish_in_the_roots_order(engine, name) -> None:
    """Linear Gather and Scatter at a rendezvous size: the root serves rank after rank, so
    each rank ends later than the one before it; at an eager size the Gather's senders do
    not wait for the root."""
    prog = rooted.program(name, "linear", 8, 256 * KIB, "ompi-1.10")
    t = engine.run_program(prog)
    assert (np.diff(t[1:]) > 0).all()
    assert t[7] > 5 * t[1]
    eager = engine.run_program(rooted.program("Gather", "linear", 8, 4 * KIB, "ompi-1.10"))
    assert eager[1:].max() < 0.5 * t[7]


@pytest.mark.parametrize("name,alg,rules", [
    ("Gather", "linear", "ompi-1.10"), ("Gather", "binomial", "ompi-1.10"),
    ("Gather", "linear_sync@1024", "ompi-1.10"), ("Gather", "linear_sync", "ompi-4.1"),
    ("Scatter", "linear", "ompi-1.10"), ("Scatter", "binomial", "ompi-1.10"),
    ("Scatter", "binomial", "ompi-4.1"), ("Scatter", "linear_nb", "ompi-4.1")])
@pytest.mark.parametrize("n", [2, 7, 16])
def test_rooted_programs_move_every_block_once(name, alg, rules, n) -> None:
    m = 3000
    prog = rooted.program(name, alg, n, m, rules)
    into = np.zeros(n)
    out = np.zeros(n)
    np.add.at(into, prog.dst, prog.size)
    np.add.at(out, prog.src, prog.size)
    if name == "Gather":            # everything ends at the root, every rank sends its block
        assert into[0] == (n - 1) * m
        assert (out[1:] - into[1:] == m).all()
    else:
        assert out[0] == (n - 1) * m
        assert (into[1:] - out[1:] == m).all()
    wire = timeline.compile(prog, eager=12288)
    assert all(wire.rank_done[r] for r in range(n))


def test_binomial_tree_is_the_in_order_tree() -> None:
    assert rooted.children(0, 16) == [1, 2, 4, 8]
    assert rooted.children(4, 16) == [5, 6]
    assert rooted.children(12, 14) == [13]
    assert rooted.children(7, 16) == []
    c = np.arange(1, 13)
    assert [rooted.subtree(int(x), 13) for x in c] == collectives._subtree(c, 13).tolist()
    # 1.10 serves the nearest child first, 4.1 the farthest (coll_base_scatter.c)
    old = rooted.program("Scatter", "binomial", 8, 8, "ompi-1.10")
    new = rooted.program("Scatter", "binomial", 8, 8, "ompi-4.1")
    assert old.dst[:2] == [1, 2] and new.dst[:2] == [4, 6]


def test_imb_gather_rows_come_from_each_ranks_own_time(mini, mini_hyperx_dir) -> None:
    """A linear Gather at a rendezvous size (Open MPI 4.1.4 picks it on 4-7 ranks from 32 to
    256 KiB): the root's first partner takes about one lone message (t_min), the last waits
    for all 6 (t_max), t_avg lies between: each rank's own time, where the phase model gave
    every rank the phase's end."""
    from t2hx.flowsim.network import open_network

    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:7],
                       dumps=mini_hyperx_dir)
    rows = patterns.imb(net, "Gather", [4 * KIB, 128 * KIB])
    assert rows[1].algorithm == "linear"
    assert rows[1].algorithm == collectives.choose("Gather", 7, 128 * KIB, net.loggp.collectives)
    lone = net.run([patterns.Phase.of([1], [0], 128 * KIB)]).total * 1e6
    # The first partner's rendezvous waits behind the root's handshakes with the others:
    # a few microseconds, not another message.
    assert lone < rows[1].t_min < lone + 3.0
    assert rows[1].t_max == pytest.approx(6 * lone, rel=0.06)
    assert 3 * lone < rows[1].t_avg < 4.5 * lone


def test_imb_repetitions_follow_the_dynamic_policy() -> None:
    assert patterns.imb_repetitions(0) == 1000
    assert patterns.imb_repetitions(4 * MIB) == 10
    assert patterns.imb_repetitions(64 * KIB, seconds_per_rep=2.0) == 6     # 1 + 10 s / 2 s
    assert patterns.imb_repetitions(KIB, previous=40) == 40                 # never grows
    assert patterns.imb_repetitions(KIB, seconds_per_rep=1e-9) == 1000
