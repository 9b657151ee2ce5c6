"""Simulated results printed in the upstream benchmarks' own text formats
(docs/formats.md#simulated-output), preceded by ONE line ``# t2hx-simulated: k=v …`` so the same
parsers (t2hx.post.parsers) read real and simulated logs."""

from __future__ import annotations

import math

import numpy as np

from t2hx import wire
from t2hx.flowsim.network import Network
from t2hx.flowsim.patterns import Ebb, ImbRow, MpiGraph


def header(net: Network, model: str = "maxmin", **extra: object) -> str:
    return wire.sim_header({"fabric": net.label, "routing": net.engine,
                            "hostfile": net.hostfile, "model": model, **extra})


def mpigraph_text(net: Network, g: MpiGraph) -> str:
    n = len(g.send)
    names = [f"{h}:{i}" for i, h in enumerate(net.hosts)]
    out = [f"START mpiGraph v1.5\nMsgSize\t{g.size}\nTimes\t{g.times}\nWindow\t{g.window}\n"
           f"Procs\t{n}\n\n"]
    out += [f"{i} of {n} ({100.0 * i / n:.1f}%)\n" for i in range(1, n)]
    out.append("Gathering results\n\n")
    for kind, m, verb in (("Send", g.send, "to"), ("Recv", g.recv, "from")):
        off = m[~np.eye(n, dtype=bool)] if n > 1 else np.zeros(1)
        out.append(f"{kind} max\t{off.max():.6f}\n{kind} avg\t{off.mean():.6f}\n\n")
        out.append(kind + "\t" + "".join(f"{x}\t" for x in names) + "\n")
        for i in range(n):
            out.append(f"{names[i]} {verb}\t" + "".join(f"{v:.3f}\t" for v in m[i]) + "\n")
        out.append("\n")
    out[-1] = "END mpiGraph\n"
    return "".join(out)


def ebb_text(net: Network, e: Ebb, command: str) -> str:
    n = net.ranks
    out = [f"# Info:   (0): Netgauge v2.4.6 MPI enabled (P={n}, threadlevel=0) ({command} )\n"]
    for i, row in enumerate(e.round_times):
        v = row[~np.isnan(row)]
        out.append(f"size: {e.size}, round {i}: num: {len(v)} average: {v.mean():.6f} us "
                   f"({_mbs(e, v.mean())} MiB/s)\n")
    allv = e.round_times[~np.isnan(e.round_times)]
    out.append("# Info:   (0): ---- bucket data ----\n")
    out.append(f"size: {e.size} {allv.min():.6f} ({_mbs(e, allv.min())} MiB/s): {len(allv)}\n")
    out.append(f"size: {e.size} num: {len(allv)} average: {allv.mean():.6f} "
               f"({_mbs(e, allv.mean())} MiB/s)\n")
    return "".join(out)


def _mbs(e: Ebb, t_us: float) -> str:
    return f"{e.size * e.reps / t_us:.6f}"


def imb_preamble(names: list[str], command: str) -> str:
    lines = ["#" + "-" * 64, "#    Intel(R) MPI Benchmarks 2021.11, MPI-1 part",
             "#" + "-" * 64, "# Date                  : (simulated)",
             "# Machine               : t2hx flow model", "", "",
             "# Calling sequence was: ", "", f"# {command} ", "",
             "# MPI_Datatype                   :   MPI_BYTE ",
             "# MPI_Datatype for reductions    :   MPI_FLOAT ",
             "# MPI_Op                         :   MPI_SUM  ", "# ", "# ", "",
             "# List of Benchmarks to run:", ""]
    lines += [f"# {n}" for n in names]
    return "\n".join(lines) + "\n"


def imb_table(name: str, ranks: int, rows: list[ImbRow]) -> str:
    bar = "#" + "-" * 64
    out = [f"\n{bar}\n# Benchmarking {name} \n# #processes = {ranks} \n{bar}\n"]
    if name == "Barrier":
        out.append(" #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n")
        for r in rows:
            out.append(f" {r.reps:12d} {r.t_min:12.2f} {r.t_max:12.2f} {r.t_avg:12.2f}\n")
    else:
        out.append("       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]\n")
        for r in rows:
            out.append(f" {r.size:12d} {r.reps:12d} {r.t_min:12.2f} {r.t_max:12.2f} "
                       f"{r.t_avg:12.2f}\n")
    return "".join(out)


def multi_pingpong_table(ranks: int, rows: list[tuple[int, int, float, float]]) -> str:
    bar = "#" + "-" * 64
    out = [f"\n{bar}\n# Benchmarking Multi-PingPong \n# #processes = {ranks} \n{bar}\n",
           "       #bytes #repetitions      t[usec]   Mbytes/sec\n"]
    out += [f" {m:12d} {reps:12d} {t:12.2f} {bw:12.2f}\n" for m, reps, t, bw in rows]
    return "".join(out)


def imb_footer() -> str:
    return "\n\n# All processes entering MPI_Finalize\n\n"


def baidu_lines(rows: list[tuple[int, float]]) -> str:
    return "".join(f"Verified allreduce for size {n} ({t:.9f} per iteration)\n"
                   for n, t in rows)


def msglog_sizes(lo: int, hi: int) -> list[int]:
    """IMB -msglog lo:hi → 0 and 2^lo … 2^hi."""
    return [0] + [1 << k for k in range(lo, hi + 1)]


def finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0
