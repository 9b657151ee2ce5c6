"""HPL (seed 000 §4.3): Gflop/s of one N x N LU factorisation, N so that the matrix takes
``gib_per_rank`` GiB per process. Where the binaries' view has no xhpl, the check runs it
as Debian's HPCC (checks/x500.py), whose input this module writes too."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from t2hx.benchmarks.base import Benchmark
from t2hx.benchmarks.proxyapp import M, AppSpec, Skeleton, app_workload
from t2hx.grids import hpl_grid

if TYPE_CHECKING:
    from t2hx.flowsim.apps import AppResult

#: Debian's HPC Challenge (package hpcc): HPL inside HPCC, used wherever the binaries'
#: view has no xhpl, so a machine without the Spack build still measures HPL for real.
HPCC = Path("/usr/bin/hpcc")
HPCC_EXAMPLE = Path("/usr/share/doc/hpcc/examples/_hpccinf.txt")
DEFAULT_INPUT = {"gib_per_rank": 1.0, "nb": 192}

# HPL.dat as the HPL check (checks/x500.py) and `t2hx demand record --hpl` write it: one
# problem, one NB, one P x Q grid; the remaining lines are HPL's usual choices (right-looking,
# Crout recursive panel factorisation, 1-ring-modified broadcast, lookahead 1).
HPL_DAT = """HPL input written by t2hx (checks/x500.py)
case {case}
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
{nb}         NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}          Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
"""


def hpcc_input(n: int, nb: int, p: int, q: int) -> str:
    """Debian's example hpccinf.txt with one HPL problem N, block NB and a P x Q grid."""
    lines = HPCC_EXAMPLE.read_text().splitlines()
    for no, value in ((5, n), (7, nb), (10, p), (11, q)):
        lines[no] = f"{value:<12} {lines[no].split(None, 1)[1]}"
    return "\n".join(lines) + "\n"


def hpl_n(inp: dict, ranks: int) -> int:
    """N: given (``n``) or so that A takes ``gib_per_rank`` GiB per process, rounded down to
    NB (seed 000 Table 2: 1 GiB per process, 0.25 GiB from 224 nodes)."""
    nb = int(inp.get("nb", 192))
    if "n" in inp:
        return int(inp["n"])
    n = int(math.sqrt(float(inp["gib_per_rank"]) * 2**30 * ranks / 8))
    return max(nb, n - n % nb)


def gflops_seconds(run: dict, inp: dict) -> float:
    """A calibration run's timed seconds from its Gflop/s."""
    return 2 / 3 * hpl_n(inp, int(run["ranks"])) ** 3 / (float(run["value"]) * 1e9)


@dataclass(frozen=True)
class HplOutput:
    n: int
    nb: int
    p: int
    q: int
    seconds: float
    gflops: float


def output(result: AppResult, ranks: int) -> HplOutput:
    """HPL's result for the run's N (its input's GiB per process)."""
    inp = result.input or DEFAULT_INPUT
    n, nb = hpl_n(inp, ranks), int(inp.get("nb", 192))
    p, q = hpl_grid(ranks)
    return HplOutput(n, nb, p, q, result.seconds, 2 / 3 * n ** 3 / result.seconds / 1e9)


def render(out: HplOutput) -> str:
    return ("T/V                N    NB     P     Q               Time                 Gflops\n"
            "--------------------------------------------------------------------------------\n"
            f"WR11C2R4 {out.n:>11d} {out.nb:>5d} {out.p:>5d} {out.q:>5d} {out.seconds:>18.2f} "
            f"{out.gflops:>22.4e}\n")


def perturb(out: HplOutput, f: float) -> HplOutput:
    return replace(out, seconds=out.seconds * f, gflops=out.gflops / f)


APP = AppSpec("hpl", Skeleton(0.050, 100, (("panel", 8 * M), ("swap", 1 * M))),
              # LU's 2/3 N^3 flops over P: with the matrix bytes per process held, a
              # rank's flops grow as N ~ sqrt(P) (its share times N).
              work_rule=lambda i, n: 2 / 3 * hpl_n(i, n) ** 3 / n,
              share_rule=lambda i, n: 8.0 * hpl_n(i, n) ** 2 / n,
              measure_rules=(("matrix", lambda i, n: float(hpl_n(i, n)) ** 2),),
              metric_rule=gflops_seconds)

BENCHMARK = Benchmark(
    "hpl", "HPL", "x500", "HPL", parser="hpl", metric="gflops", unit="Gflop/s",
    spack_spec="hpl", markers=(r"End of Tests\.",),
    workload=app_workload(APP, HplOutput, output, render, perturb),
    sim_markers=(),            # the flow model prints the result rows only
    local_binary="xhpl", app=APP, aliases=("hpcc",))
