"""The network benchmarks' communication on a network engine's network (bulk-synchronous
phases, :class:`~t2hx.flowsim.models.SimNetwork`); t2hx/benchmarks/ turns the numbers into
each benchmark's typed output.

* :func:`mpigraph` — mpiGraph v1.5: shift steps k = 1…n-1, rank i sends ``window``
  messages of ``size`` bytes to i+k while receiving from i-k, all ranks at once; cell
  (i, j) of the send matrix is the bandwidth i sees towards j in MiB/s:
  ``window·size / (latency + window·size / rate)``. The receive matrix holds the same
  flows seen from the receiver.
* :func:`ebb` — Netgauge ``-x ebb``: each round a random bisection (random perfect matching
  of the ranks, seeded); both partners send ``size`` bytes to each other ``reps`` times.
* :func:`imb` — IMB-MPI1 collectives over a message-size sweep (t_min/t_max/t_avg per size
  from per-rank finish times of the decomposition in :mod:`t2hx.flowsim.collectives`).
* :func:`ring_allreduce` — DeepBench/baidu ring allreduce as a per-rank program
  (t2hx/flowsim/timeline.py): the lengths' allgather, the copy, 2(n-1) neighbour steps.
* :func:`pingpong_times` — IMB Multi-PingPong: pairs (2g, 2g+1) ping-pong concurrently.
* :func:`emdl` — IMB Allreduce alternating with a 0.1 s sleep (the SleepyAllreduce patch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import collectives, imbjobs, rooted, steady, symmetric
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.mpigraph_mean import average as average  # mpiGraph's "avg", here as well
from t2hx.flowsim.models import SimNetwork
from t2hx.flowsim.timeline import Program

MIB = 1024 * 1024


def _need_ranks(net: SimNetwork, least: int, what: str) -> int:
    n = net.ranks
    if n < least:
        raise WorkloadError(f"{what} needs at least {least} ranks, the hostfile has {n}",
                            file=net.hostfile, field="hostfile", fix="list more nodes")
    return n


# -- mpiGraph ------------------------------------------------------------------------------
@dataclass
class MpiGraph:
    size: int
    times: int
    window: int
    send: np.ndarray          # MiB/s, row = sender, col = receiver
    recv: np.ndarray          # MiB/s, row = receiver, col = sender


def mpigraph_phases(n: int, size: int, window: int) -> list[Phase]:
    """mpiGraph's shift steps (``mpiGraph.c`` ``code()``): in step k every rank posts
    ``window`` Isends of ``size`` bytes to rank + k (and as many Irecvs from rank - k), each
    its own message: a PARX run draws each one's LID (t2hx.routing.parx.message_coins)."""
    r = np.repeat(np.arange(n), window)
    return [Phase.of(r, (r + k) % n, size) for k in range(1, n)]


def mpigraph(net: SimNetwork, size: int = MIB, times: int = 10, window: int = 10) -> MpiGraph:
    """Each pair's bandwidth: the window's bytes over the time until the last of its
    ``window`` messages has arrived (mpiGraph times the step from the first Isend to its
    Waitall)."""
    n = _need_ranks(net, 2, "mpiGraph")
    ph = mpigraph_phases(n, size, window)
    res = net.run(ph, keep_rates=True)
    send = np.zeros((n, n))
    for k, p in enumerate(ph):
        last = res.flow_time[k].reshape(n, window).max(axis=1)   # messages are sender-major
        send[p.src[::window], p.dst[::window]] = window * size / last / MIB
    return MpiGraph(size, times, window, send, send.T.copy())


# -- Netgauge eBB ---------------------------------------------------------------------------
@dataclass
class Ebb:
    size: int
    reps: int
    round_times: np.ndarray       # (rounds, ranks) microseconds for ``reps`` exchanges


def bisections(n: int, rounds: int, seed: int) -> np.ndarray:
    """(rounds, n) partner of each rank in each round's random perfect matching."""
    rng = np.random.default_rng(seed)
    half = n // 2
    partner = np.full((rounds, n), -1, dtype=np.int64)
    for i in range(rounds):
        perm = rng.permutation(n)
        a, b = perm[:half], perm[half:2 * half]
        partner[i, a] = b
        partner[i, b] = a
    return partner


