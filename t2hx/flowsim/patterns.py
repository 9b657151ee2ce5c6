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
from t2hx.flowsim import collectives
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


def offdiag_mean(m: np.ndarray) -> float:
    n = len(m)
    return float((m.sum() - np.trace(m)) / (n * (n - 1))) if n > 1 else 0.0


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
IMB_OVERALL_VOL = 40 * MIB


def imb_repetitions(size: int) -> int:
    """IMB's default: 1000 repetitions, fewer when size·reps exceeds 40 MiB."""
    return 1000 if size == 0 else max(1, min(1000, IMB_OVERALL_VOL // size))


@dataclass
class ImbRow:
    size: int
    reps: int
    t_min: float
    t_max: float
    t_avg: float
    algorithm: str


def imb(net: SimNetwork, name: str, sizes: list[int]) -> list[ImbRow]:
    name = collectives.canonical(name)
    n = _need_ranks(net, 1, name)
    rows = []
    for m in ([0] if name == "Barrier" else sizes):
        alg, ph = collectives.phases(name, n, m, net.loggp.reduce_rate,
                                     rules=net.loggp.collectives)
        res = net.run(ph)
        end = res.rank_end if res.rank_end is not None else np.zeros(n)
        t = end * 1e6
        rows.append(ImbRow(m, imb_repetitions(m), float(t.min()), float(res.total * 1e6),
                           float(t.mean()), alg))
    return rows


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
    rows = []
    for m in sizes:
        ping = net.run([Phase.of(a, b, m), Phase.of(b, a, m)])
        t = ping.total / 2
        rows.append((m, imb_repetitions(m), t * 1e6, m / t / 1e6 if m else 0.0))
    return rows


def emdl(net: SimNetwork, sizes: list[int]) -> list[ImbRow]:
    """SleepyAllreduce: each repetition is an allreduce followed by a 0.1 s usleep; the
    patch times the allreduce only, so the sleep shows in wall time, not in t."""
    return imb(net, "Allreduce", sizes)
