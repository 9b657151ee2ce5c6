"""Several jobs at once on one simulated plane: seed 000's capacity mix (every app on its own
nodes, rerun back to back until the window closes) and seed 003's multi-job workloads.
Each job is its benchmark module's fluid job (t2hx/benchmarks/), run by one of the fluid
solvers (t2hx/flowsim/fluid.py, the exact reference, or fluid_fast.py, its compiled twin);
the output is the records checks/capacity.py and checks/workload.py read (t2hx/wire.py).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from t2hx import benchmarks, wire
from t2hx.benchmarks.base import Benchmark
from t2hx.errors import WorkloadError

if TYPE_CHECKING:
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.overhead import RunOverhead
    from t2hx.flowsim.network import Network
    from t2hx.study import Study

REPEATS = 100000            # "thousands of runs": more than any window can finish

#: Fluid solvers of the capacity model (docs/modelling.md, capacity runs).
FLUID_SOLVERS = {"fast": ("t2hx.flowsim.fluid_fast", "run_jobs_fast"),
                 "exact": ("t2hx.flowsim.fluid", "run_jobs")}


def fluid_solver(name: str) -> Callable:
    module, func = FLUID_SOLVERS[name]
    return getattr(importlib.import_module(module), func)


def capacity_jobs(net: Network, spans: dict[str, np.ndarray], study: Study, node: dict,
                  repeat: int, overhead: RunOverhead | None = None) -> list[Job]:
    """The capacity mix's fluid jobs: each app's benchmark on its ranks with the study's
    input at its node count (the input the real driver runs, checks/capacity.py; calibrated
    models, docs/modelling.md#capacity-mode) on the conf's node; with ``overhead``, each run
    starts with its launch and the code's set-up and teardown (docs/modelling.md#run-overheads)."""
    return [job for job, _ in _jobs_and_parts(net, spans, study, node, repeat, overhead)]


def _jobs_and_parts(net: Network, spans: dict[str, np.ndarray], study: Study, node: dict,
                    repeat: int, overhead: RunOverhead | None
                    ) -> list[tuple[Job, dict[str, float]]]:
    """Each app's job and the seconds of its launch and set-up + teardown."""
    from t2hx.flowsim.apps import compute_seconds
    from t2hx.flowsim.fluid import Compute

    out = []
    for app, ranks in spans.items():
        name = study.capacity_benchmark(app)
        build = fluid_job_of(benchmarks.get(name, field=f"capacity.apps.{app}"))
        inp = study.input(name, len(ranks)) if name in study.catalog else None
        job = build(net, ranks, repeat, inp, node)
        parts = {"launch": 0.0, "setup": 0.0}
        if overhead is not None:
            parts = {"launch": overhead.launch(len(ranks)),
                     "setup": overhead.setup_seconds(name, compute_seconds(job.steps))}
            job.steps = [Compute(parts["launch"] + parts["setup"]), *job.steps]
        out.append((job, parts))
    return out


def fluid_job_of(bench: Benchmark) -> Callable[..., Job]:
    if bench.workload.fluid_job is None:
        raise WorkloadError(f"'{bench.key}' has no fluid job, so it cannot be a capacity app",
                            field=f"capacity.apps.{bench.key}",
                            fix="use a proxy app, an x500 code, mupp or emdl")
    return bench.workload.fluid_job


def capacity_text(system: str, plane: str, routing: str, capacity: Path, window: float,
                  work: str, routing_dir: str | None, lmc: int | None, solver: str) -> str:
    """All capacity apps at once on their node sets (``capacity.json`` of
    checks/capacity.py) until the simulated window closes: each app's run length alone (its
    parts), the records the real driver prints (finished runs, the run the window cut),
    then the window's end. Each app's fluid job comes from its benchmark module, so a new
    capacity app needs no change here."""
    from t2hx.flowsim import interference
    from t2hx.flowsim.appmodel import system_node
    from t2hx.flowsim.overhead import RunOverhead
    from t2hx.flowsim.network import open_network
    from t2hx.study import load_study

    jobs_in = json.loads(Path(capacity).read_text())
    for app, job in jobs_in.items():          # an unknown app: one line naming the file
        benchmarks.get(job.get("benchmark", app), field=f"{capacity}: {app}")
    hosts: list[str] = []
    spans = {}
    for app, job in jobs_in.items():
        mine = Path(job["hostfile"]).read_text().split()
        spans[app] = np.arange(len(hosts), len(hosts) + len(mine))
        hosts += mine
    net = open_network(system, plane, routing, hosts=hosts, work=work, dumps=routing_dir,
                       lmc=lmc)
    study, node = load_study(), system_node(system)
    overhead = RunOverhead.of(net.system.model)
    jobs = capacity_jobs(net, spans, study, node, REPEATS, overhead)
    simulate = fluid_solver(solver)
    simulate(net, jobs, until=window)
    # Each app alone on its nodes, one run: the run length it would have without the mix
    # (reported), and the slowdown the interference term corrects.
    made = _jobs_and_parts(net, spans, study, node, 1, overhead)
    alone = np.array([_first_run(simulate(net, [job], until=window)[0]) for job, _ in made])
    term = interference.Term.of(net.system.model)
    if term is not None:
        interference.correct(net, jobs, alone, window, term)
    out = [wire.sim_header({"system": system, "plane": plane, "routing": routing,
                            "window": f"{window:g}", "engine": solver,
                            "interference": term.label if term else "off",
                            "run_overhead": overhead.label if overhead else "off"},
                           kind="capacity")]
    for app, (_, parts), whole in zip(spans, made, alone):
        out.append(wire.capacity_length_line(
            app=app, nodes=len(spans[app]), launch=f"{parts['launch']:.3f}",
            setup=f"{parts['setup']:.3f}",
            solve=f"{whole - parts['launch'] - parts['setup']:.3f}", alone=f"{whole:.3f}")
            + "\n")
    for app, job in zip(spans, jobs):
        out += run_lines(app, job.ends, window)
    return "".join(out) + wire.CAPACITY_CLOSED + "\n"


def run_lines(app: str, ends: list[float], window: float) -> list[str]:
    """The records the real driver prints for one app (checks/capacity.py): each run that
    ended by the window's end is finished, the one the window ended is cut; only finished
    runs count."""
    out, start = [], 0.0
    for run, end in enumerate(ends):
        if end > window:
            break
        out.append(wire.capacity_line("finished", app=app, run=run, start=f"{start:.3f}",
                                      end=f"{end:.3f}") + "\n")
        start = end
    else:
        run = len(ends)
    if start < window:
        out.append(wire.capacity_line("cut", app=app, run=run, start=f"{start:.3f}",
                                      end=f"{window:.3f}") + "\n")
    return out


def _first_run(job: Job) -> float:
    return job.ends[0] - job.start if job.ends else float("nan")


def workload_text(system_name: str, plane: str, routing: str, workload: int,
                  window: float | None, work: str, solver: str,
                  compute_scale: float | None = None) -> str:
    """One multi-job workload of the study (seed 003 §6): its jobs drawn from (seed, k) alone,
    so the same on every configuration; one record per job, then the window's end.
    ``compute_scale``: the case's combo's (default: the study's ``workloads.compute_scale``,
    else 1)."""
    from t2hx.conf import load_system, system_path
    from t2hx.flowsim import interference, multijob
    from t2hx.flowsim.appmodel import rank_share, system_node
    from t2hx.flowsim.network import open_network
    from t2hx.placement.jobs import draw
    from t2hx.study import load_study, workload_window

    study = load_study()
    system = load_system(system_path(system_name))
    apps, sets = draw(study, system, workload)
    spec = study.workloads
    assert spec is not None, "draw() raises for a study without workloads"
    scale = float(compute_scale if compute_scale is not None else
                  spec.get("compute_scale") or 1.0)
    window = window if window is not None else workload_window(spec, scale)
    # Each job at its app's ranks per node (the study's, or the app's own where its
    # stand-in cannot hold the paper's problem), a node's ranks in a block
    per_node = [study.ranks_per_node_of(app) for app in apps]
    hosts = [h for s, rpn in zip(sets, per_node) for h in s for _ in range(rpn)]
    net = open_network(system, plane, routing, hosts=hosts, work=work)
    spans, at = [], 0
    for s, rpn in zip(sets, per_node):
        spans.append(np.arange(at, at + len(s) * rpn))
        at += len(s) * rpn
    inputs = [study.input(app, len(s)) for app, s in zip(apps, sets)]
    codes = [benchmarks.app(app, field="workloads.apps") for app in apps]
    term = interference.Term.of(system.model)
    node = system_node(system_name)
    results = multijob.run_workload(net, codes, spans, inputs, scale,
                                    [rank_share(node, rpn) for rpn in per_node], window,
                                    fluid_solver(solver), term)
    head = wire.sim_header({
        "system": system.name, "plane": plane, "routing": routing, "workload": workload,
        "window": f"{window:g}", "compute_scale": f"{scale:g}",
        "engine": solver, "interference": term.label if term else "off"}, kind="workload")
    return head + "".join(wire.workload_line(r) + "\n" for r in results) + \
        wire.WORKLOAD_CLOSED + "\n"
