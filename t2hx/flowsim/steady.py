"""Steady-state extrapolation of calls that repeat one pattern many times: the segments of a
segmented pipeline, the steps of a ring (docs/modelling.md#per-rank-timelines).

A segmented Bcast or Reduce moves S segments through a tree of depth D, one after the
other along every edge. A call is simulated twice, truncated to S1 < S2 repetitions (its
first ones and its last, so it ends as the real call does), and each rank's end is
extrapolated linearly to all S:

    T_j(S) = T_j(S2) + (S − S2) · (T_j(S2) − T_j(S1)) / (S2 − S1).

In a uniform chain T_j(S) = (S + j)·t for every S, so the rule is exact whatever the depth
and whatever S1 and S2. Where links are shared or hops differ, a rank's slope is the
steady one only once every edge is busy: the first segment takes D hops to the deepest
rank, each a segment's latency, longer than the period at which segments follow each
other, so the ranks see the full pipeline only after about 1.5·D segments (measured on
contended chains of 448 and 672 ranks); and T_j(S) jitters around its trend by about a
segment's time, which the slope carries divided by S2 − S1. Hence S1 = 2·D +
:data:`WINDOW`, S2 = S1 + WINDOW. In a ring a late rank holds up its neighbour one
step later, the next one a step after that: a delay needs up to n − 1 steps to reach
every rank, so a ring's depth is n − 1 and its call is simulated whole (its truncation is
kept for the tests; docs/modelling.md gives what truncating it costs in accuracy). A
ring's ranks wait on their neighbours every step, so when it is truncated they share one
slope, the mean of theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from t2hx.flowsim.timeline import Program

#: The truncated calls' repetitions past twice the pattern's depth, S1 = 2·D + WINDOW, and
#: between them, S2 = S1 + WINDOW: a segment's jitter moves the slope by about 1 % of a
#: segment's time (docs/modelling.md#per-rank-timelines).
WINDOW = 128
#: The truncated calls are simulated only when they hold at most this share of the real
#: call's repetitions together; a shorter call is simulated whole, exactly.
MAX_SHARE = 0.5

#: Repetitions left out of the middle of every repeated sequence -> the call's program.
Build = Callable[[int], Program]
#: A network engine's run of one program: each rank's end.
Run = Callable[[Program], np.ndarray]


@dataclass(frozen=True)
class Repeated:
    """One call: ``build(drop)`` is its program with ``drop`` of its ``repeats``
    repetitions left out (the first ``repeats − drop − 1`` and the last kept); ``depth``:
    the repetitions before a delay anywhere has reached every rank (a tree's height, a
    ring's n − 1 steps); ``coupled``: every rank waits on its neighbours in every
    repetition (a ring), so the ranks share one slope."""
    build: Build
    repeats: int = 1
    depth: int = 0
    coupled: bool = False

    def shortened(self) -> tuple[int, int]:
        """(S1, S2): the repetitions of the two truncated calls."""
        return 2 * self.depth + WINDOW, 2 * self.depth + 2 * WINDOW

    def whole(self) -> Program:
        return self.build(0)


def whole(prog: Program) -> Repeated:
    """A call without a repeated pattern: simulated as it is."""
    return Repeated(lambda drop: prog)


def kept(count: int, drop: int) -> list[int]:
    """Indices of the repetitions a truncated call keeps: all but ``drop`` of ``count``,
    the first ones and the last (at least the last)."""
    if not count:
        return []
    return list(range(max(count - drop - 1, 0))) + [count - 1]


def rank_ends(run: Run, call: Repeated) -> np.ndarray:
    """Each rank's end of the call: extrapolated from two truncated calls when those hold
    at most :data:`MAX_SHARE` of its repetitions, else simulated whole."""
    s1, s2 = call.shortened()
    if s1 + s2 > MAX_SHARE * call.repeats:
        return run(call.whole())
    return extrapolated(run, call, s1, s2)


def extrapolated(run: Run, call: Repeated, s1: int, s2: int) -> np.ndarray:
    """Each rank's end of the call of ``call.repeats`` repetitions, linear from the calls
    truncated to ``s1`` and ``s2`` (module docstring)."""
    if not 0 < s1 < s2 < call.repeats:
        raise ValueError(f"truncated calls of {s1} and {s2} repetitions cannot extrapolate "
                         f"a call of {call.repeats}: need 0 < S1 < S2 < S")
    short, long = (run(call.build(call.repeats - s)) for s in (s1, s2))
    slope = (long - short) / (s2 - s1)
    if call.coupled:
        slope = np.full_like(slope, slope.mean())
    return long + (call.repeats - s2) * slope
