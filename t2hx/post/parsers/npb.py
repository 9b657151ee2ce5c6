"""NAS Parallel Benchmarks report (NPB 3.x, MPI and OpenMP; print_results.f90 and
c_print_results.c): the block after `` <NAME> Benchmark Completed``.

Records, benchmark ``npb-<kernel>``: ``time`` [s] and ``mops_total`` [Mop/s], with class,
ranks (``Total processes``; OpenMP builds print ``Total threads``), size and iterations. NPB
prints the time to 10 ms only; for the kernels whose operation count t2hx knows
(t2hx/benchmarks/npbtext.py: FT, MG, LU, IS, EP) the time is the count over the six-digit
Mop/s, the printed value kept as ``printed_time``. An ``UNSUCCESSFUL`` verification is not a
result; neither is a run that stopped before its report (e.g. LU's ``could not determine
proper proc_grid``).
"""

from __future__ import annotations

import re

from t2hx.benchmarks import npbtext
from t2hx.post.records import ParseError, Record, record, to_float

DONE_RE = re.compile(r"^\s*([A-Z]{2})(?:-MZ)? Benchmark Completed\.?\s*$", re.M)
FIELD_RE = re.compile(r"^\s*(Class|Size|Iterations|Time in seconds|Total processes|"
                      r"Total threads|Mop/s total|Verification)\s*=\s*(.*?)\s*$", re.M)


def parse(text: str) -> list[Record]:
    done = DONE_RE.search(text)
    if done is None:
        raise ParseError("no 'Benchmark Completed' report",
                         fix="parse the stdout of an NPB run that finished")
    kernel = done.group(1).lower()
    fields = {k: v for k, v in FIELD_RE.findall(text[done.end():])}
    verification = fields.get("Verification", "")
    if verification != "SUCCESSFUL":
        raise ParseError(f"NPB {kernel.upper()} verification is {verification or 'missing'}",
                         fix="a run that does not verify has no result; rerun it")
    if "Time in seconds" not in fields:
        raise ParseError(f"NPB {kernel.upper()} report has no 'Time in seconds'")
    cls = fields.get("Class", "?").strip()
    params: dict = {"class": cls, "size": "".join(fields.get("Size", "").split())}
    ranks = fields.get("Total processes") or fields.get("Total threads")
    if ranks:
        params["ranks"] = int(ranks)
    if "Iterations" in fields:
        params["iterations"] = int(fields["Iterations"])
    printed = to_float(fields["Time in seconds"])
    rate = to_float(fields["Mop/s total"]) if "Mop/s total" in fields else 0.0
    bench = f"npb-{kernel}"
    seconds = printed
    if rate > 0 and kernel in npbtext.OPS and cls in npbtext.SIZES[kernel]:
        seconds = npbtext.ops(kernel, cls) / rate / 1e6
    recs = [record(bench, "time", "s", seconds, printed_time=printed, **params)]
    if "Mop/s total" in fields:
        recs.append(record(bench, "mops_total", "Mop/s", rate, **params))
    return recs
