"""Multi-job workloads (seed 003 §6): several applications at once on disjoint node sets,
each repeating its time step, in the event-driven fluid model; and each job alone on the
same nodes, so the difference is the inter-job interference.

A job is one application's model iteration (:func:`t2hx.flowsim.apps.iteration_phases`: its
compute, divided by the workload's compute scale, then its communication) repeated until
the simulated window closes. Per job we report the steps finished in the window and the
mean time per step, in the workload and alone; seed 003 Fig 9a is the former, Fig 9b the
ratio, Fig 10 sums each job's normalised step rate (docs/fattree-configs.md#the-study).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from t2hx.flowsim import apps, interference
from t2hx.flowsim.fluid import Job, phase_steps
from t2hx.flowsim.network import Network
from t2hx.wire import WorkloadJob

#: Steps a job may repeat: the window, not this, ends it.
MAX_STEPS = 10 ** 9

Engine = Callable[..., list[Job]]


def step_job(net: Network, app: apps.App, ranks: np.ndarray, scale: float, inp: dict,
             node: dict, name: str) -> Job:
    """One application's time step, repeated: the calibrated model when the app has one."""
    phases = apps.iteration_phases(app, len(ranks), scale, net.loggp.reduce_rate, inp, node,
                                   rules=net.loggp.collectives)
    return Job(name, phase_steps(np.asarray(ranks, dtype=np.int64), phases), MAX_STEPS)


def mean_step(job: Job, window: float) -> tuple[int, float]:
    ends = [e for e in job.ends if e <= window]
    return len(ends), (ends[-1] / len(ends) if ends else math.nan)


def run_workload(net: Network, apps_of: Sequence[apps.App], spans: list[np.ndarray],
                 inputs: list[dict], scale: float, nodes: list[dict], window: float,
                 engine: Engine, term: interference.Term | None = None) -> list[WorkloadJob]:
    """All jobs together for ``window`` simulated seconds, then each alone: per job the
    steps finished in the window and the mean seconds per step (nan: none finished); with
    ``term``, each job's slowdown in the mix is the packet-fitted one
    (t2hx/flowsim/interference.py). ``nodes``: the node rates a rank of each job computes
    with."""
    def build() -> list[Job]:
        return [step_job(net, app, ranks, scale, inp, node, f"job{j}-{app.key}")
                for j, (app, ranks, inp, node) in enumerate(zip(apps_of, spans, inputs, nodes))]

    together = engine(net, build(), until=window)
    alone = [engine(net, [job], until=window)[0] for job in build()]
    interference.correct(net, together, np.array([mean_step(a, window)[1] for a in alone]),
                         window, term)
    out = []
    for j, job in enumerate(together):
        steps, step_s = mean_step(job, window)
        alone_steps, alone_s = mean_step(alone[j], window)
        used = len(set(net.rank_node[spans[j]].tolist()))
        out.append(WorkloadJob(j, apps_of[j].key, used, steps, step_s, alone_steps, alone_s))
    return out
