"""What one run of a benchmark sends between its ranks: the rank x rank byte matrix Open MPI's
``pml_monitoring`` would record for it, derived from the communication pattern the simulator
runs for that benchmark (docs/routing.md#derived-demand).

PARX routes each job with its demand (seed 000 §3.2.2–3.2.3). A recorded profile
(``conf/profiles/``) exists only at the rank counts this machine can run; at larger counts
``t2hx campaign reroute`` asks :func:`derived_traffic` instead and says so in the job's demand
note. Only the *shape* matters to the demand file (t2hx.routing.demand normalises each job's
bytes onto 1..255), so a derivation keeps the pattern's relative volumes and needs no timing:

* mpiGraph: every rank sends ``iters x window x size`` to every other (one shift per peer);
* Netgauge eBB: the expectation of its random bisections, uniform over rank pairs;
* baidu ring allreduce: 2(n-1) chunks of each size to the right neighbour, per size built in;
* IMB collectives, EmDL: the algorithm Open MPI's rules pick (t2hx.flowsim.collectives) at
  every size of the sweep, times IMB's repetition count at that size (EmDL: ``iter``);
* IMB Multi-PingPong: pairs (2g, 2g+1), both ways, every size times its repetitions;
* proxy apps and x500: the iterations of the code's calibrated model for the job's input
  (t2hx.flowsim.appmodel), its skeleton without an input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from t2hx.flowsim import collectives, imbjobs
from t2hx.flowsim.patterns import MIB, mpigraph_phases, ring_segments

Traffic = Callable[[int, dict[str, Any], str, str | None], np.ndarray]
FLOAT = 4                       # bytes of baidu-allreduce's and IMB's reduced elements


def _matrix(n: int, phases) -> np.ndarray:
    out = np.zeros((n, n))
    for ph in phases:
        np.add.at(out, (ph.src, ph.dst), ph.size)
    return out


def _sweep(inp: dict[str, Any]) -> list[int]:
    lo, hi = (int(x) for x in str(inp.get("msglog", "0:22")).split(":"))
    return imbjobs.msglog_sizes(lo, hi)


def mpigraph(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    size, window = int(inp.get("size", MIB)), int(inp.get("window", 10))
    return _matrix(n, mpigraph_phases(n, size, window)) * int(inp.get("iters", 10))


def ebb(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    # Each round pairs a rank with one of the n-1 others at random: in expectation every
    # ordered pair carries rounds / (n-1) exchanges.
    out = np.full((n, n), int(inp.get("size", MIB)) * int(inp.get("rounds", 100)) / (n - 1))
    np.fill_diagonal(out, 0.0)
    return out


def ring_allreduce(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    from t2hx.simrequest import DEFAULT_ELEMENTS

    sizes = [int(e) for e in str(inp.get("elements", DEFAULT_ELEMENTS)).split(",")]
    per_call = sum(2 * (n - 1) * max(ring_segments(e, n)) * FLOAT for e in sizes)
    out = np.zeros((n, n))
    out[np.arange(n), (np.arange(n) + 1) % n] = per_call
    return out


def mupp(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    volume = sum(s * imbjobs.repetitions(s) for s in _sweep(inp))
    out = np.zeros((n, n))
    a = np.arange(0, n - n % 2, 2)
    out[a, a + 1] = out[a + 1, a] = volume
    return out


def _collective(name: str, n: int, inp: dict[str, Any], rules: str,
                reps: Callable[[int], int]) -> np.ndarray:
    out = np.zeros((n, n))
    for size in _sweep(inp):
        _, phases = collectives.phases(name, n, size, rules=rules)
        out += _matrix(n, phases) * reps(size)
    return out


def imb(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    if not variant:
        raise ValueError("an IMB collective's traffic needs its variant (imb-<collective>)")
    return _collective(variant, n, inp, rules, imbjobs.repetitions)


def emdl(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
    iters = int(inp.get("iter", 10))
    return _collective("Allreduce", n, inp, rules, lambda size: iters)


def app(key: str) -> Traffic:
    """A code's run as the simulator runs it: its calibrated model's iterations for the job's
    input (t2hx/flowsim/appmodel.py), or its skeleton without one."""
    def run(n: int, inp: dict[str, Any], rules: str, variant: str | None) -> np.ndarray:
        from t2hx.benchmarks import app as code_of
        from t2hx.flowsim.apps import iteration_phases, iterations_of

        code = code_of(key)
        given = inp or None
        phases = iteration_phases(code, n, 1.0, 4e9, inp=given, rules=rules)
        return _matrix(n, phases) * iterations_of(code, given)
    return run


#: Derivations of the network benchmarks by study key; codes the model runs use their skeleton.
NETWORK: dict[str, Traffic] = {"mpigraph": mpigraph, "ebb": ebb, "ring-allreduce": ring_allreduce,
                               "mupp": mupp, "imb": imb, "emdl": emdl}


def derived_traffic(benchmark: str, ranks: int, inp: dict[str, Any] | None = None,
                    rules: str | None = None) -> np.ndarray | None:
    """Bytes rank -> rank of one run of ``benchmark`` (a check's name: ``imb-bcast``) on
    ``ranks`` ranks with its study input, collectives as ``rules`` pick them (the conf's
    ``model.collectives``; None: the default); None when the benchmark has no derivation."""
    from t2hx import benchmarks

    bench = benchmarks.BY_KEY.get(benchmark)
    variant = None
    if bench is None:                   # a variant's check name, imb-bcast
        key, _, low = benchmark.partition("-")
        bench = benchmarks.BY_KEY.get(key)
        names = {v.lower(): v for v in (bench.variants if bench else ())}
        if bench is None or low not in names:
            return None
        variant = names[low]
    if ranks < 2:
        return None
    derive = NETWORK.get(bench.key) or (app(bench.key) if bench.app else None)
    if derive is None:
        return None
    return derive(ranks, dict(inp or {}), rules or collectives.DEFAULT_RULES, variant)
