"""Max-min engine and fluid mode against reference computations (no fabric needed)."""

import numpy as np
import pytest

from t2hx.flowsim.fluid import simulate_flows
from t2hx.flowsim.maxmin import maxmin_rates


def reference_maxmin(paths: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Textbook progressive filling: freeze the flows of the single tightest link."""
    flows = [set(int(k) for k in row if k >= 0) for row in paths]
    rate = np.zeros(len(flows))
    left = cap.astype(float).copy()
    todo = set(range(len(flows)))
    while todo:
        best, link = np.inf, None
        for k in range(len(cap)):
            users = [f for f in todo if k in flows[f]]
            if users and left[k] / len(users) < best:
                best, link = left[k] / len(users), k
        for f in [f for f in todo if link in flows[f]]:
            rate[f] = best
            todo.discard(f)
            for k in flows[f]:
                left[k] -= best
    return rate


@pytest.mark.parametrize("seed", range(12))
def test_matches_textbook_progressive_filling(seed: int) -> None:
    rng = np.random.default_rng(seed)
    links, flows, hops = 12, 25, 4
    paths = np.full((flows, hops), -1)
    for f in range(flows):
        k = rng.integers(1, hops + 1)
        paths[f, :k] = rng.choice(links, k, replace=False)
    cap = rng.uniform(1.0, 5.0, links)
    np.testing.assert_allclose(maxmin_rates(paths, cap), reference_maxmin(paths, cap),
                               rtol=1e-9)


def test_rates_respect_capacities_and_saturate_a_link_per_flow() -> None:
    rng = np.random.default_rng(7)
    paths = rng.integers(0, 40, size=(300, 5))
    cap = rng.uniform(1, 3, 40)
    rate = maxmin_rates(paths, cap)
    load = np.bincount(paths.ravel(), weights=np.repeat(rate, 5), minlength=40)
    assert (load <= cap * (1 + 1e-9)).all()
    # max-min: every flow crosses a saturated link where it has the largest rate
    for f in range(0, 300, 17):
        sat = [k for k in paths[f] if load[k] >= cap[k] * (1 - 1e-9)
               and rate[f] >= rate[np.any(paths == k, axis=1)].max() * (1 - 1e-9)]
        assert sat


def test_groups_do_not_interact() -> None:
    paths = np.array([[0, 1], [1, -1], [0, -1]])
    alone = maxmin_rates(paths, np.array([1.0, 1.0]))
    both = maxmin_rates(np.vstack([paths, paths[:1]]), np.array([1.0, 1.0]),
                        group=np.array([3, 3, 3, 9]))
    np.testing.assert_allclose(both[:3], alone)
    assert both[3] == pytest.approx(1.0)


def test_fluid_redistributes_after_departures_and_arrivals() -> None:
    paths = np.array([[0, 1], [2, 1]])
    cap = np.array([4e9, 4e9, 4e9])
    finish = simulate_flows(paths, cap, np.array([4e6, 2e6]))
    np.testing.assert_allclose(finish, [1.5e-3, 1.0e-3])
    finish = simulate_flows(paths, cap, np.array([4e6, 2e6]), np.array([0.0, 5e-4]))
    np.testing.assert_allclose(finish, [1.5e-3, 1.5e-3])


def test_deterministic() -> None:
    rng = np.random.default_rng(1)
    paths = rng.integers(0, 50, size=(500, 6))
    cap = rng.uniform(1, 2, 50)
    assert (maxmin_rates(paths, cap) == maxmin_rates(paths, cap)).all()
