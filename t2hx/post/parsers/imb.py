"""Intel MPI Benchmarks (IMB-MPI1 and our SleepyAllreduce patch).

Each table starts with ``# Benchmarking <Name>`` and ``# #processes = N``, then a header line
(``#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]`` for collectives, ``#bytes
#repetitions t[usec] Mbytes/sec`` for PingPong, no ``#bytes`` for Barrier). The header is read,
not assumed, so extra columns (e.g. ``-check`` defects, ``-multi 1``'s leading ``Group``) are
handled. A row whose field count does not match its header (a truncated last line) is
dropped. ``-multi`` with more than one group says ``# Benchmarking Multi-<Name>`` and ``# ( G
groups of P processes each running simultaneous )``: its ranks are G·P. A size IMB's time
limit stopped prints ``<size> time-out.; …`` instead of a row; a table of nothing else is an
error naming the time limit.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

BENCH_RE = re.compile(r"^#\s*Benchmarking\s+(\S+)")
PROCS_RE = re.compile(r"^#\s*#processes\s*=\s*(\d+)")
GROUPS_RE = re.compile(r"^#\s*\(\s*(\d+)\s+groups of\s+(\d+)\s+processes")
TIME_OUT_RE = re.compile(r"^(\d+)\s+time-out")

# header token → (metric, unit); tokens not listed are kept under their own name, unit-less.
COLUMNS = {"t_min[usec]": ("t_min", "us"), "t_max[usec]": ("t_max", "us"),
           "t_avg[usec]": ("t_avg", "us"), "t[usec]": ("t", "us"),
           "Mbytes/sec": ("bandwidth", "MB/s"), "Msg/sec": ("msg_rate", "msg/s")}


def parse(text: str) -> list[Record]:
    recs: list[Record] = []
    name, ranks, header, timed_out = None, None, None, None
    for line in text.splitlines():
        stripped = line.strip()
        if m := BENCH_RE.match(stripped):
            name, ranks, header = m.group(1), None, None
        elif m := PROCS_RE.match(stripped):
            ranks = int(m.group(1))
        elif m := GROUPS_RE.match(stripped):
            ranks = int(m.group(1)) * int(m.group(2))
        elif stripped.startswith(("#bytes", "#repetitions", "Group ")):
            header = stripped.split()
        elif name and header and (m := TIME_OUT_RE.match(stripped)):
            timed_out = (name, m.group(1))
        elif name and header and stripped and stripped[0].isdigit():
            recs.extend(_row(name, ranks, header, stripped.split()))
    if not recs and timed_out:
        raise ParseError(f"IMB's time limit stopped {timed_out[0]} at its first size "
                         f"({timed_out[1]} bytes): no result", fix="raise -time, or give "
                         "-iter_policy off with a small -iter")
    if not recs:
        raise ParseError("no IMB result table found (empty, truncated or failed run)",
                         fix="check the run's stdout for '# Benchmarking' tables")
    return recs


def _row(name: str, ranks: int | None, header: list[str], fields: list[str]) -> list[Record]:
    if len(fields) != len(header):
        return []  # truncated line
    try:
        values = [to_float(f) for f in fields]
    except ValueError:
        return []
    row = dict(zip(header, values))
    params: dict = {"ranks": ranks}
    params["msg_size"] = int(row["#bytes"]) if "#bytes" in row else 0
    if "Group" in row:
        params["group"] = int(row["Group"])
    if "#repetitions" in row:
        params["repetitions"] = int(row["#repetitions"])
    bench = "imb-" + name.lower()
    out = []
    for col in header:
        if col in ("#bytes", "#repetitions", "Group"):
            continue
        metric, unit = COLUMNS.get(col, (col, ""))
        out.append(record(bench, metric, unit, row[col], **params))
    return out