def ebb(net: SimNetwork, size: int = MIB, rounds: int = 100, reps: int = 20,
        seed: int = 1) -> Ebb:
    n = _need_ranks(net, 2, "eBB")
    if rounds < 1:
        raise WorkloadError("rounds must be >= 1", field="rounds", fix="use --rounds 1 or more")
    partner = bisections(n, rounds, seed)
    ph = []
    for i in range(rounds):
        src = np.flatnonzero(partner[i] >= 0)
        ph.append(Phase.of(src, partner[i, src], size))
    res = net.run(ph, keep_rates=True)
    times = np.zeros((rounds, n))
    for i, p in enumerate(ph):
        times[i, p.src] = reps * res.flow_time[i] * 1e6
    if n % 2:  # the odd rank out idles this round: netgauge counts the paired ranks only
        times = np.where(partner >= 0, times, np.nan)
    return Ebb(size, reps, times)


# -- IMB collectives ------------------------------------------------------------------------
def imb_repetitions(size: int, seconds_per_rep: float = 0.0, previous: int | None = None
                    ) -> int:
    """IMB's default repetition count (``-iter_policy dynamic``, the same in IMB 2018 and
    2021.7: ``IMB_init_buffers_iter``): 1000, fewer when size·reps exceeds 40 MiB; then at
    most ``1 + time / t`` for a repetition of ``t`` seconds (``-time`` 10 s), and never more
    than the previous size got (the count does not grow along the sweep)."""
    reps = imbjobs.repetitions(size)
    if seconds_per_rep > 1e-8:
        reps = min(reps, int(1 + imbjobs.SECS_PER_SAMPLE / seconds_per_rep))
    return max(1, min(reps, previous)) if previous else reps


@dataclass
class ImbRow:
    size: int
    reps: int
    t_min: float
    t_max: float
    t_avg: float
    algorithm: str


#: IMB's reductions count MPI_FLOAT elements (``-red_data_type`` float, IMB 2018 and 2021.7):
#: their sweep runs only the sizes that are whole floats (a real -msglog 0:16 run prints 0,
#: 4, 8, … for Reduce and Allreduce, tests/data/post/fixtures/imb).
REDUCTIONS = ("Reduce", "Allreduce")
REDUCTION_TYPE_BYTES = 4


def imb(net: SimNetwork, name: str, sizes: list[int]) -> list[ImbRow]:
    """IMB's t_min/t_max/t_avg over the ranks of each rank's own time for one call (IMB's
    ``-sync`` default puts a barrier between repetitions, so every call starts together and
    one call is the steady state; the root stays 0, ``-root_shift`` being off)."""
    name = collectives.canonical(name)
    n = _need_ranks(net, 1, name)
    rows: list[ImbRow] = []
    if name in REDUCTIONS:          # a size that holds no whole float is not run
        sizes = [m for m in sizes if m % REDUCTION_TYPE_BYTES == 0]
    for m in ([0] if name == "Barrier" else sizes):
        alg, t_min, t_max, t_avg = _imb_call(net, name, n, m)
        reps = imb_repetitions(m, t_max, rows[-1].reps if rows else None)
        rows.append(ImbRow(m, reps, t_min * 1e6, t_max * 1e6, t_avg * 1e6, alg))
    return rows


def _imb_call(net: SimNetwork, name: str, n: int, m: int) -> tuple[str, float, float, float]:
    """(algorithm, t_min, t_max, t_avg) of one call in seconds: over each rank's own time in
    a per-rank program where one exists (ranks wait on their partners under the MPI
    protocol, t2hx/flowsim/rooted.py and symmetric.py), else over the bulk-synchronous
    phases (a rank ends with the last phase it takes part in; t_max is the whole call)."""
    rules = net.loggp.collectives
    alg = collectives.choose(name, n, m, rules)
    call = None
    if not getattr(net, "rails", None):     # the per-rank programs take one rail
        rate = net.loggp.reduce_rate
        call = (rooted.call(name, alg, n, m, rules, rate)
                or symmetric.call(name, alg, n, m, rules, rate))
    if call is not None:                    # a long pipeline or ring: steady.py
        t = steady.rank_ends(net.run_program, call)
        return alg, float(t.min()), float(t.max()), float(t.mean())
    alg, ph = collectives.phases(name, n, m, net.loggp.reduce_rate, rules=rules)
    res = net.run(ph)
    end = res.rank_end if res.rank_end is not None else np.zeros(n)
    return alg, float(end.min()), res.total, float(end.mean())


# -- ring allreduce, Multi-PingPong, EmDL ----------------------------------------------------
#: baidu-allreduce reduces MPI_FLOAT; its lengths' allgather sends one MPI_UNSIGNED_LONG.
FLOAT_BYTES = 4
LENGTH_BYTES = 8
#: Open MPI 1.10's allgather decision leaves recursive doubling/Bruck for ring/neighbour
#: exchange at this many bytes gathered in total (coll_tuned_decision_fixed.c).
SMALL_ALLGATHER_1_10 = 50000


