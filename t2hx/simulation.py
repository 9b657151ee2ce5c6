"""The simulator's entry point: one simulated run of a request.

A run (:func:`simulate`): the request's benchmark (t2hx/benchmarks/) runs on the network of
the network model the request names (t2hx/flowsim/models.py) and returns typed numbers; a
deterministic case is simulated once and its numbers kept in the run cache
(t2hx/flowsim/runcache.py); every repetition multiplies them by its own seeded noise
factor with the benchmark's noise rule, then prints them in the upstream text format after
the ``# t2hx-simulated:`` header (t2hx/wire.py, docs/formats.md#simulated-output).

The flow model is imported only when a run simulates, so the CLI stays fast.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from t2hx import benchmarks, wire
from t2hx.benchmarks.base import Benchmark
from t2hx.benchmarks.results import decode, encode
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim.noise import Noise
    from t2hx.flowsim.runcache import RunCache


@dataclass(frozen=True)
class CaseRun:
    """A simulated case before noise: its header pairs and typed numbers (JSON)."""
    header: dict[str, Any]
    result: dict[str, Any]


def simulate(request: SimRequest, noise: Noise, cache: RunCache | None) -> str:
    """The output of one run: header line (with this run's marks) and upstream text."""
    bench = benchmarks.BY_KEY[request.benchmark]
    if cache is None:
        case, repeat_of = simulate_case(request, bench), None
    else:
        value, repeat_of = cache.get_or_make(cache_key(request, bench), request.repetition,
                                             lambda: vars(simulate_case(request, bench)))
        case = CaseRun(**value)
    factor = noise.factor(noise_key(request, bench), request.repetition)
    result = decode(bench.workload.result, case.result)
    if factor != 1.0:
        result = bench.workload.perturb(result, factor)
    marks = run_marks(request.repetition, noise, factor, cache is not None, repeat_of)
    return wire.sim_header({**case.header, **marks}) + bench.workload.render(result)


def simulate_case(request: SimRequest, bench: Benchmark) -> CaseRun:
    """Simulate the request's case: noiseless numbers and the header that describes them."""
    from t2hx.flowsim.models import network_model

    chosen = network_model(request.model)
    net = chosen.open(request)
    result = bench.workload.run(request, net)
    header = {"fabric": net.label, "routing": net.engine, "hostfile": net.hostfile,
              "model": chosen.header, **bench.workload.header(request)}
    return CaseRun(header, encode(result))


def cache_key(request: SimRequest, bench: Benchmark) -> str:
    """The case's run-cache key: by content, the same on every machine and checkout. The
    cached header names the system and hostfile as given: they are part of the key."""
    from t2hx.conf import system_path
    from t2hx.flowsim import runcache

    net = request.network
    inputs = runcache.case_inputs(
        benchmark=bench.name(request.variant), seeded=bench.workload.seeded,
        system_file=system_path(request.system), plane=request.plane,
        engine=request.routing, lmc=net.lmc, hostfile=request.hostfile,
        routing_dir=net.routing_dir, routing_input=net.routing_input,
        options=request.key_options(), seed=request.seed, network_model=request.model)
    return runcache.digest({"case": runcache.digest(inputs), "code": runcache.code_version(request.model),
                            "site_code": site_code(bench),
                            "names": [request.system, request.hostfile]})


def site_code(bench: Benchmark) -> str | None:
    """A benchmark module of a site's package is model code too, by its content (t2hx's
    own modules are in the run cache's code version already)."""
    from t2hx.flowsim.runcache import file_digest

    if bench.module.startswith(f"{benchmarks.__name__}."):
        return None
    return file_digest(sys.modules[bench.module].__file__)


def noise_key(request: SimRequest, bench: Benchmark) -> str:
    """What a run's noise draw depends on: the benchmark, its options and its rank count,
    not the fabric, routing or placement. Every combo's repetition k of a case sees the same
    machine state (common random numbers): repetitions spread as on a real machine, while
    the differences between combos stay the fabric's (docs/modelling.md#run-to-run-noise)."""
    from t2hx.flowsim import runcache

    lines = Path(request.hostfile).read_text().splitlines()
    ranks = sum(1 for line in lines if line.split("#", 1)[0].strip())
    return runcache.digest({"benchmark": bench.name(request.variant),
                            "options": request.key_options(), "ranks": ranks})


def run_marks(repetition: int, noise: Noise, factor: float, cached: bool,
              repeat_of: int | None) -> dict[str, object]:
    """What the first line adds about this run (docs/formats.md#simulated-output)."""
    marks: dict[str, object] = {
        "repetition": repetition,
        "cache": "off" if not cached else "miss" if repeat_of is None else "hit",
        "noise": noise.label()}
    if repeat_of is not None:
        marks["repeat_of"] = repeat_of
    if noise.on:
        marks["noise_factor"] = f"{factor:.6f}"
    return marks


# --- the capacity mix -------------------------------------------------------------------------
