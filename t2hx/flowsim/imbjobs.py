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

Given the study input a capacity app runs (``inp``: ``msglog``, ``iter``, ``iter_policy``,
``time``, the keys checks/imb.py passes to IMB-MPI1), a run follows IMB's own repetition
control instead (:func:`executed`, imbschedule.Schedule, the capability model's rule): per size
the estimate's repetitions, a warm-up of a tenth, then the count; a size the time limit
stops ends the invocation. That is the run the real capacity driver times.
"""

from __future__ import annotations

import numpy as np

from t2hx import imbschedule
from t2hx.flowsim import collectives
from t2hx.flowsim.fluid import Comm, Compute, Job, phase_steps
from t2hx.flowsim.network import Network

#: IMB's defaults (settings header): repetitions per size, bytes moved per size, seconds per
#: size (the study's ``-time`` too).
MSGS_PER_SAMPLE = imbschedule.MSGSPERSAMPLE
OVERALL_VOL = imbschedule.OVERALL_VOL
SECS_PER_SAMPLE = imbschedule.SECS_PER_SAMPLE
#: The study's IMB sweep (conf/studies/<study>.yaml ``benchmarks: mupp/emdl: input: msglog``).
STUDY_MSGLOG = (0, 22)
#: EmDL's sleep after every allreduce (our SleepyAllreduce patch of IMB).
EMDL_SLEEP_S = 0.1


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


def schedule_of(inp: dict) -> imbschedule.Schedule:
    """IMB's repetition control of a study input (imbschedule.Schedule.of for a dict)."""
    counts = [int(x) for x in str(inp.get("iter", "")).split(",") if x]
    return imbschedule.Schedule(
        counts[0] if counts else imbschedule.MSGSPERSAMPLE,
        counts[1] * 1024 * 1024 if len(counts) > 1 else imbschedule.OVERALL_VOL,
        str(inp.get("iter_policy", imbschedule.DEFAULT_POLICY)),
        float(inp.get("time", imbschedule.SECS_PER_SAMPLE)))


def executed(inp: dict, timed: list[float], untimed: float, ranks: int
             ) -> list[tuple[int, int]]:
    """(size, repetitions IMB-MPI1 runs) of every size one invocation with input ``inp``
    runs: the estimate's, the warm-up's and the count's (imbschedule.Schedule.sweep, whose
    elapsed time counts the same three); a size the time limit stopped runs its estimate
    only, and no size after it runs. ``timed``: one repetition's timed seconds per size."""
    bounds = imbschedule.msglog_bounds(str(inp.get("msglog", "0:22")))
    sizes = msglog_sizes(*bounds)
    sched = schedule_of(inp)
    counts, stopped = sched.sweep(sizes, timed, untimed, ranks, bounds)
    out: list[tuple[int, int]] = []
    previous = sched.msgspersample
    for size, t in zip(sizes, timed):
        if sched.policy in ("dynamic", "auto"):
            n, probe = sched._dynamic(size, t, previous)     # the capability model's rule
        else:
            n = counts[len(out)] if len(out) < len(counts) else sched.msgspersample
            probe = n
        if size == stopped:
            out.append((size, probe))
            break
        n = counts[len(out)]
        out.append((size, probe + (n // imbschedule.WARMUP_PERCENT or (1 if n > 1 else 0)) + n))
        previous = n
    return out


def _pingpong_s(net: Network, size: int) -> float:
    """A lower bound of one ping-pong: two one-hop latencies and the bytes at the fastest
    link's rate (IMB's estimate only decides counts, and reads the same order)."""
    return 2 * (float(net.loggp.latency(np.array([1.0]))[0]) + size / float(net.capacity.max()))


def mupp_job(net: Network, name: str, ranks: np.ndarray, repeat: int = 1,
             msglog: tuple[int, int] = STUDY_MSGLOG, inp: dict | None = None) -> Job:
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
    if inp is None:
        plan = sweep(msglog)
    else:
        bounds = imbschedule.msglog_bounds(str(inp.get("msglog", "0:22")))
        plan = executed(inp, [_pingpong_s(net, s) for s in msglog_sizes(*bounds)], 0.0,
                        len(ranks))
    for size, reps in plan:
        steps += [Comm(a, b, size, reps), Comm(b, a, size, reps)]
    return Job(name, steps, repeat)


def emdl_job(net: Network, name: str, ranks: np.ndarray, repeat: int = 1,
             msglog: tuple[int, int] = STUDY_MSGLOG, inp: dict | None = None) -> Job:
    """EmDL: at every size of the sweep, IMB's repetitions of (allreduce, 0.1 s sleep);
    with ``inp``, the repetitions that input runs (:func:`executed`)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    if inp is not None:
        return _emdl_input_job(net, name, ranks, repeat, inp)
    steps: list = []
    for size in msglog_sizes(*msglog):
        # A 0-byte allreduce still synchronises: model it as the 1-byte one.
        phases = collectives.phases("Allreduce", len(ranks), max(size, 1),
                                    net.loggp.reduce_rate, rules=net.loggp.collectives)[1]
        one = phase_steps(ranks, phases)
        busy = EMDL_SLEEP_S + sum(ph.compute for ph in phases)
        steps += (one + [Compute(EMDL_SLEEP_S)]) * repetitions(size, busy)
    return Job(name, steps, repeat)


def _allreduce(net: Network, ranks: np.ndarray, size: int) -> tuple[list, float]:
    """One allreduce's fluid steps and its compute seconds (a 0-byte allreduce still
    synchronises: modelled as the 1-byte one)."""
    phases = collectives.phases("Allreduce", len(ranks), max(size, 1), net.loggp.reduce_rate,
                                rules=net.loggp.collectives)[1]
    return phase_steps(ranks, phases), sum(ph.compute for ph in phases)


def _emdl_input_job(net: Network, name: str, ranks: np.ndarray, repeat: int,
                    inp: dict) -> Job:
    bounds = imbschedule.msglog_bounds(str(inp.get("msglog", "0:22")))
    sizes = msglog_sizes(*bounds)
    ones = [_allreduce(net, ranks, s) for s in sizes]
    # IMB's estimate reads the timed allreduce: its compute and a latency per phase.
    timed = [c + len(steps) * float(net.loggp.latency(np.array([1.0]))[0])
             for steps, c in ones]
    steps: list = []
    for (_size, reps), (one, _) in zip(executed(inp, timed, EMDL_SLEEP_S, len(ranks)), ones):
        steps += (one + [Compute(EMDL_SLEEP_S)]) * reps
    return Job(name, steps, repeat)
