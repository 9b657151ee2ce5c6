"""The fast fluid engine for capacity runs: the exact engine's semantics (:func:`t2hx.flowsim.
fluid.run_jobs`, the reference) in a compiled event loop (``kernel/fluidk.c``, built by
``run/setup`` with the system C compiler and loaded with ctypes).

Savings that keep the semantics (docs/modelling.md#capacity-mode):

* **Fused steps.** A run of consecutive steps that never enter the fluid sharing (compute,
  and Comm steps whose messages are all short, see ``SMALL_BYTES``) only sets the job's
  timer; it becomes one timer of the summed duration.
* **Partial re-solves.** When flows end, every flow slower than the slowest of them keeps
  its rate (progressive filling never reached their links' saturation with the ended
  flows' help), so only the flows at or above that level are re-solved; new flows get a
  guessed level that the result must confirm.
* **Rates per component.** Otherwise, flows that share no link do not interact, so max-min
  is solved per connected component of the in-flight flows (jobs on disjoint nodes mostly
  form their own components) ...
* **Cached rate solutions.** ... and every component's solution is kept under its set of
  flow ids (each routed message of a step has a fixed id): a recurring set — a job's next
  iteration among the same co-running flows — is never re-solved.

Results differ from the reference only by the order of floating-point additions;
``tests/test_capacity_engine.py`` and ``bench/capacity.py`` check the agreement.
"""

from __future__ import annotations

import ctypes

import numpy as np

from t2hx.flowsim import ckernel
from t2hx.flowsim.fluid import SMALL_BYTES, Comm, Compute, Job, Plan, State
from t2hx.flowsim.network import Network


#: Cached (flow, rate) pairs (16 bytes each); the cache is emptied when full.
POOL_PAIRS = 24 << 20

#: Most end times a job's first buffer holds (8 MiB); run_jobs_fast grows it if needed.
MAX_ENDS = 1 << 20

#: The kernel's counters, in its order (t2hx_fluid_run's stats).
COUNTERS = ("hits", "misses", "events", "flow_visits", "set_hits", "rounds", "solved_flows",
            "solved_links", "partial", "partial_flows", "partial_fallbacks")

def _kernel() -> ctypes.CDLL:
    return ckernel.load("libfluidk.so", "t2hx_fluid_run", "the fast fluid engine")


def run_jobs_fast(net: Network, jobs: list[Job], until: float = np.inf,
                  small_bytes: int = SMALL_BYTES, stats: dict | None = None,
                  verify: bool = False) -> list[Job]:
    """Same contract as :func:`t2hx.flowsim.fluid.run_jobs` (fills each ``job.ends``).
    ``stats`` (optional) receives the kernel's event and cache counters; with ``verify``
    (slow, for tests) also ``verify_max_rel_diff``: the rates after every event checked
    against a full solve of all flows in flight."""
    probe = State(net, [])
    probe.small = small_bytes
    flat = _Flat(probe, [_fused(probe, job) for job in jobs])
    # Room for every end time the window can hold (a rerun with more room would simulate the
    # window again): a run takes at least its compute plus each step's largest message at
    # the fastest link's rate.
    guess = [min(job.repeat, flat.runs_bound(j, until, float(np.max(net.capacity))))
             for j, job in enumerate(jobs)]
    while True:
        ends, counts, counters = flat.run(net, jobs, until, guess, verify)
        if all(c <= g for c, g in zip(counts, guess)):
            break
        guess = [max(g, min(job.repeat, 2 * c)) for g, c, job in zip(guess, counts, jobs)]
    for job, e, c in zip(jobs, ends, counts):
        job.ends = [float(x) for x in e[:c]]
    if stats is not None:
        stats.update(zip(COUNTERS + ("verify_max_rel_diff",), counters))
    return jobs


def _fused(probe: State, job: Job) -> list:
    """The job's steps with every run of fluid-free steps replaced by one Compute."""
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
    return steps


def _c(a: np.ndarray, kind: type) -> ctypes._Pointer:
    return a.ctypes.data_as(ctypes.POINTER(kind))


