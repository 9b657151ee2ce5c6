"""Barrier, Bcast, Reduce and Allreduce as per-rank programs (t2hx/flowsim/rooted.py,
symmetric.py): Open MPI's trees, every byte moved once, the collective's dependencies
(who must have entered before whom), waits on late partners in both engines, IMB's rows
from each rank's own time, Open MPI's segments (and the truncated calls steady.py
extrapolates from: tests/test_extrapolation.py), and the fast flow event loop against the
straightforward one."""

from __future__ import annotations

import dataclasses
import heapq

import numpy as np
import pytest

from t2hx.flowsim import collectives, patterns, rooted, symmetric, timeline
from t2hx.flowsim.maxmin import maxmin_rates

KIB = 1 << 10
RATE = 4e9          # bytes/s a rank combines (the confs' reduce_gbps 32)


def build(name: str, alg: str, n: int, m: int, rules: str = "ompi-1.10") -> timeline.Program:
    prog = (rooted.program(name, alg, n, m, rules, RATE)
            or symmetric.program(name, alg, n, m, rules, RATE))
    assert prog is not None, (name, alg)
    return prog


# -- Open MPI's trees, transcribed from coll_tuned_topo.c (v1.10.7) as the oracle ----------
def _next_pow2(v: int) -> int:          # opal_next_poweroftwo: the power of two above v
    p = 1
    while v > 0:
        v >>= 1
        p <<= 1
    return p


def _topo_bmtree(rank: int, size: int) -> list[int]:
    index, kids = rank, []
    mask = _next_pow2(index)
    while mask < size:
        remote = index ^ mask
        if remote >= size:
            break
        kids.append(remote)
        mask <<= 1
    return kids


def _topo_in_order_bmtree(rank: int, size: int) -> list[int]:
    kids, mask = [], 1
    while mask < size:
        remote = rank ^ mask
        if remote < rank:
            break
        if remote < size:
            kids.append(remote)
        mask <<= 1
    return kids


def _topo_tree(fanout: int, rank: int, size: int) -> list[int]:
    def pown(num: int) -> int:
        return fanout ** num if num >= 0 else 0

    level, num = 0, 0
    while num <= rank:
        num += pown(level)
        level += 1
    delta = pown(level - 1)
    kids = []
    for i in range(fanout):
        child = rank + delta * (i + 1)
        if child >= size:
            break
        kids.append(child)
    return kids


def _topo_kmtree(radix: int, rank: int, size: int) -> list[int]:
    mask = 1
    while mask < size:
        if rank % (radix * mask):
            break
        mask *= radix
    mask //= radix
    kids = []
    while mask > 0:
        for r in range(1, radix):
            if rank + mask * r < size:
                kids.append(rank + mask * r)
        mask //= radix
    return kids


@pytest.mark.parametrize("n", [2, 3, 5, 7, 8, 13, 16, 17, 31, 40])
def test_trees_are_open_mpis(n) -> None:
    assert rooted.binomial(n) == [_topo_bmtree(v, n) for v in range(n)]
    assert rooted.in_order_binomial(n) == [_topo_in_order_bmtree(v, n) for v in range(n)]
    assert rooted.kary(n, 2) == [_topo_tree(2, v, n) for v in range(n)]
    assert rooted.kary(n, 1) == [[v + 1] if v + 1 < n else [] for v in range(n)]
    assert rooted.knomial(n) == [_topo_kmtree(4, v, n) for v in range(n)]
    for kids in (rooted.binomial(n), rooted.kary(n, 2), rooted.knomial(n)):
        up = rooted.parents(kids)
        assert up[0] == -1 and all(0 <= p < v for v, p in enumerate(up) if v)


def test_split_binary_halves_follow_the_subtrees() -> None:
    """The left subtree (rank 1's) holds the odd ranks, the right one the even ranks: the
    tree split_bintree relies on."""
    kids = rooted.kary(15, 2)

    def below(v: int) -> set[int]:
        out = {v}
        for c in kids[v]:
            out |= below(c)
        return out

    assert below(1) == set(range(1, 15, 2))
    assert below(2) == set(range(2, 15, 2))


# -- every byte once, every dependency of the collective --------------------------------------
BCASTS = ["binomial", "split_binary@1024", "split_binary@8192", "pipeline@8192",
          "pipeline@131072", "linear", "knomial", "binary", "chain"]
REDUCES = ["binomial", "binomial@1024", "pipeline@1024", "binary@32768", "pipeline@65536",
           "linear", "chain", "binary"]
ALLREDUCES = ["recursive_doubling", "ring", "ring_segmented@65536", "reduce_bcast",
              "rabenseifner"]
BARRIERS = ["recursive_doubling", "bruck", "linear", "tree"]


