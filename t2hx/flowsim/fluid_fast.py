"""The fast fluid engine for capacity runs: the exact engine (:func:`t2hx.flowsim.fluid.
run_jobs`, the reference) with two savings that keep its semantics.

* **Fused steps.** A run of consecutive steps that never enter the fluid sharing (compute,
  and Comm steps whose messages are all short, see ``SMALL_BYTES``) only sets the job's
  timer; it becomes one timer of the summed duration, so the event loop visits it once.
* **Cached rate solutions.** Max-min rates depend only on which flows are in flight, not
  on their remaining bytes; every solution is kept under the set of in-flight flow ids
  (each routed message of a step has a fixed id), so a recurring set is never re-solved.

Results differ from the reference only by the order of floating-point additions;
``tests/test_capacity_engine.py`` and ``bench/capacity.py`` check the agreement.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from t2hx.flowsim.fluid import SMALL_BYTES, Compute, Job, _State
from t2hx.flowsim.maxmin import maxmin_rates
from t2hx.flowsim.network import Network

#: Rate solutions kept (least recently used dropped): bounds memory on long windows.
CACHE_SIZE = 50_000


def run_jobs_fast(net: Network, jobs: list[Job], until: float = np.inf,
                  small_bytes: int = SMALL_BYTES) -> list[Job]:
    """Same contract as :func:`t2hx.flowsim.fluid.run_jobs` (fills each ``job.ends``)."""
    fused = [_fused(net, job, small_bytes) for job in jobs]
    state = _CachedState(net, fused)
    state.small = small_bytes
    state.loop(until)
    for job, f in zip(jobs, fused):
        job.ends = f.ends
    return jobs


def _fused(net: Network, job: Job, small_bytes: int) -> Job:
    """The job with every run of fluid-free steps replaced by one Compute."""
    probe = _State(net, [])
    probe.small = small_bytes
    steps: list = []
    pending = 0.0
    for step in job.steps:
        if isinstance(step, Compute):
            pending += step.seconds
            continue
        plan = probe._plan(step)
        if plan.paths is None:
            pending += plan.alone
            continue
        if pending > 0:
            steps.append(Compute(pending))
            pending = 0.0
        steps.append(step)
    if pending > 0 or not steps:
        steps.append(Compute(pending))
    return Job(job.name, steps, job.repeat, job.start)


class _CachedState(_State):
    def __init__(self, net: Network, jobs: list[Job]) -> None:
        super().__init__(net, jobs)
        self.cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self.hits = self.misses = 0

    def rates(self) -> np.ndarray:
        order = np.argsort(self.fid, kind="stable")
        key = self.fid[order].tobytes()
        hit = self.cache.get(key)
        if hit is None:
            self.misses += 1
            hit = maxmin_rates(self.paths[order], self.net.capacity)
            self.cache[key] = hit
            if len(self.cache) > CACHE_SIZE:
                self.cache.popitem(last=False)
        else:
            self.hits += 1
            self.cache.move_to_end(key)
        rate = np.empty_like(hit)
        rate[order] = hit
        return rate