def ring_segments(elements: int, n: int) -> list[int]:
    """baidu-allreduce's chunks in floats (collectives.cu ``RingAllreduce``): length / n
    each, the first length % n one more."""
    base, extra = divmod(elements, n)
    return [base + (i < extra) for i in range(n)]


def exchange(prog: Program, after: list[list[int]], to: list[int], size: list[int]
             ) -> list[list[int]]:
    """One send-receive step of every rank: rank r posts its receive (from the rank that
    sends to it) and sends ``size[r]`` bytes to ``to[r]`` (a permutation) once it completed
    ``after[r]``, and waits for both. Returns each rank's send and receive: what its next
    step waits on."""
    sent = prog.extend(list(range(prog.n)), to, size, after, [after[t] for t in to])
    came = [0] * prog.n
    for r, t in enumerate(to):
        came[t] = sent[r]
    return [[sent[r], came[r]] for r in range(prog.n)]


def local_work(prog: Program, after: list[list[int]], seconds: list[float]
               ) -> list[list[int]]:
    """Every rank works ``seconds[r]`` once it completed ``after[r]`` (a copy, a
    reduction); its next sends and receives wait for it."""
    ranks = list(range(prog.n))
    return [[k] for k in prog.extend(ranks, ranks, [0] * prog.n, after, compute=seconds)]


def lengths_allgather(prog: Program, rules: str) -> list[list[int]]:
    """``MPI_Allgather`` of one MPI_UNSIGNED_LONG per rank under Open MPI's fixed rules:
    recursive doubling on a power of two ranks (partner r ^ d, d blocks), else Bruck (to
    r − d, from r + d, min(d, n − d) blocks), ⌈log2 n⌉ send-receive steps. 1.10 picks them
    below 50,000 bytes in total; 4.1 picks recursive doubling (Bruck from 2,048 ranks), whose
    code falls back to Bruck off a power of two. Returns each rank's last step."""
    n = prog.n
    if rules == "ompi-1.10" and n * LENGTH_BYTES >= SMALL_ALLGATHER_1_10:
        raise WorkloadError(f"ring allreduce on {n} ranks: Open MPI 1.10 gathers the lengths "
                            "with a ring or neighbour exchange, which is not modelled",
                            field="hostfile", fix=f"use fewer than "
                            f"{SMALL_ALLGATHER_1_10 // LENGTH_BYTES} ranks")
    power_of_two = n & (n - 1) == 0
    after: list[list[int]] = [[] for _ in range(n)]
    d = 1
    while d < n:
        to = [r ^ d if power_of_two else (r - d) % n for r in range(n)]
        after = exchange(prog, after, to, [min(d, n - d) * LENGTH_BYTES] * n)
        d <<= 1
    return after


def ring_allreduce_program(n: int, elements: int, reduce_rate: float, copy_rate: float,
                           rules: str, drop: int = 0) -> Program:
    """One ``RingAllreduce`` call of ``elements`` floats on every rank (baidu-allreduce
    collectives.cu): the lengths' allgather, the copy of the input into the output, n − 1
    scatter-reduce steps (``Irecv`` from the left, blocking ``Send`` of chunk r − i to the
    right, ``Wait``, then the reduction of chunk r − i − 1 before the next step posts
    anything) and n − 1 allgather steps (``Sendrecv`` of chunk r + 1 − i). A rank moves on
    as soon as its own neighbours let it: no step is global. ``drop``: steps left out of
    the middle of each phase (a truncated call, t2hx/flowsim/steady.py)."""
    prog = Program(n)
    chunk = [FLOAT_BYTES * s for s in ring_segments(elements, n)]
    right = [(r + 1) % n for r in range(n)]
    after = local_work(prog, lengths_allgather(prog, rules),
                       [FLOAT_BYTES * elements / copy_rate] * n)
    for i in steady.kept(n - 1, drop):
        after = exchange(prog, after, right, [chunk[(r - i) % n] for r in range(n)])
        after = local_work(prog, after, [chunk[(r - i - 1) % n] / reduce_rate
                                         for r in range(n)])
    for i in steady.kept(n - 1, drop):
        after = exchange(prog, after, right, [chunk[(r + 1 - i) % n] for r in range(n)])
    return prog