class _Flat:
    """The jobs as the flat arrays the kernel reads: every distinct Comm step is a plan (a
    block of fluid messages with consecutive flow ids), every step a plan or a duration."""

    def __init__(self, probe: State, steps: list[list]) -> None:
        plans: dict[int, int] = {}
        blocks: list[Plan] = []
        paths: list[np.ndarray] = []
        step_plan, step_sec, step_off = [], [], [0]
        self.inflight = 0
        for job_steps in steps:
            biggest = 0
            for step in job_steps:
                if isinstance(step, Comm):
                    plan = probe._plan(step)
                    if id(step) not in plans:
                        assert plan.paths is not None, "_fused left only steps with fluid messages"
                        plans[id(step)] = len(blocks)
                        blocks.append(plan)
                        paths.append(plan.paths)
                    step_plan.append(plans[id(step)])
                    step_sec.append(0.0)
                    biggest = max(biggest, len(plan.size))
                else:
                    step_plan.append(-1)
                    step_sec.append(float(step.seconds))
            step_off.append(len(step_plan))
            self.inflight += biggest
        self.width = max([p.shape[1] for p in paths] + [1])
        self.paths = np.full((sum(len(b.size) for b in blocks), self.width), -1, np.int32)
        at = 0
        for b, p in zip(blocks, paths):
            self.paths[at:at + len(b.size), :p.shape[1]] = p
            at += len(b.size)
        self.size = np.concatenate([b.size for b in blocks] + [np.zeros(0)])
        self.lat = np.concatenate([b.latency for b in blocks] + [np.zeros(0)])
        self.plan_off = np.cumsum([0] + [len(b.size) for b in blocks]).astype(np.int64)
        self.step_off = np.array(step_off, np.int64)
        self.step_plan = np.array(step_plan, np.int64)
        self.step_sec = np.array(step_sec, np.float64)

    def runs_bound(self, j: int, until: float, fastest: float) -> int:
        """More runs than job j can finish by ``until`` (4096 without a window)."""
        steps = slice(self.step_off[j], self.step_off[j + 1])
        plans = self.step_plan[steps]
        least = float(self.step_sec[steps].sum()) + sum(
            float(self.size[self.plan_off[p]:self.plan_off[p + 1]].max()) / fastest
            for p in plans[plans >= 0])
        if not np.isfinite(until) or least <= 0:
            return 4096
        # capped: a job of tiny steps gets a buffer that grows (run_jobs_fast's loop) instead
        # of one sized for a bound far above what it finishes
        return min(int(until / least) + 2, MAX_ENDS)

    def run(self, net: Network, jobs: list[Job], until: float,
            cap: list[int], verify: bool = False) -> tuple[list, list[int], list]:
        """(end times per job, runs finished per job, the kernel's counters then the verify
        difference)."""
        lib = _kernel()
        capacity = np.ascontiguousarray(net.capacity, dtype=np.float64)
        repeat = np.array([j.repeat for j in jobs], np.int64)
        start = np.array([j.start for j in jobs], np.float64)
        ends_cap = np.array(cap, np.int64)
        ends_off = np.concatenate([[0], np.cumsum(ends_cap)[:-1]]).astype(np.int64)
        ends = np.zeros(int(ends_cap.sum()) + 1)
        nends = np.zeros(len(jobs), np.int64)
        counters = np.zeros(len(COUNTERS), np.int64)
        diff = ctypes.c_double(0.0)
        i64, f64 = ctypes.c_int64, ctypes.c_double
        rc = lib.t2hx_fluid_run(
            _c(self.paths, ctypes.c_int32), ctypes.c_int(self.width), _c(self.size, f64),
            _c(self.lat, f64), i64(len(self.size)), _c(self.plan_off, i64),
            _c(self.step_off, i64), _c(self.step_plan, i64), _c(self.step_sec, f64),
            ctypes.c_int(len(jobs)), _c(repeat, i64), _c(start, f64), _c(capacity, f64),
            ctypes.c_int(len(capacity)), f64(until), i64(self.inflight), i64(POOL_PAIRS),
            _c(ends, f64), _c(ends_off, i64), _c(ends_cap, i64), _c(nends, i64),
            _c(counters, i64), ctypes.c_int(int(verify)), ctypes.byref(diff))
        if rc != 0:
            raise MemoryError("fast fluid engine: the kernel could not allocate its state")
        per_job = [ends[o:o + c] for o, c in zip(ends_off, ends_cap)]
        return per_job, [int(n) for n in nends], [int(x) for x in counters] + [diff.value]