def _bytes(prog: timeline.Program) -> tuple[np.ndarray, np.ndarray]:
    into, out = np.zeros(prog.n), np.zeros(prog.n)
    np.add.at(into, prog.dst, prog.size)
    np.add.at(out, prog.src, prog.size)
    return into, out


def _reached(prog: timeline.Program) -> list[int]:
    """Per rank, the ranks whose entry into the call precedes the rank's return (bit masks),
    through its own program order and every message (a handshake's answer included)."""
    wire = timeline.compile(prog, eager=12288)
    know = [0] * len(wire.src)
    for i in range(len(wire.src)):
        k = (1 << int(wire.src[i])) | (1 << int(wire.dst[i])) if wire.kind[i] == \
            timeline.JOIN else 1 << int(wire.src[i])
        for j in wire.dep[wire.dep_off[i]:wire.dep_off[i + 1]]:
            k |= know[j]
        know[i] = k
    out = [1 << r for r in range(prog.n)]
    for r, w in zip(wire.done_rank.tolist(), wire.done_wire.tolist()):
        out[r] |= know[w]
    return out


@pytest.mark.parametrize("alg", BCASTS)
@pytest.mark.parametrize("n", [2, 5, 8, 13])
@pytest.mark.parametrize("m", [1, 3000, 70000])
def test_bcast_gives_every_rank_the_message_once(alg, n, m) -> None:
    prog = build("Bcast", alg, n, m)
    into, _ = _bytes(prog)
    assert into[0] == 0 and (into[1:] == m).all()
    assert all(k & 1 for k in _reached(prog))            # everyone waited for the root


@pytest.mark.parametrize("alg", REDUCES)
@pytest.mark.parametrize("n", [2, 5, 8, 13])
@pytest.mark.parametrize("m", [4, 3000, 70000])
def test_reduce_combines_every_contribution_once(alg, n, m) -> None:
    """Every rank sends one vector's worth towards the root, and the ranks combine n − 1
    vectors in all (k children cost k reductions per segment)."""
    prog = build("Reduce", alg, n, m)
    _, out = _bytes(prog)
    assert out[0] == 0 and (out[1:] == m).all()
    assert sum(prog.compute) == pytest.approx((n - 1) * m / RATE)
    assert _reached(prog)[0] == (1 << n) - 1              # the root waited for everyone


@pytest.mark.parametrize("alg", ALLREDUCES)
@pytest.mark.parametrize("n", [2, 5, 8, 13])
@pytest.mark.parametrize("m", [4 * 13, 3000, 70000])
def test_allreduce_waits_for_everyone_everywhere(alg, n, m) -> None:
    prog = build("Allreduce", alg, n, m)
    assert all(k == (1 << n) - 1 for k in _reached(prog))


@pytest.mark.parametrize("n,m", [(8, 64000), (13, 3900)])
def test_allreduce_moves_the_textbook_volumes(n, m) -> None:
    """Ring: reduce-scatter and allgather each move (n − 1) vectors in all and combine
    n − 1; Rabenseifner on a power of two: 2(p − 1) vectors, p − 1 combined; recursive
    doubling on a power of two: p·log2 p vectors."""
    ring = build("Allreduce", "ring", n, m)
    assert sum(ring.size) == 2 * (n - 1) * m
    assert sum(c for s, d, c in zip(ring.src, ring.dst, ring.compute)) == \
        pytest.approx((n - 1) * m / RATE)
    # 1.10's segmented ring: 40n KiB in 16 KiB segments is two reduce-scatter phases
    segmented = build("Allreduce", "ring_segmented@16384", n, 40 * n * KIB)
    assert sum(s != d for s, d in zip(segmented.src, segmented.dst)) == 3 * n * (n - 1)
    assert sum(segmented.size) == 2 * (n - 1) * 40 * n * KIB
    if n & (n - 1) == 0:
        assert sum(build("Allreduce", "rabenseifner", n, m, "ompi-4.1").size) == \
            2 * (n - 1) * m
        assert sum(build("Allreduce", "recursive_doubling", n, m).size) == \
            n * (n.bit_length() - 1) * m


@pytest.mark.parametrize("alg", BARRIERS)
@pytest.mark.parametrize("n", [2, 3, 5, 8, 12, 16])
def test_barrier_lets_no_rank_leave_before_all_entered(alg, n) -> None:
    prog = build("Barrier", alg, n, 0, "ompi-4.1")
    assert sum(prog.size) == 0
    assert all(k == (1 << n) - 1 for k in _reached(prog))


def test_reductions_of_no_elements_are_no_call() -> None:
    """MPI_Bcast, MPI_Reduce and MPI_Allreduce return at once for count 0."""
    for name, alg in (("Bcast", "binomial"), ("Reduce", "binomial"),
                      ("Allreduce", "recursive_doubling")):
        assert build(name, alg, 8, 0).src == []


