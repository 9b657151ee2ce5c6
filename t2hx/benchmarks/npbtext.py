"""The NAS Parallel Benchmarks 3.4 (MPI) as the study's codes (seed 001, the shortcut
topologies thesis, §3.4.3, §4.5.3, §5: FT, IS, MG and LU, class A, 128 processes).

Shared by the kernel modules (``npb_<kernel>.py``): the problem classes and operation counts
of NPB 3.4.3 (``sys/setparams.c``, each kernel's Mop/s formula), NPB's own report (the
block ``print_results`` prints), and :func:`npb_kernel`, which makes one kernel a benchmark
whose metric is the run's time. NPB prints that time to 10 ms only, while its ``Mop/s
total`` is the same time to six digits or more; the parser (t2hx/post/parsers/npb.py)
therefore takes the time from the operation count of the class and the Mop/s, and the
printed time only when there is no rate.

A kernel's binary is ``<kernel>.<class>.x`` (the Spack ``npb`` recipe builds one per
class); the local runs and calibrations use class A, the thesis' class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from t2hx.benchmarks.base import Benchmark
from t2hx.benchmarks.proxyapp import AppSpec, Rule, Skeleton, app_workload
from t2hx.errors import WorkloadError

if TYPE_CHECKING:
    from t2hx.flowsim.apps import AppResult

CLASSES = ("S", "W", "A", "B", "C", "D")
LOCAL_CLASS = "A"
# Per kernel and class: the sizes NPB 3.4.3's setparams.c (IS: is.c) gives it.
#   ft: nx, ny, nz, iterations      mg: grid edge, iterations     lu: grid edge, iterations
#   is: log2 total keys, log2 max key, MIN_PROCS                   ep: log2 pairs m
#   cg: na, nonzer, iterations
SIZES: dict[str, dict[str, tuple[int, ...]]] = {
    "ft": {"S": (64, 64, 64, 6), "W": (128, 128, 32, 6), "A": (256, 256, 128, 6),
           "B": (512, 256, 256, 20), "C": (512, 512, 512, 20), "D": (2048, 1024, 1024, 25)},
    "mg": {"S": (32, 4), "W": (128, 4), "A": (256, 4), "B": (256, 20), "C": (512, 20),
           "D": (1024, 50)},
    "lu": {"S": (12, 50), "W": (33, 300), "A": (64, 250), "B": (102, 250), "C": (162, 250),
           "D": (408, 300)},
    "is": {"S": (16, 11, 1), "W": (20, 16, 1), "A": (23, 19, 1), "B": (25, 21, 1),
           "C": (27, 23, 1), "D": (29, 27, 4)},
    "ep": {"S": (24,), "W": (25,), "A": (28,), "B": (30,), "C": (32,), "D": (36,)},
    "cg": {"S": (1400, 7, 15), "W": (7000, 8, 15), "A": (14000, 11, 15),
           "B": (75000, 13, 75), "C": (150000, 15, 75), "D": (1500000, 21, 100)},
}
IS_ITERATIONS = 10      # is.c MAX_ITERATIONS
OPTYPE = {"is": "keys ranked", "ep": "Random numbers generated"}   # others: floating point


def _ft_ops(nx: int, ny: int, nz: int, niter: int) -> float:
    n = float(nx * ny * nz)
    return n * (14.8157 + 7.19641 * math.log(n) + (5.23518 + 7.21113 * math.log(n)) * niter)


def _lu_ops(n: int, itmax: int) -> float:
    return itmax * (1984.77 * n ** 3 - 10923.3 * n ** 2 + 27770.9 * n - 144010.0)


# Operations the kernel's Mop/s counts (its own formula over its timed section).
OPS = {
    "ft": lambda s: _ft_ops(*s),
    "mg": lambda s: 58.0 * s[1] * s[0] ** 3,
    "lu": lambda s: _lu_ops(*s),
    "is": lambda s: float(IS_ITERATIONS * 2 ** s[0] * s[2]),
    "ep": lambda s: 2.0 ** (s[0] + 1),
}


def npb_class(inp: dict, kernel: str) -> str:
    cls = str(inp.get("class", "")).upper()
    if cls not in SIZES[kernel]:
        raise WorkloadError(f"NPB {kernel.upper()} class '{inp.get('class')}'",
                            field=f"benchmarks.npb-{kernel}.input.class",
                            fix=f"use one of: {', '.join(SIZES[kernel])}")
    return cls


def sizes(inp: dict, kernel: str) -> tuple[int, ...]:
    return SIZES[kernel][npb_class(inp, kernel)]


def ops(kernel: str, cls: str) -> float:
    """Operations of one run of ``kernel`` in class ``cls`` as its Mop/s counts them."""
    return OPS[kernel](SIZES[kernel][cls.upper()])


def problem_size(kernel: str, cls: str) -> tuple[int, int, int]:
    """The ``Size`` NPB reports: (n1, n2, n3), n2 = n3 = 0 for a one-number size."""
    s = SIZES[kernel][cls]
    if kernel == "ft":
        return s[0], s[1], s[2]
    if kernel in ("mg", "lu"):
        return s[0], s[0], s[0]
    if kernel == "is":
        return 2 ** s[0], 0, 0
    if kernel == "ep":
        return 2 ** (s[0] + 1), 0, 0
    return s[0], 0, 0


def iterations(kernel: str, cls: str) -> int:
    s = SIZES[kernel][cls]
    return {"ft": lambda: s[3], "mg": lambda: s[1], "lu": lambda: s[1],
            "is": lambda: IS_ITERATIONS, "ep": lambda: 0, "cg": lambda: s[2]}[kernel]()


# --- NPB's report -------------------------------------------------------------------------

@dataclass(frozen=True)
class NpbOutput:
    kernel: str
    cls: str
    ranks: int
    seconds: float


def mops(out: NpbOutput) -> float:
    return ops(out.kernel, out.cls) / out.seconds / 1e6 if out.seconds > 0 else 0.0


def _size_line(kernel: str, cls: str) -> str:
    n1, n2, n3 = problem_size(kernel, cls)
    if n2:                                   # print_results.f90 formats 4, 42, 44
        return f" Size            =  {'':9}{n1:4}x{n2:4}x{n3:4}"
    if kernel == "ep":
        return f" Size            = {'':9}{n1:15}"
    return f" Size            = {'':12}{n1:12}"


def render(out: NpbOutput) -> str:
    """The report block of NPB 3.4's print_results.f90 (IS prints the same fields from C,
    without the period after "Completed")."""
    rate = mops(out)
    done = "Completed" if out.kernel == "is" else "Completed."
    return (f"\n\n {out.kernel.upper()} Benchmark {done}\n"
            f" Class           = {'':12}{out.cls:>12}\n"
            f"{_size_line(out.kernel, out.cls)}\n"
            f" Iterations      = {'':12}{iterations(out.kernel, out.cls):12}\n"
            f" Time in seconds = {'':12}{out.seconds:12.2f}\n"
            f" Total processes = {'':12}{out.ranks:12}\n"
            f" Active processes= {'':12}{out.ranks:12}\n"
            f" Mop/s total     = {'':12}{rate:12.2f}\n"
            f" Mop/s/process   = {'':12}{rate / out.ranks:12.2f}\n"
            f" Operation type  = {OPTYPE.get(out.kernel, 'floating point'):>24}\n"
            f" Verification    = {'':12}  SUCCESSFUL\n"
            f" Version         = {'':12}{'3.4.3':>12}\n")


def perturb(out: NpbOutput, f: float) -> NpbOutput:
    return replace(out, seconds=out.seconds * f)


def time_seconds(run: dict, inp: dict) -> float:
    """A calibration run's timed seconds: its recorded time metric."""
    return float(run["value"])


def npb_kernel(kernel: str, title: str, *, work: Rule, measures: dict[str, Rule],
               skeleton: Skeleton) -> Benchmark:
    """One NPB kernel as a benchmark: NPB's report is its output, the time its metric."""
    key = f"npb-{kernel}"

    def output(result: AppResult, ranks: int) -> NpbOutput:
        inp = result.input or {"class": LOCAL_CLASS}
        return NpbOutput(kernel, npb_class(inp, kernel), ranks, result.seconds)

    app = AppSpec(key, skeleton, work, tuple(measures.items()), metric_rule=time_seconds)
    return Benchmark(
        key, title, "app", f"NPB{kernel.upper()}", parser="npb", metric="time", unit="s",
        spack_spec="npb", markers=(r"Verification\s*=\s*SUCCESSFUL",),
        workload=app_workload(app, NpbOutput, output, render, perturb),
        local_binary=f"{kernel}.{LOCAL_CLASS}.x", app=app,
        aliases=(f"npb{kernel}",))
