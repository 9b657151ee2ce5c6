"""The network benchmarks' communication on a network engine's network (bulk-synchronous
phases, :class:`~t2hx.flowsim.engines.SimNetwork`); t2hx/benchmarks/ turns the numbers into
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
* :func:`ring_allreduce` — DeepBench/baidu ring allreduce: 2(n-1) steps of size/n bytes.
* :func:`multi_pingpong` — IMB Multi-PingPong: pairs (i, i+n/2) ping-pong concurrently.
* :func:`emdl` — IMB Allreduce alternating with a 0.1 s sleep (the SleepyAllreduce patch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim import collectives, imbjobs, rooted
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.engines import SimNetwork

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
    r = np.arange(n)
    return [Phase.of(r, (r + k) % n, size * window) for k in range(1, n)]


def mpigraph(net: SimNetwork, size: int = MIB, times: int = 10, window: int = 10) -> MpiGraph:
    n = _need_ranks(net, 2, "mpiGraph")
    ph = mpigraph_phases(n, size, window)
    res = net.run(ph, keep_rates=True)
    send = np.zeros((n, n))
    for k, p in enumerate(ph):
        send[p.src, p.dst] = window * size / res.flow_time[k] / MIB
    return MpiGraph(size, times, window, send, send.T.copy())


def average(m: np.ndarray) -> float:
    """mpiGraph's "avg": the message size over the mean time per message of every
    off-diagonal pair (``mpiGraph.c`` ``code()``: ``MBsec / sendsum`` after dividing the summed
    times by ``nnodes·(nnodes−1)·times``), i.e. the harmonic mean of the matrix's bandwidths,
    not their arithmetic mean. A pair with no bandwidth (never measured) counts as zero."""
    n = len(m)
    if n < 2:
        return 0.0
    off = m[~np.eye(n, dtype=bool)]
    if (off <= 0).any():
        return 0.0
    return float(len(off) / np.sum(1.0 / off))


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
    protocol, t2hx/flowsim/rooted.py), else over the bulk-synchronous phases (a rank ends
    with the last phase it takes part in; t_max is the whole call)."""
    rules = net.loggp.collectives
    alg = collectives.choose(name, n, m, rules)
    prog = None if getattr(net, "rails", None) else rooted.program(name, alg, n, m, rules)
    if prog is not None:
        t = net.run_program(prog)
        return alg, float(t.min()), float(t.max()), float(t.mean())
    alg, ph = collectives.phases(name, n, m, net.loggp.reduce_rate, rules=rules)
    res = net.run(ph)
    end = res.rank_end if res.rank_end is not None else np.zeros(n)
    return alg, float(end.min()), res.total, float(end.mean())


# -- ring allreduce, Multi-PingPong, EmDL ----------------------------------------------------
def ring_allreduce(net: SimNetwork, elements: int) -> float:
    """Seconds per baidu ring allreduce of ``elements`` floats."""
    n = _need_ranks(net, 2, "ring allreduce")
    r = np.arange(n)
    block = math.ceil(elements / n) * 4
    step = Phase.of(r, (r + 1) % n, block, block / net.loggp.reduce_rate)
    plain = Phase.of(r, (r + 1) % n, block)
    return net.run([step] * (n - 1) + [plain] * (n - 1)).total


def multi_pingpong(net: SimNetwork, sizes: list[int]) -> list[tuple[int, int, float, float]]:
    """(bytes, reps, t[usec] (half round trip, slowest pair), Mbytes/sec per pair)."""
    n = _need_ranks(net, 2, "Multi-PingPong")
    half = n // 2
    a, b = np.arange(half), np.arange(half) + half
    rows: list[tuple[int, int, float, float]] = []
    for m in sizes:
        ping = net.run([Phase.of(a, b, m), Phase.of(b, a, m)])
        t = ping.total / 2
        reps = imb_repetitions(m, ping.total, rows[-1][1] if rows else None)
        rows.append((m, reps, t * 1e6, m / t / 1e6 if m else 0.0))
    return rows


def emdl(net: SimNetwork, sizes: list[int]) -> list[ImbRow]:
    """SleepyAllreduce: each repetition is an allreduce followed by a 0.1 s usleep; the
    patch times the allreduce only, so the sleep shows in wall time, not in t."""
    return imb(net, "Allreduce", sizes)