# -- late partners ----------------------------------------------------------------------------
def _with_late(name: str, alg: str, n: int, m: int, late: int, delay: float
               ) -> timeline.Program:
    """The collective with rank ``late`` entering ``delay`` seconds after the others."""
    prog = timeline.Program(n)
    entry: list[list[int]] = [[] for _ in range(n)]
    if delay:
        entry[late] = [prog.work(late, delay)]
    rooted.emit(name, alg, prog, m, "ompi-1.10", RATE, entry)
    return prog


@pytest.mark.parametrize("name,alg,late,waiting", [
    ("Bcast", "binomial", 1, 0),            # the root's rendezvous send waits for rank 1
    ("Bcast", "pipeline@131072", 2, 1),     # rank 1 forwards to rank 2 only once it posted
    ("Reduce", "binomial", 4, 0),           # the root combines rank 4's subtree last
    ("Reduce", "pipeline@65536", 7, 6)])    # rank 6 waits for its child's segments
def test_a_late_partner_delays_the_rank_waiting_on_it(engine, name, alg, late, waiting) -> None:
    """At a rendezvous size a rank returns only when its partner took part: entering 1 ms
    late, the partner delays the waiting rank by about that much, in both engines."""
    delay = 1e-3
    on_time = engine.run_program(_with_late(name, alg, 8, 256 * KIB, late, 0.0))
    late_run = engine.run_program(_with_late(name, alg, 8, 256 * KIB, late, delay))
    assert late_run[waiting] - on_time[waiting] > 0.8 * delay
    assert late_run[late] - on_time[late] == pytest.approx(delay, rel=0.25)


def test_an_eager_bcast_root_does_not_wait_for_a_late_child(engine) -> None:
    on_time = engine.run_program(_with_late("Bcast", "binomial", 8, 1 * KIB, 1, 0.0))
    late_run = engine.run_program(_with_late("Bcast", "binomial", 8, 1 * KIB, 1, 1e-3))
    assert late_run[0] == pytest.approx(on_time[0], rel=0.05)
    assert late_run[1] - on_time[1] > 0.8e-3


# -- IMB's rows ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Barrier", "Bcast", "Reduce", "Allreduce"])
def test_imb_rows_come_from_each_ranks_own_time(net, name) -> None:
    """IMB's t_min/t_max/t_avg are the per-rank ends of the program of the conf's rule set's
    algorithm; in a tree the ranks that wait less return earlier."""
    rules = net.loggp.collectives
    rows = patterns.imb(net, name, [4 * KIB, 256 * KIB])
    for row in rows:
        alg = collectives.choose(name, 16, row.size, rules)
        assert row.algorithm == alg
        prog = build(name, alg, 16, row.size, rules)
        t = net.run_program(prog) * 1e6
        assert (row.t_min, row.t_max, row.t_avg) == pytest.approx((t.min(), t.max(), t.mean()))
        if name in ("Bcast", "Reduce"):
            assert row.t_min < 0.9 * row.t_max


def test_imb_rows_of_the_1_10_rules(net) -> None:
    """The study's MPI: 1.10's split binary Bcast and segmented Reduce come from programs too
    (a rank of the tree returns before the last one)."""
    net10 = dataclasses.replace(net, loggp=dataclasses.replace(net.loggp,
                                                               collectives="ompi-1.10"))
    for name, size, alg in (("Bcast", 64 * KIB, "split_binary@1024"),
                            ("Reduce", 16 * KIB, "binomial@1024"),
                            ("Allreduce", 64 * KIB, "ring")):
        row = patterns.imb(net10, name, [size])[0]
        assert row.algorithm == alg
        t = net10.run_program(build(name, alg, 16, size)) * 1e6
        assert (row.t_min, row.t_max) == pytest.approx((t.min(), t.max()))


# -- segments ---------------------------------------------------------------------------------
def test_segments_follow_open_mpis_segment_count() -> None:
    """COLL_TUNED_COMPUTED_SEGCOUNT: whole elements, the rest in a last, shorter segment;
    no segmentation when the segment holds the message. A truncated call leaves segments
    out before the last, which it keeps."""
    assert rooted.segments(10000, 4096, 1) == [4096, 4096, 1808]
    assert rooted.segments(10000, 1027, 4)[:1] == [1028]
    assert rooted.segments(1000, 4096, 1) == [1000]
    assert rooted.segments(10000, 1024, 1, drop=6) == [1024, 1024, 1024, 784]
    assert rooted.segments(10000, 1024, 1, drop=9) == [784]