def ring_allreduce_call(n: int, elements: int, reduce_rate: float, copy_rate: float,
                        rules: str) -> steady.Repeated:
    """:func:`ring_allreduce_program` as a call of n − 1 steps per phase, every rank
    waiting on its neighbours (a truncated call keeps its prologue, the lengths' allgather
    and the copy, whole). A delay needs up to n − 1 steps to reach every rank, its depth,
    so t2hx/flowsim/steady.py simulates it whole."""
    return steady.Repeated(lambda drop: ring_allreduce_program(
        n, elements, reduce_rate, copy_rate, rules, drop), n - 1, n - 1, coupled=True)


def ring_allreduce(net: SimNetwork, elements: int) -> float:
    """Seconds of one baidu ring allreduce of ``elements`` floats as rank 0 times it
    (test.cpp prints rank 0's mean over the iterations). The iterations follow each other
    without a barrier, so a rank that ends first waits in the next call's allgather; the
    ring ends its ranks within a few µs of each other, which one call leaves out. The copy
    runs at the reduction rate: the conf has no single-core memory copy rate
    (docs/modelling.md#what-each-benchmark-times)."""
    n = _need_ranks(net, 2, "ring allreduce")
    rate = net.loggp.reduce_rate
    if getattr(net, "rails", None):     # the per-rank programs take one rail
        return _ring_phases(net, n, elements)
    call = ring_allreduce_call(n, elements, rate, rate, net.loggp.collectives)
    return float(steady.rank_ends(net.run_program, call)[0])


def _ring_phases(net: SimNetwork, n: int, elements: int) -> float:
    r = np.arange(n)
    block = math.ceil(elements / n) * FLOAT_BYTES
    step = Phase.of(r, (r + 1) % n, block, block / net.loggp.reduce_rate)
    plain = Phase.of(r, (r + 1) % n, block)
    return net.run([step] * (n - 1) + [plain] * (n - 1)).total


def pingpong_program(n: int, m: int, repetitions: int = 1) -> Program:
    """IMB PingPong in every group of ``-multi``: ranks 2g and 2g + 1 (IMB_set_communicator
    splits MPI_COMM_WORLD by rank / 2; an odd rank out joins no group). Rank 2g sends and
    then receives, 2g + 1 receives and sends back, ``repetitions`` times; no barrier inside
    the loop, so every pair runs on its own."""
    prog = Program(n)
    for a in range(0, n - 1, 2):
        before: list[int] = []
        for _ in range(repetitions):
            ping = prog.add(a, a + 1, m, send_after=before, recv_after=before)
            before = [prog.add(a + 1, a, m, send_after=[ping], recv_after=[ping])]
    return prog


#: Repetitions of a PingPong loop simulated in full; a longer loop is extrapolated from the
#: loops of LOOP_PROBE[0] and LOOP_PROBE[1] repetitions (:func:`pingpong_times`).
LOOP_PROBE = (16, 32)


def pingpong_times(net: SimNetwork, m: int, repetitions: int = 1) -> np.ndarray:
    """IMB's time of every grouped rank in seconds: its loop over the repetitions divided
    by their number, halved (PingPong's ``scale_time`` 0.5). A loop longer than
    ``LOOP_PROBE[1]`` is extrapolated per rank from two shorter ones: once the pairs' drift
    has settled each repetition adds the same time, and a loop that is linear in its
    repetitions (every uncontended pair) is extrapolated exactly
    (tests/test_neighbour_programs.py compares with the whole loop)."""
    n = _need_ranks(net, 2, "Multi-PingPong")
    grouped = n - n % 2
    if getattr(net, "rails", None):     # the per-rank programs take one rail
        a = np.arange(0, grouped, 2)
        total = net.run([Phase.of(a, a + 1, m), Phase.of(a + 1, a, m)]).total
        return np.full(grouped, total / 2)
    loop = steady.Repeated(lambda drop: pingpong_program(n, m, repetitions - drop),
                           repetitions)
    ends = net.run_program(loop.whole()) if repetitions <= LOOP_PROBE[1] else \
        steady.extrapolated(net.run_program, loop, *LOOP_PROBE)
    return ends[:grouped] / repetitions / 2


def emdl(net: SimNetwork, sizes: list[int]) -> list[ImbRow]:
    """SleepyAllreduce (patches/intel-mpi-benchmarks): each repetition times its
    ``MPI_Allreduce`` alone, then sleeps 0.1 s and runs IMB's ``-sync`` barrier, both outside
    the timing, as IMB_allreduce does; the dynamic repetition count is estimated from the
    kernel's reported (allreduce-only) time. So t and #repetitions are Allreduce's."""
    return imb(net, "Allreduce", sizes)
