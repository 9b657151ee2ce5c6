"""What the IMB benchmarks (imb, mupp, emdl) share: their typed results, IMB-MPI1's text
format (what t2hx/post/parsers/imb.py reads), the ``-msglog`` sweep, IMB's repetition
control (``-iter``, ``-iter_policy``, ``-time``) and their noise rules.

The text follows IMB-MPI1 2021.7 (intel/mpi-benchmarks, tag IMB-v2021.7): the preamble of
src_cpp/MPI1/MPI1_suite.cpp (``BenchmarkSuite<BS_MPI1>::declare_args``' output),
the tables of src_c/IMB_output.c (``IMB_print_header``, ``IMB_show_procids``,
``IMB_display_times``); the repetitions of src_cpp/helpers/helper_IMB_functions.h
(``IMB_init_buffers_iter``, ``helper_time_check``) and src_cpp/helpers/original_benchmark.h
(``OriginalBenchmark::run``); tests/data/post/fixtures/imb holds real outputs."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from t2hx import argtypes as A
from t2hx.benchmarks.base import option
from t2hx.imbschedule import (  # noqa: F401 (re-exported: the IMB modules use them)
    DEFAULT_POLICY, MSGSPERSAMPLE, OVERALL_VOL, POLICIES, SECS_PER_SAMPLE, WARMUP_PERCENT,
    Schedule, msglog_bounds)

if TYPE_CHECKING:
    from t2hx.flowsim import patterns
    from t2hx.simrequest import BenchmarkOptions

IMB_FINALIZE = r"# All processes entering MPI_Finalize"    # a finished run's last line
SPACK_SPEC = "intel-mpi-benchmarks"
BINARY = "IMB-MPI1"
VERSION = "2021.7"
_BAR = "#" + "-" * 64
#: IMB_output.c: every column is ``ow_format`` = 13 characters wide; a table's rule is as
#: wide as its header (``IMB_make_line``).
COLUMN = 13
#: IMB_display_times' line for a size that ``helper_time_check`` stopped.
TIME_OUT = (' time-out.; Time limit (secs_per_sample * msg_sizes_list_len) is over; use '
            '"-time X" or SECS_PER_SAMPLE=X (IMB_settings.h) to increase time limit.')



@dataclass(frozen=True)
class ImbRow:
    size: int
    reps: int
    t_min: float            # usec
    t_max: float
    t_avg: float


@dataclass(frozen=True)
class ImbTable:
    name: str               # the benchmark as IMB names it (Bcast, SleepyAllreduce)
    rows: list[ImbRow]
    timed_out: int | None = None    # the size IMB's time limit stopped at (printed, not run)


@dataclass(frozen=True)
class ImbOutput:
    command: str
    ranks: int
    tables: list[ImbTable]


@dataclass(frozen=True)
class PingPongRow:
    """One size of ``-multi 0 PingPong``: over the ranks of every pair, half a round trip."""
    size: int
    reps: int
    t_min: float            # usec
    t_max: float
    t_avg: float
    mbytes: float           # MB/s: size / t_max (IMB_display_times)


@dataclass(frozen=True)
class MultiPingPongOutput:
    command: str
    ranks: int
    rows: list[PingPongRow]
    timed_out: int | None = None


def msglog(text: str) -> list[int]:
    """The message sizes of ``-msglog LO:HI``: 0, then 2^LO … 2^HI."""
    from t2hx.flowsim.imbjobs import msglog_sizes

    return msglog_sizes(*msglog_bounds(text))


# -- IMB's repetition control -----------------------------------------------------------------
def iter_arg(text: str) -> str:
    """IMB's ``-iter MSGSPERSAMPLE[,OVERALL_VOL_MiB[,MSGS_NONAGGR]]``, kept as text."""
    parts = text.split(",")
    if not (1 <= len(parts) <= 3 and all(p.isdigit() and int(p) > 0 for p in parts)):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not IMB's -iter N[,MiB[,N]] "
                                         "(fix: e.g. 5, or 1000,40)")
    return text


