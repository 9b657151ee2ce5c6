"""Inter-job interference as the packet engine sees it, for the fluid engines' concurrent
jobs (capacity runs, seed 003's workloads).

Max-min sharing slows a job only by the bandwidth other jobs take on its links; in a
lossless credit-based fabric a job also waits behind other jobs' packets in shared VL
buffers (head-of-line blocking, congestion trees), and, with the HCA's host interface, the
hot flows max-min lets run at link rate are slower. The packet engine simulates both, but
not for hours of a 664-node mix, so the fluid engines' per-job slowdown is corrected by a
term fitted to packet-engine runs of smaller mixes (bench/interference.py, never to a
paper):

    slowdown = 1 + fluid_gain · (fluid slowdown − 1) + exposure · x

where the fluid slowdown is the job's mean iteration time in the mix over its time alone
(fluid), and ``x`` its exposure: the share of its alone iteration spent communicating
times the share of its bytes (per link crossed) on links another job also uses.
docs/modelling.md#interference gives the fit, its error against the packet engine and
when to refit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from t2hx.flowsim.fluid import Comm, Compute, Job
from t2hx.flowsim.network import Network


@dataclass(frozen=True)
class Term:
    fluid_gain: float
    exposure: float

    @classmethod
    def of(cls, model: dict) -> Term | None:
        """The conf's ``model.interference`` (None: off)."""
        spec = model["interference"]
        if spec["mode"] == "off":
            return None
        return cls(float(spec["fluid_gain"]), float(spec["exposure"]))

    @property
    def label(self) -> str:
        return f"packet-fit:{self.fluid_gain:g},{self.exposure:g}"

    def slowdown(self, fluid: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The packet-fitted slowdown (never below 1: a neighbour does not speed a job up)."""
        return np.maximum(1.0, 1.0 + self.fluid_gain * (fluid - 1.0) + self.exposure * x)


def link_bytes(net: Network, job: Job) -> np.ndarray:
    """Bytes one iteration of ``job`` puts on each directed link (flow-model paths)."""
    load = np.zeros(len(net.capacity))
    for step in job.steps:
        if not isinstance(step, Comm) or len(step.src) == 0:
            continue
        size = np.broadcast_to(np.asarray(step.size, np.float64), step.src.shape) * \
            max(int(step.count), 1)
        paths, _ = net.paths(step.src, step.dst, size)
        flat = np.repeat(size, paths.shape[1])
        links = paths.ravel()
        ok = links >= 0
        np.add.at(load, links[ok], flat[ok])
    return load


def compute_s(job: Job) -> float:
    return float(sum(s.seconds for s in job.steps if isinstance(s, Compute)))


def exposure(net: Network, jobs: list[Job], alone_step: np.ndarray) -> np.ndarray:
    """Per job: comm share of its alone iteration × share of its link bytes on links that
    another job of the mix also loads."""
    loads = np.array([link_bytes(net, job) for job in jobs])
    used = loads > 0
    x = np.zeros(len(jobs))
    for j, job in enumerate(jobs):
        total = loads[j].sum()
        if total == 0 or not np.isfinite(alone_step[j]) or alone_step[j] <= 0:
            continue
        others = used.sum(axis=0) - used[j] > 0
        comm = max(0.0, 1.0 - compute_s(job) / alone_step[j])
        x[j] = comm * loads[j][others].sum() / total
    return x


def stretch(job: Job, factor: float, until: float = np.inf) -> None:
    """Every iteration of ``job`` ``factor`` times as long (ends from its start). A job
    made faster also finishes, by ``until``, the iterations the fluid run cut at its window:
    at its mean pace in the mix."""
    ends = [job.start + (e - job.start) * factor for e in job.ends]
    if factor < 1 and ends and np.isfinite(until):
        pace = (ends[-1] - job.start) / len(ends)
        more = min(int((until - ends[-1]) / pace), job.repeat - len(ends))
        ends += [ends[-1] + pace * (k + 1) for k in range(max(more, 0))]
    job.ends = ends


def correct(net: Network, jobs: list[Job], alone: np.ndarray, window: float,
            term: Term | None) -> np.ndarray:
    """Stretch the iterations of every job of a fluid mix so that its slowdown over
    ``alone`` (seconds per iteration, fluid) is the packet-fitted one; the factors. A job
    that finished no iteration in ``window`` keeps its fluid times (no slowdown measured)."""
    factors = np.ones(len(jobs))
    if term is None:
        return factors
    mix = np.array([_mean(job, window) for job in jobs])
    fluid = mix / alone
    x = exposure(net, jobs, alone)
    ok = np.isfinite(fluid) & (fluid > 0)
    factors[ok] = term.slowdown(fluid[ok], x[ok]) / fluid[ok]
    for job, f in zip(jobs, factors):
        stretch(job, float(f), window)
    return factors


def _mean(job: Job, window: float) -> float:
    done = [e for e in job.ends if e <= window]
    return (done[-1] - job.start) / len(done) if done else np.nan