# -- the fast flow event loop ----------------------------------------------------------------
def _fluid_reference(paths, capacity, size, latency, dep_off, dep, compute):
    """The straightforward loop: every event re-solves max-min over all flows in flight."""
    n = len(size)
    waiting = np.diff(dep_off).astype(np.int64)
    users: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in dep[dep_off[i]:dep_off[i + 1]]:
            users[int(j)].append(i)
    delivered = np.full(n, np.nan)
    events: list[tuple[float, int, int]] = []
    for first in np.flatnonzero(waiting == 0).tolist():
        heapq.heappush(events, (float(compute[first]), 0, first))
    remaining = size.astype(np.float64).copy()
    active: list[int] = []
    rate = np.zeros(0)
    now = 0.0
    while events or active:
        changed = False
        drain = now + float((remaining[active] / rate).min()) if active else np.inf
        if events and events[0][0] <= drain:
            t, what, i = heapq.heappop(events)
            if active and t > now:
                remaining[active] -= rate * (t - now)
            now = t
            if what == 1:
                delivered[i] = t
                for u in users[i]:
                    waiting[u] -= 1
                    if waiting[u] == 0:
                        heapq.heappush(events, (t + float(compute[u]), 0, u))
            elif remaining[i] <= 0:
                heapq.heappush(events, (t + latency[i], 1, i))
            else:
                active.append(i)
                changed = True
        else:
            remaining[active] -= rate * (drain - now)
            now = drain
            first = active[int(np.argmin(remaining[active]))]
            done = {i for i in active if i == first or remaining[i] <= 1e-9 * size[i]}
            for i in done:
                remaining[i] = 0.0
                heapq.heappush(events, (now + latency[i], 1, i))
            active = [i for i in active if i not in done]
            changed = True
        if changed:
            rate = maxmin_rates(paths[active], capacity) if active else np.zeros(0)
    return delivered


@pytest.mark.parametrize("seed", range(6))
def test_fast_flow_loop_equals_the_straightforward_one(seed) -> None:
    """Random DAGs of flows over a small set of links: the component-wise re-solves give
    the straightforward loop's delivery times."""
    rng = np.random.default_rng(seed)
    n, links = 300, 12
    paths = np.full((n, 3), -1)
    for i in range(n):
        k = rng.integers(1, 4)
        paths[i, :k] = rng.choice(links, k, replace=False)
    capacity = rng.uniform(1e9, 4e9, links)
    size = rng.choice([0.0, 1e3, 1e5, 1e6], n)
    latency = rng.uniform(1e-6, 3e-6, n)
    compute = np.where(rng.random(n) < 0.2, rng.uniform(0, 1e-4, n), 0.0)
    deps = [sorted(set(rng.integers(0, i, rng.integers(0, 3)).tolist())) if i else []
            for i in range(n)]
    dep_off = np.zeros(n + 1, np.int64)
    np.cumsum([len(d) for d in deps], out=dep_off[1:])
    dep = np.array([j for d in deps for j in d], np.int32)
    fast = timeline.fluid_times(paths, capacity, size, latency, dep_off, dep, compute)
    slow = _fluid_reference(paths, capacity, size, latency, dep_off, dep, compute)
    assert fast == pytest.approx(slow, rel=1e-9)


def test_small_components_solve_as_maxmin_does() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        f = int(rng.integers(1, 8))
        paths = [tuple(rng.choice(6, int(rng.integers(1, 4)), replace=False).tolist())
                 for _ in range(f)]
        cap = rng.uniform(1, 10, 6)
        padded = np.full((f, 3), -1)
        for i, p in enumerate(paths):
            padded[i, :len(p)] = p
        assert timeline._maxmin_small(paths, cap.tolist()) == maxmin_rates(padded,
                                                                           cap).tolist()


# -- the protocol's additions -----------------------------------------------------------------
def test_local_work_and_synchronous_sends_on_the_wire(engine) -> None:
    """A rank's work delays what it posts next by its seconds; a synchronous zero-byte send
    returns only once the receiver, busy for 1 ms, posted its receive."""
    prog = timeline.Program(3)
    busy = prog.work(2, 1e-3)
    prog.add(1, 2, 0, recv_after=[busy], sync=True)
    plain = timeline.Program(3)
    busy = plain.work(2, 1e-3)
    plain.add(1, 2, 0, recv_after=[busy])
    t_sync, t_plain = engine.run_program(prog), engine.run_program(plain)
    assert t_sync[1] > 1e-3 > t_plain[1]
    assert t_sync[2] == pytest.approx(t_plain[2], rel=0.05)
    wire = timeline.compile(prog, eager=12288)
    assert (wire.kind == timeline.DATA).sum() == len(prog.src)    # one DATA per entry
