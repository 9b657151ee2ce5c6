"""What the IMB benchmarks (imb, mupp, emdl) share: their typed results, IMB-MPI1's text
format (what t2hx/post/parsers/imb.py reads), the ``-msglog`` sweep and their noise rules."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from t2hx import argtypes as A
from t2hx.benchmarks.base import option
from t2hx.errors import WorkloadError

if TYPE_CHECKING:
    from t2hx.flowsim import patterns

IMB_FINALIZE = r"# All processes entering MPI_Finalize"    # a finished run's last line
SPACK_SPEC = "intel-mpi-benchmarks"
BINARY = "IMB-MPI1"
_BAR = "#" + "-" * 64


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


@dataclass(frozen=True)
class ImbOutput:
    command: str
    ranks: int
    tables: list[ImbTable]


@dataclass(frozen=True)
class PingPongRow:
    size: int
    reps: int
    t: float                # usec, half a round trip of the slowest pair
    mbytes: float           # MB/s per pair


@dataclass(frozen=True)
class MultiPingPongOutput:
    command: str
    ranks: int
    rows: list[PingPongRow]


def msglog(text: str) -> list[int]:
    """The message sizes of ``-msglog LO:HI``: 0, then 2^LO … 2^HI."""
    from t2hx.flowsim.imbjobs import msglog_sizes

    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="write LO:HI, "
                            "e.g. 0:22") from None
    if not 0 <= lo <= hi <= 31:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="0 <= LO <= HI <= 31")
    return msglog_sizes(lo, hi)


def msglog_option(inp: dict[str, Any]) -> list[str]:
    """The study input's sweep as a ``t2hx simulate`` option."""
    return option(inp, "msglog", "--msglog", A.msglog, default="0:22")


def rows(model_rows: list[patterns.ImbRow]) -> list[ImbRow]:
    return [ImbRow(r.size, r.reps, r.t_min, r.t_max, r.t_avg) for r in model_rows]


def preamble(names: list[str], command: str) -> str:
    lines = [_BAR, "#    Intel(R) MPI Benchmarks 2021.7, MPI-1 part",
             _BAR, "# Date                  : (simulated)",
             "# Machine               : t2hx flow model", "", "",
             "# Calling sequence was: ", "", f"# {command} ", "",
             "# MPI_Datatype                   :   MPI_BYTE ",
             "# MPI_Datatype for reductions    :   MPI_FLOAT ",
             "# MPI_Op                         :   MPI_SUM  ", "# ", "# ", "",
             "# List of Benchmarks to run:", ""]
    lines += [f"# {n}" for n in names]
    return "\n".join(lines) + "\n"


def footer() -> str:
    return "\n\n# All processes entering MPI_Finalize\n\n"


def _heading(name: str, ranks: int) -> str:
    return f"\n{_BAR}\n# Benchmarking {name} \n# #processes = {ranks} \n{_BAR}\n"


def table(name: str, ranks: int, table_rows: list[ImbRow]) -> str:
    out = [_heading(name, ranks)]
    if name == "Barrier":
        out.append(" #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n")
        for r in table_rows:
            out.append(f" {r.reps:12d} {r.t_min:12.2f} {r.t_max:12.2f} {r.t_avg:12.2f}\n")
    else:
        out.append("       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n")
        for r in table_rows:
            out.append(f" {r.size:12d} {r.reps:12d} {r.t_min:12.2f} {r.t_max:12.2f} "
                       f"{r.t_avg:12.2f}\n")
    return "".join(out)


def render(out: ImbOutput) -> str:
    body = preamble([t.name for t in out.tables], out.command)
    body += "".join(table(t.name, out.ranks, t.rows) for t in out.tables)
    return body + footer()


def perturb(out: ImbOutput, f: float) -> ImbOutput:
    """Every table's times scale with the run's factor."""
    return replace(out, tables=[
        replace(t, rows=[replace(r, t_min=r.t_min * f, t_max=r.t_max * f, t_avg=r.t_avg * f)
                         for r in t.rows]) for t in out.tables])


def render_multi_pingpong(out: MultiPingPongOutput) -> str:
    lines = [_heading("Multi-PingPong", out.ranks),
             "       #bytes #repetitions      t[usec]   Mbytes/sec\n"]
    lines += [f" {r.size:12d} {r.reps:12d} {r.t:12.2f} {r.mbytes:12.2f}\n" for r in out.rows]
    return preamble(["Multi-PingPong"], out.command) + "".join(lines) + footer()


def perturb_multi_pingpong(out: MultiPingPongOutput, f: float) -> MultiPingPongOutput:
    """Times scale with the factor, bandwidths inversely."""
    return replace(out, rows=[replace(r, t=r.t * f, mbytes=r.mbytes / f) for r in out.rows])
