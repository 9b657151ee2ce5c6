"""IMB invocations as fluid-mode jobs (capacity runs, seed 000 §4.4.2).

In the capacity mix, one *run* of IMB Multi-PingPong (MuPP) or of EmDL (our SleepyAllreduce)
is one whole ``IMB-MPI1`` invocation: the study's message-size sweep (``-msglog 0:22``: 0 B,
then 1 B … 4 MiB) with IMB's repetition count at every size. A finished run therefore takes
seconds, like the other apps' runs, not one 1 MiB ping-pong.

IMB's default repetition rule (Intel MPI Benchmarks User Guide, "Control of Repetitions";
the defaults of IMB's settings header): at most ``MSGSPERSAMPLE`` = 1000 repetitions per
size, and no more than ``OVERALL_VOL`` = 40 MiB moved per size, i.e.
``reps = max(1, min(1000, 40 MiB // size))`` (1000 for 0 B). On top, the study runs IMB
with ``-time 10`` (at most ~10 s per size, from IMB's own estimate of one repetition): that
cap binds for EmDL, whose repetition includes a 0.1 s sleep (100 repetitions per size), and
never for MuPP at these sizes. We estimate one repetition by its sleep and compute time.
"""

from __future__ import annotations

import numpy as np

from t2hx.flowsim import collectives
from t2hx.flowsim.fluid import Comm, Compute, Job, phase_steps
from t2hx.flowsim.network import Network

#: IMB's defaults (settings header): repetitions per size and bytes moved per size.
MSGS_PER_SAMPLE = 1000
OVERALL_VOL = 40 * 1024 * 1024
#: The study's IMB sweep (conf/studies/<study>.yaml ``benchmarks: mupp/emdl: input: msglog``).
STUDY_MSGLOG = (0, 22)
#: EmDL's sleep after every allreduce (our SleepyAllreduce patch of IMB).
EMDL_SLEEP_S = 0.1
#: The study's ``-time`` (seconds per size).
SECS_PER_SAMPLE = 10.0


def msglog_sizes(lo: int, hi: int) -> list[int]:
    """IMB -msglog lo:hi → 0 and 2^lo … 2^hi."""
    return [0] + [1 << k for k in range(lo, hi + 1)]


def repetitions(size: int, seconds_per_rep: float = 0.0) -> int:
    """IMB's default repetition count for a message of ``size`` bytes whose repetition
    takes at least ``seconds_per_rep``."""
    reps = MSGS_PER_SAMPLE if size <= 0 else max(1, min(MSGS_PER_SAMPLE, OVERALL_VOL // size))
    if seconds_per_rep > 0:
        reps = max(1, min(reps, int(SECS_PER_SAMPLE / seconds_per_rep)))
    return reps


def sweep(msglog: tuple[int, int] = STUDY_MSGLOG) -> list[tuple[int, int]]:
    """(size, repetitions) of every size of one ``-msglog lo:hi`` invocation."""
    return [(s, repetitions(s)) for s in msglog_sizes(*msglog)]


def mupp_job(net: Network, name: str, ranks: np.ndarray, repeat: int = 1,
             msglog: tuple[int, int] = STUDY_MSGLOG) -> Job:
    """IMB Multi-PingPong: pairs (2g, 2g+1) of the job's ranks ping-pong every size of the
    sweep, IMB's repetition count each (``-multi`` groups by rank / 2, IMB_set_communicator;
    an odd rank out idles); one job iteration is one whole invocation.

    A size's repetitions are fused (``Comm.count``): all pings, then all pongs. Under
    constant contention that takes reps x (ping + pong) as the alternation does; it spares
    the fluid engine two events per repetition (docs/modelling.md#capacity-mode)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    grouped = len(ranks) - len(ranks) % 2
    a, b = ranks[0:grouped:2], ranks[1:grouped:2]
    steps: list = []
    for size, reps in sweep(msglog):
        steps += [Comm(a, b, size, reps), Comm(b, a, size, reps)]
    return Job(name, steps, repeat)


def emdl_job(net: Network, name: str, ranks: np.ndarray, repeat: int = 1,
             msglog: tuple[int, int] = STUDY_MSGLOG) -> Job:
    """EmDL: at every size of the sweep, IMB's repetitions of (allreduce, 0.1 s sleep)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    steps: list = []
    for size in msglog_sizes(*msglog):
        # A 0-byte allreduce still synchronises: model it as the 1-byte one.
        phases = collectives.phases("Allreduce", len(ranks), max(size, 1),
                                    net.loggp.reduce_rate, rules=net.loggp.collectives)[1]
        one = phase_steps(ranks, phases)
        busy = EMDL_SLEEP_S + sum(ph.compute for ph in phases)
        steps += (one + [Compute(EMDL_SLEEP_S)]) * repetitions(size, busy)
    return Job(name, steps, repeat)