def iter_policy_arg(text: str) -> str:
    if text not in POLICIES:
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not an IMB -iter_policy "
                                         f"(fix: one of {', '.join(POLICIES)})")
    return text


def msglog_option(inp: dict[str, Any]) -> list[str]:
    """The study input's sweep as a ``t2hx simulate`` option."""
    return option(inp, "msglog", "--msglog", A.msglog, default="0:22")


#: Study input key → (``t2hx simulate`` option, its check); checks/imb.py ``imb_args``
#: passes the same keys to the real binary.
SCHEDULE_OPTIONS = {"iter": ("--imb-iter", iter_arg),
                    "iter_policy": ("--iter-policy", iter_policy_arg),
                    "time": ("--imb-time", A.seconds)}


def sim_options(inp: dict[str, Any]) -> list[str]:
    """The study input's sweep and repetition control as ``t2hx simulate`` options."""
    out = msglog_option(inp)
    for key, (flag, check) in SCHEDULE_OPTIONS.items():
        if key in inp:
            out += option(inp, key, flag, check)
    return out


def calling_sequence(benchmark: str, ranks: int, opts: BenchmarkOptions,
                     lead: tuple[str, ...] = ()) -> str:
    """The IMB-MPI1 command line the study's check runs (checks/imb.py ``imb_args``)."""
    args = [BINARY, *lead, benchmark, "-npmin", str(ranks), "-msglog", opts.msglog]
    if opts.iter_policy != DEFAULT_POLICY:
        args += ["-iter_policy", opts.iter_policy]
    if opts.imb_iter:
        args += ["-iter", opts.imb_iter]
    if opts.imb_time != SECS_PER_SAMPLE:
        args += ["-time", f"{opts.imb_time:g}"]
    return " ".join(args)


def rows(model_rows: list[patterns.ImbRow], reps: list[int] | None = None) -> list[ImbRow]:
    """The model's rows of the sizes that ran, with IMB's repetition counts
    (:meth:`Schedule.sweep`; None: the model's own)."""
    counts = [r.reps for r in model_rows] if reps is None else reps
    return [ImbRow(r.size, n, r.t_min, r.t_max, r.t_avg) for r, n in zip(model_rows, counts)]


# -- text -------------------------------------------------------------------------------------
def preamble(names: list[str], command: str, max_size: int = 1 << 22) -> str:
    lines = [_BAR, f"#    Intel(R) MPI Benchmarks {VERSION}, MPI-1 part",
             _BAR, "# Date                  : (simulated)",
             "# Machine               : t2hx flow model",
             "# System                : t2hx", "# Release               : (simulated)",
             "# Version               : (simulated)", "# MPI Version           : 3.1",
             "# MPI Thread Environment: ", "", "",
             "# Calling sequence was: ", "", f"# {command} ", "",
             "# Minimum message length in bytes:   0",
             f"# Maximum message length in bytes:   {max_size}", "#",
             "# MPI_Datatype                   :   MPI_BYTE ",
             "# MPI_Datatype for reductions    :   MPI_FLOAT ",
             "# MPI_Op                         :   MPI_SUM  ", "# ", "# ", "",
             "# List of Benchmarks to run:", ""]
    lines += [f"# {n}" for n in names]
    return "\n".join(lines) + "\n"


def footer() -> str:
    return "\n\n# All processes entering MPI_Finalize\n\n"


def _rule(columns: int) -> str:
    return "#" + "-" * (columns * COLUMN - 1)


def _heading(name: str, ranks: int, columns: int = 5) -> str:
    return (f"\n{_rule(columns)}\n# Benchmarking {name} \n# #processes = {ranks} \n"
            f"{_rule(columns)}\n")


def _header(*names: str) -> str:
    return "".join(f"{n:>{COLUMN}}" for n in names) + "\n"


def _time_out(size: int | None) -> str:
    return "" if size is None else f"{size:{COLUMN}d}{TIME_OUT}\n"


