"""Run-to-run noise of simulated repetitions (docs/modelling.md#run-to-run-noise).

The flow model is deterministic: the same case gives the same numbers every time. A real
machine does not, so with the study's ``noise:`` on, every repetition's reported numbers are
multiplied by one factor drawn for that run: times by f, rates by 1/f, with the study's
coefficient of variation for the benchmark's registry group (network, app, x500), which comes
from repeated real runs (bench/noise.py). ``slowdown`` (the study's choice): f = exp(s|Z|)
>= 1, because the model's run is the undisturbed best case and noise can only slow a real run
down (a noisy bandwidth must not exceed the link rate); ``lognormal``: mean 1, either way.

Why one factor per run, on the reported numbers: the calibration data are end-to-end
results of whole runs (a solver's walltime, an IMB row); a factor on each of them
reproduces the measured spread directly, while noise on every compute phase or link would
average out over a run's many phases and need a per-phase spread nobody measured. It also
keeps the deterministic simulation reusable (t2hx/flowsim/runcache.py): a repetition is
the cached noiseless output with its own factor applied.

Seeded: f is a pure function of (seed, key, repetition), so a rerun or a resumed campaign
reproduces every number. ``t2hx simulate`` keys it by the benchmark, its options and rank
count but not the fabric, routing or placement (common random numbers): repetition k of a
case sees the same machine state in every combo, so the combos' differences stay the
fabric's while the repetitions spread. The factor applies to a run's typed numbers before
they are printed: each benchmark module's noise rule scales its times and rates
(t2hx/benchmarks/base.py ``Workload.perturb``); this module imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass

MODELS = ("none", "lognormal", "slowdown")


@dataclass(frozen=True)
class Noise:
    model: str            # one of MODELS
    cv: float             # coefficient of variation of the factor
    seed: int

    @property
    def on(self) -> bool:
        return self.model != "none" and self.cv > 0

    def factor(self, case: str, repetition: int) -> float:
        """The run's factor, with coefficient of variation ``cv``; 1 when off."""
        if not self.on:
            return 1.0
        digest = hashlib.sha256(f"{self.seed}|{case}|{repetition}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:16], "big"))
        if self.model == "slowdown":
            return math.exp(slowdown_sigma(self.cv) * abs(rng.gauss(0.0, 1.0)))
        sigma = math.sqrt(math.log1p(self.cv ** 2))
        return rng.lognormvariate(-sigma ** 2 / 2, sigma)

    def label(self) -> str:
        return f"{self.model}:cv={self.cv:g}:seed={self.seed}" if self.on else "none"


def slowdown_cv(sigma: float) -> float:
    """Coefficient of variation of exp(sigma |Z|), Z standard normal (closed form)."""
    phi = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))   # noqa: E731
    m1 = 2 * math.exp(sigma ** 2 / 2) * phi(sigma)
    m2 = 2 * math.exp(2 * sigma ** 2) * phi(2 * sigma)
    return math.sqrt(max(m2 - m1 ** 2, 0.0)) / m1


def slowdown_sigma(cv: float) -> float:
    """The sigma whose exp(sigma |Z|) has coefficient of variation ``cv`` (bisection)."""
    lo, hi = 0.0, 5.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if slowdown_cv(mid) < cv else (lo, mid)
    return (lo + hi) / 2
