"""IMB's measurement loop as one per-rank program (t2hx/flowsim/timeline.py).

IMB-MPI1 2021.7 times a collective call by call (``src_c/IMB_gather.c`` ``IMB_gather`` and
the other kernels): ``N_BARR`` barriers before the loop, then per repetition ``t1 =
MPI_Wtime()``, the call, ``time += MPI_Wtime() - t1``, and ``-sync``'s barrier (on by
default, ``src_cpp/MPI1/MPI1_suite.cpp``) outside the timing; a rank's time is its sum over
the repetitions divided by their number, and ``IMB_calculate_times`` takes t_min, t_max and
t_avg over the ranks. :func:`loop` chains R repetitions, each the rule set's barrier and
the call, every rank entering its call when its own barrier completes; :func:`spans` times
each rank's calls from one simulation of the whole loop, so a rank's time holds the
barrier's exit skew and whatever one repetition leaves to the next. t2hx/flowsim/patterns.py ``imb`` times one
call started by every rank at once instead (tests/test_steady_state.py compares the two).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from t2hx.flowsim import collectives, symmetric, timeline
from t2hx.flowsim.timeline import Program


class ProgramEngine(Protocol):
    """What the loop asks of a network engine (both engines answer it)."""
    def program_completions(self, prog: Program) -> tuple[timeline.Wire, np.ndarray]: ...


@dataclass
class Loop:
    """The loop's program and, per repetition, the program messages of its barrier and of
    its call."""
    prog: Program
    barriers: list[range] = field(default_factory=list)
    calls: list[range] = field(default_factory=list)


def barrier(n: int, rules: str) -> Program:
    """``MPI_Barrier`` as the rule set runs it: its algorithm by
    ``collectives.choose``, its program from t2hx/flowsim/symmetric.py."""
    alg = collectives.choose("Barrier", n, 0, rules)
    prog = symmetric.program("Barrier", alg, n, 0, rules)
    if prog is None:
        raise ValueError(f"no per-rank program of the {alg} barrier ({rules}, {n} ranks)")
    return prog


def splice(into: Program, part: Program, entry: list[list[int]]) -> tuple[range, list[list[int]]]:
    """Append ``part`` to ``into``: a message whose sender (receiver) waits on nothing
    within ``part`` waits on what that rank completed before, ``entry[rank]``. Returns the
    part's message range and each rank's messages in it (what completes the rank's part)."""
    base = len(into.src)
    own: list[list[int]] = [[] for _ in range(into.n)]
    for k in range(len(part.src)):
        s, d = part.src[k], part.dst[k]
        send = [base + j for j in part.send_after[k]] or entry[s]
        recv = [base + j for j in part.recv_after[k]] or ([] if s == d else entry[d])
        i = into.add(s, d, part.size[k], send_after=send, recv_after=recv,
                     compute=part.compute[k], sync=part.sync[k])
        own[s].append(i)
        if d != s:
            own[d].append(i)
    return range(base, len(into.src)), own


def loop(call: Program, repetitions: int, rules: str) -> Loop:
    """``repetitions`` times: the rule set's barrier (the first stands for the ``N_BARR``
    barriers before the loop), then the call."""
    n = call.n
    sync = barrier(n, rules)
    out = Loop(Program(n))
    entry: list[list[int]] = [[] for _ in range(n)]
    for _ in range(repetitions):
        span, entry = splice(out.prog, sync, entry)
        out.barriers.append(span)
        span, done = splice(out.prog, call, entry)
        out.calls.append(span)
        # a rank that takes no part in the call goes on from its barrier
        entry = [d or e for d, e in zip(done, entry)]
    return out


def completions(net: ProgramEngine, prog: Program) -> tuple[np.ndarray, np.ndarray]:
    """When each program message completes for its sender and for its receiver (a
    receive completes with its data and its posting; a rank's local work for the rank)."""
    wire, done = net.program_completions(prog)
    m = len(prog.src)
    src, dst = np.asarray(prog.src, np.int64), np.asarray(prog.dst, np.int64)
    ops = np.flatnonzero(src != dst)
    # compile lists each program message's sender, then each non-local one's receiver
    if not (np.array_equal(wire.done_rank[:m], src)
            and np.array_equal(wire.done_rank[m:], dst[ops])):
        raise ValueError("timeline.compile no longer lists completions per program message")
    sent = np.asarray(done)[wire.done_wire[:m]] if m else np.zeros(0)
    got = sent.copy()
    got[ops] = np.asarray(done)[wire.done_wire[m:]]
    return sent, got


def spans(net: ProgramEngine, lp: Loop) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends), each (repetitions, ranks) seconds: when every rank enters each call
    (its own completion of the barrier before it) and completes its last operation in it.
    One simulation of the whole loop."""
    sent, got = completions(net, lp.prog)
    src, dst = np.asarray(lp.prog.src), np.asarray(lp.prog.dst)

    def last(span: range) -> np.ndarray:
        out = np.zeros(lp.prog.n)
        k = np.arange(span.start, span.stop)
        np.maximum.at(out, src[k], sent[k])
        np.maximum.at(out, dst[k], got[k])
        return out

    starts = np.array([last(bar) for bar in lp.barriers])
    ends = np.array([last(call) for call in lp.calls])
    return starts, np.maximum(ends, starts)     # a rank without a part in the call: 0 s

