"""The per-rank timelines' event loop in C (t2hx/flowsim/kernel/timelinek.c) against the
Python loop it replaced (timeline.fluid_times_python): the same delivery times to the bit,
on random dependency graphs (small components, solved like _maxmin_small, and large ones,
solved like maxmin_rates) and on the programs the benchmarks build on a routed mini
HyperX."""

from __future__ import annotations

import numpy as np
import pytest

from t2hx.flowsim import patterns, rooted, symmetric, timeline


def random_graph(seed: int, n: int, links: int, width: int, reach: int):
    rng = np.random.default_rng(seed)
    paths = np.full((n, width), -1)
    for i in range(n):
        k = rng.integers(1, width + 1)
        paths[i, :k] = rng.choice(links, k, replace=False)
    capacity = rng.uniform(1e9, 4e9, links)
    size = rng.choice([0.0, 1e3, 1e5, 1e6], n)
    latency = rng.uniform(1e-6, 3e-6, n)
    compute = np.where(rng.random(n) < 0.2, rng.uniform(0, 1e-4, n), 0.0)
    deps = [sorted(set(rng.integers(max(0, i - reach), i, rng.integers(0, 3)).tolist()))
            if i else [] for i in range(n)]
    dep_off = np.zeros(n + 1, np.int64)
    np.cumsum([len(d) for d in deps], out=dep_off[1:])
    dep = np.array([j for d in deps for j in d], np.int32)
    return paths, capacity, size, latency, dep_off, dep, compute


def same_to_the_bit(args) -> np.ndarray:
    fast = timeline.fluid_times(*args)
    slow = timeline.fluid_times_python(*args)
    assert np.array_equal(fast, slow, equal_nan=True), np.nanmax(np.abs(fast - slow))
    return fast


@pytest.mark.parametrize("seed", range(4))
def test_small_components(seed) -> None:
    """Few flows in flight at a time: components of at most a dozen flows."""
    out = same_to_the_bit(random_graph(seed, n=600, links=60, width=3, reach=4))
    assert np.isfinite(out).all()


@pytest.mark.parametrize("seed", range(3))
def test_large_components(seed) -> None:
    """Many flows in flight over few links: components beyond a dozen flows, where the
    Python loop calls numpy's maxmin_rates."""
    args = random_graph(seed, n=800, links=16, width=4, reach=200)
    same_to_the_bit(args)


def test_no_dependencies_and_no_bytes() -> None:
    """Messages without bytes or without links, work alone, nothing waiting."""
    paths = np.array([[0, 1], [-1, -1], [1, -1], [-1, -1]])
    args = (paths, np.array([1e9, 2e9]), np.array([1e6, 0.0, 5e5, 0.0]),
            np.array([1e-6, 0.0, 2e-6, 0.0]), np.array([0, 0, 1, 1, 3]),
            np.array([0, 1, 2], np.int32), np.array([0.0, 0.0, 0.0, 1e-3]))
    out = same_to_the_bit(args)
    assert out[1] == out[0] and out[3] == pytest.approx(max(out[1], out[2]) + 1e-3)


def test_a_link_of_no_capacity_is_an_error() -> None:
    args = (np.array([[0]]), np.array([0.0]), np.array([1.0]), np.array([0.0]),
            np.array([0, 0]), np.zeros(0, np.int32), None)
    with pytest.raises(ZeroDivisionError):
        timeline.fluid_times(*args)


def wire_args(net, prog: timeline.Program):
    wire = timeline.compile(prog, timeline.eager_limit(net.system))
    paths, hops = net.paths(wire.src, wire.dst, wire.lid_size)
    latency = np.where(wire.local, 0.0, net.loggp.latency(hops.astype(np.float64)))
    return paths, net.capacity, wire.size, latency, wire.dep_off, wire.dep, wire.compute


@pytest.mark.parametrize("name,alg,size", [
    ("Allreduce", "ring", 1 << 20), ("Allreduce", "rabenseifner", 256 << 10),
    ("Bcast", "pipeline@65536", 1 << 22), ("Reduce", "binary", 64 << 10),
    ("Barrier", "recursive_doubling", 0)])
def test_collectives_on_the_mini_hyperx(mini_hyperx, name, alg, size) -> None:
    n = len(mini_hyperx.hosts)
    prog = (rooted.program(name, alg, n, size, "ompi-1.10", 4e9)
            or symmetric.program(name, alg, n, size, "ompi-1.10", 4e9))
    if prog is None:
        pytest.fail(f"no program for {name}/{alg}")
    same_to_the_bit(wire_args(mini_hyperx, prog))


def test_ring_allreduce_on_the_mini_hyperx(mini_hyperx) -> None:
    prog = patterns.ring_allreduce_program(len(mini_hyperx.hosts), 1 << 18, 4e9, 8e9,
                                           "ompi-1.10")
    same_to_the_bit(wire_args(mini_hyperx, prog))
