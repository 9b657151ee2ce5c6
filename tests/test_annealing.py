"""Simulated annealing, seed 001 §3.5.1's competitor to two-opt: the same swaps and
objectives, worsening swaps kept with probability exp(-Δ/T), the best placement returned."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.errors import T2hxError
from t2hx.fabric.pathlengths import hop_matrix
from t2hx.fabric.shortcut import random_shortcut_edges
from t2hx.placement.annealing import anneal
from t2hx.placement.collective_messages import messages
from t2hx.placement.seeding import rng_for
from t2hx.placement.twoopt import HopObjective, two_opt


def objective(n: int = 64, degree: int = 8) -> HopObjective:
    """Binomial Broadcast over an 8-degree random network, one rank per switch (Fig 3.17)."""
    return HopObjective(hop_matrix(n, random_shortcut_edges(n, degree, 1)), messages("bcast", n))


def test_the_result_is_a_permutation_and_its_total_is_recomputed_exactly() -> None:
    obj = objective()
    start = np.arange(64)
    res = anneal(obj, start, 20, rng_for(1, "sa"))
    assert sorted(res.placement.tolist()) == list(range(64))
    assert res.final == obj.total(res.placement) <= res.initial == obj.total(start)
    assert res.iterations == 20 * 64 and res.accepted > 0


def test_it_is_reproducible_from_its_seed_and_moves_with_another() -> None:
    obj = objective()
    a = anneal(obj, np.arange(64), 10, rng_for(7, "sa")).placement
    b = anneal(obj, np.arange(64), 10, rng_for(7, "sa")).placement
    c = anneal(obj, np.arange(64), 10, rng_for(8, "sa")).placement
    assert a.tolist() == b.tolist() and a.tolist() != c.tolist()


def test_more_sweeps_find_fewer_hops_than_two_opt_at_a_tenth_of_them() -> None:
    """Fig 3.17's ordering: SA with many iterations at or below two-opt's 5,000 swaps, with
    both starting from the same placement (the conventional tree over ranks in order)."""
    obj = objective()
    start = np.arange(64)
    two = two_opt(obj, start, 5000, rng_for(1, "two-opt")).final
    sa = anneal(obj, start, 1000, rng_for(1, "sa")).final
    assert sa <= two < obj.total(start)


def test_zero_iterations_keep_the_start_and_negative_ones_are_refused() -> None:
    obj = objective()
    start = np.random.default_rng(3).permutation(64)
    res = anneal(obj, start, 0, rng_for(1, "sa"))
    assert res.placement.tolist() == start.tolist() and res.final == res.initial
    with pytest.raises(T2hxError, match="iterations"):
        anneal(obj, start, -1, rng_for(1, "sa"))
