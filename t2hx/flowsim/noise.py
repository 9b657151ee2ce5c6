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
fabric's while the repetitions spread. The perturbation works on the upstream text formats
(the ones the parsers read), per registry workload; this module imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass
from typing import Callable

from t2hx.errors import WorkloadError
from t2hx.wire import WALLTIME_RE

MODELS = ("none", "lognormal", "slowdown")
NUMBER = r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"


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


def scaled(token: str, value: float) -> str:
    """``value`` printed like ``token`` (same decimals or exponent digits, same width)."""
    if "e" in token.lower():
        mantissa = token.lower().split("e")[0]
        digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        text = f"{value:.{digits}e}"
    elif "." in token:
        text = f"{value:.{len(token.split('.')[1])}f}"
    else:
        text = str(round(value))
    return text


def _sub(pattern: str, rate: bool) -> Callable[[str, float], str]:
    """Scale every capture of ``pattern`` (a time, or with ``rate`` a rate) in a line."""
    regex = re.compile(pattern)

    def apply(line: str, f: float) -> str:
        def one(m: re.Match) -> str:
            value = float(m.group(1)) / f if rate else float(m.group(1)) * f
            return m.group(0)[:m.start(1) - m.start(0)] + scaled(m.group(1), value) + \
                m.group(0)[m.end(1) - m.start(0):]
        return regex.sub(one, line)
    return apply


def _columns(line: str, f: float, kinds: dict[int, str]) -> str:
    """Scale whitespace-separated columns: ``kinds`` maps column index -> time | rate."""
    parts = re.split(r"(\s+)", line)
    col = -1
    for i, part in enumerate(parts):
        if not part or part.isspace():
            continue
        col += 1
        if col in kinds:
            value = float(part) * f if kinds[col] == "time" else float(part) / f
            parts[i] = scaled(part, value).rjust(len(part))
    return "".join(parts)


def _imb(text: str, f: float) -> str:
    """IMB tables: t_min/t_max/t_avg (times), Multi-PingPong t (time) and Mbytes/sec."""
    table, out = "", []
    for line in text.splitlines(keepends=True):
        m = re.match(r"# Benchmarking (\S+)", line)
        if m:
            table = m.group(1)
        cols = line.split()
        if cols and all(re.fullmatch(NUMBER, c) for c in cols):
            if table == "Multi-PingPong" and len(cols) == 4:
                line = _columns(line, f, {2: "time", 3: "rate"})
            elif len(cols) in (4, 5):         # Barrier has no #bytes column
                first = len(cols) - 3
                line = _columns(line, f, {first: "time", first + 1: "time", first + 2: "time"})
        out.append(line)
    return "".join(out)


_MPIGRAPH_ROW = re.compile(r"^\S+:\d+ (?:to|from)\t")
_MPIGRAPH_STAT = _sub(rf"^(?:Send|Recv) (?:max|avg)\t({NUMBER})", rate=True)


def _mpigraph(text: str, f: float) -> str:
    """Every bandwidth cell and the max/avg lines (MiB/s): one factor keeps them consistent."""
    out = []
    for line in text.splitlines(keepends=True):
        if _MPIGRAPH_ROW.match(line):
            head, _, cells = line.partition("\t")
            line = head + "\t" + re.sub(NUMBER, lambda m: scaled(m.group(0),
                                                                float(m.group(0)) / f), cells)
        else:
            line = _MPIGRAPH_STAT(line, f)
        out.append(line)
    return "".join(out)


_EBB_TIME = _sub(rf"average: ({NUMBER})", rate=False)
_EBB_BUCKET = _sub(rf"^size: \d+ ({NUMBER}) \(", rate=False)
_EBB_RATE = _sub(rf"\(({NUMBER}) MiB/s\)", rate=True)


def _lines(*rules: Callable[[str, float], str]) -> Callable[[str, float], str]:
    def apply(text: str, f: float) -> str:
        out = []
        for line in text.splitlines(keepends=True):
            for rule in rules:
                line = rule(line, f)
            out.append(line)
        return "".join(out)
    return apply


def _hpl(text: str, f: float) -> str:
    return "".join(_columns(line, f, {5: "time", 6: "rate"}) if re.match(r"^W[RC]\S+\s", line)
                   else line for line in text.splitlines(keepends=True))


_WALLTIME = _sub(WALLTIME_RE.pattern.rstrip("$").replace(r"\r?", ""), rate=False)

# Registry workload (t2hx/benchmarks.py ``workload``) -> how its output carries time/rate.
PERTURB: dict[str, Callable[[str, float], str]] = {
    "imb": _imb,
    "emdl": _imb,
    "mupp": _imb,
    "mpigraph": _mpigraph,
    "ebb": _lines(_EBB_TIME, _EBB_BUCKET, _EBB_RATE),
    "ring-allreduce": _lines(_sub(rf"\(({NUMBER}) per iteration\)", rate=False)),
    "app": _lines(_WALLTIME),
    "hpl": _hpl,
    "hpcg": _lines(_sub(rf"rating of=({NUMBER})", rate=True)),
    "graph500": _lines(_sub(rf"harmonic_mean_TEPS:\s+!\s+({NUMBER})", rate=True)),
}


def perturb(workload: str, body: str, factor: float) -> str:
    """The simulated output ``body`` (header excluded) of one run with its noise factor."""
    if factor == 1.0:
        return body
    if workload not in PERTURB:
        raise WorkloadError(f"no noise rule for workload '{workload}'", field="workload",
                            fix="add its time and rate lines to PERTURB in t2hx/flowsim/noise.py")
    return PERTURB[workload](body, factor)
