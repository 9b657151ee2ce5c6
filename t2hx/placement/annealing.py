"""Simulated annealing rank re-placement: seed 001 §3.5.1's competitor to two-opt (Figs 3.17,
3.18: "SA 72", "SA 1,000", "SA 10,000" iterations against two-opt's 5,000 swaps).

The same moves and objectives as two-opt (t2hx/placement/twoopt.py: swap the nodes of two
ranks, ``delta`` of the total hops or contention), but a swap that makes things worse is
also kept with probability exp(−Δ/T), and T falls geometrically. The thesis gives no
schedule for its competitor ([3] in its bibliography), so ours is stated here and recorded
with every result:

- an *iteration* is one sweep of ``n`` swap trials (n = ranks): the unit in which SA is
  usually counted, and the one under which the thesis' "SA 72" costs about what two-opt's
  5,000 trials cost at its sizes (72 sweeps of 64–128 ranks);
- the first temperature accepts an average worsening with probability 1/2:
  T₀ = mean(|Δ| of worsening trial swaps) / ln 2, over ``n`` trial swaps of the start;
- T falls by a constant factor per iteration to T₀/1000 at the last one;
- the result is the best placement seen, not the last.
"""

from __future__ import annotations

import math
import time

import numpy as np

from t2hx.placement.twoopt import (ContentionObjective, HopObjective, TwoOptResult,
                                   starting, swap_pairs)

#: The last iteration's temperature as a share of the first.
FINAL_SHARE = 1e-3


def start_temperature(objective: HopObjective | ContentionObjective, place: np.ndarray,
                      rng: np.random.Generator) -> float:
    """T₀ at which an average worsening swap of the start is kept with probability 1/2."""
    worse = [d for a, b in zip(*swap_pairs(len(place), len(place), rng))
             if (d := objective.delta(place, a, b)) > 0]
    return (float(np.mean(worse)) if worse else 1.0) / math.log(2)


def anneal(objective: HopObjective | ContentionObjective, start: np.ndarray, iterations: int,
           rng: np.random.Generator) -> TwoOptResult:
    """``iterations`` sweeps of ``n`` swap trials from ``start`` (node per rank); the best
    placement seen. ``TwoOptResult.iterations`` counts swap trials, as two-opt's does."""
    began, cpu = time.monotonic(), time.process_time()
    place, total = starting(objective, start, iterations)
    initial, n = total, len(place)
    best, best_total, accepted, trials = place.copy(), total, 0, 0
    if n >= 2 and iterations:
        temp = start_temperature(objective, place, rng)
        cool = FINAL_SHARE ** (1.0 / max(1, iterations - 1))
        for _ in range(iterations):
            first, second = swap_pairs(n, n, rng)
            coins = rng.random(n)
            for a, b, coin in zip(first, second, coins.tolist()):
                d = objective.delta(place, a, b)
                if d < 0 or (d > 0 and coin < math.exp(-d / temp)) or d == 0:
                    objective.accept()
                    place[a], place[b] = place[b], place[a]
                    total += d
                    accepted += 1
                    if total < best_total:
                        best, best_total = place.copy(), total
            trials += n
            temp *= cool
    return TwoOptResult(best, initial, best_total, accepted, trials,
                        time.monotonic() - began, time.process_time() - cpu)