def table(name: str, ranks: int, table_rows: list[ImbRow], timed_out: int | None = None
          ) -> str:
    times = ("t_min[usec]", "t_max[usec]", "t_avg[usec]")
    if name == "Barrier":
        out = [_heading(name, ranks, 4), _header("#repetitions", *times)]
        out += [f"{r.reps:13d}{r.t_min:13.2f}{r.t_max:13.2f}{r.t_avg:13.2f}\n"
                for r in table_rows]
    else:
        out = [_heading(name, ranks), _header("#bytes", "#repetitions", *times)]
        out += [f"{r.size:13d}{r.reps:13d}{r.t_min:13.2f}{r.t_max:13.2f}{r.t_avg:13.2f}\n"
                for r in table_rows]
    return "".join(out) + _time_out(timed_out)


def render(out: ImbOutput) -> str:
    body = preamble([t.name for t in out.tables], out.command, _max_size(out.command))
    body += "".join(table(t.name, out.ranks, t.rows, t.timed_out) for t in out.tables)
    return body + footer()


def _max_size(command: str) -> int:
    """IMB prints 2^HI of its ``-msglog`` (0:22 when the command line gives none)."""
    args = command.split()
    text = args[args.index("-msglog") + 1] if "-msglog" in args[:-1] else "0:22"
    return 1 << msglog_bounds(text)[1]


def perturb(out: ImbOutput, f: float) -> ImbOutput:
    """Every table's times scale with the run's factor."""
    return replace(out, tables=[
        replace(t, rows=[replace(r, t_min=r.t_min * f, t_max=r.t_max * f, t_avg=r.t_avg * f)
                         for r in t.rows]) for t in out.tables])


#: IMB_print_array: at most this many groups are listed, the first and last half of them.
MAX_SHOW = 1024


def _groups(ranks: int) -> str:
    """``IMB_show_procids`` under ``-multi``: pairs 2k, 2k+1 (``IMB_init_communicator``),
    then the idle rank of an odd count."""
    n = ranks // 2
    shown = range(n) if n <= MAX_SHOW else \
        [*range(MAX_SHOW // 2), None, *range(n - MAX_SHOW // 2, n)]
    lines = [f"\n# ( {n} groups of 2 processes each running simultaneous ) \n"]
    lines += ["#  . \n#  . \n" if g is None else f"# Group  {g}:  {2 * g:4d} {2 * g + 1:4d}\n# \n"
              for g in shown]
    return "".join(lines)


def _idle(ranks: int) -> str:
    idle = ranks % 2
    return "" if not idle else "# ( 1 additional process waiting in MPI_Barrier)\n"


def render_multi_pingpong(out: MultiPingPongOutput) -> str:
    """One group prints as plain PingPong; more as Multi-PingPong with their ranks. Under
    ``-multi 0`` the columns are t_min/t_max/t_avg over every rank of every group and
    size / t_max (IMB_output ``OUT_TIME_RANGE_AND_BW``)."""
    several = out.ranks // 2 > 1
    name = "Multi-PingPong" if several else "PingPong"
    procs = _groups(out.ranks) if several else "\n# #processes = 2 \n"
    lines = [f"\n{_rule(6)}\n# Benchmarking {name} {procs}{_idle(out.ranks)}{_rule(6)}\n",
             _header("#bytes", "#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]",
                     "Mbytes/sec")]
    lines += [f"{r.size:13d}{r.reps:13d}{r.t_min:13.2f}{r.t_max:13.2f}{r.t_avg:13.2f}"
              f"{r.mbytes:13.2f}\n" for r in out.rows]
    body = "".join(lines) + _time_out(out.timed_out)
    return preamble(["PingPong"], out.command, _max_size(out.command)) + body + footer()


def perturb_multi_pingpong(out: MultiPingPongOutput, f: float) -> MultiPingPongOutput:
    """Times scale with the factor, bandwidths inversely."""
    return replace(out, rows=[replace(r, t_min=r.t_min * f, t_max=r.t_max * f,
                                      t_avg=r.t_avg * f, mbytes=r.mbytes / f)
                              for r in out.rows])
