"""CoMD (src-mpi 1.1): stdout and the ``CoMD-mpi.<date>.yaml`` report.

stdout: ``Average atom update rate:  6.46 us/atom/task`` and the ``Timing Statistics Across N
Ranks`` table whose ``loop`` row gives the max over ranks (the solver loop's wall time).
YAML: ``Performance Global Update Rates: AtomUpdateRate: AverageRate`` and
``Performance Results Across Ranks: Timer: loop … MaxTime`` — the same two numbers.
"""

from __future__ import annotations

import re

from t2hx.post.parsers.yamlish import outline
from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

RATE_RE = re.compile(r"^\s*Average atom update rate:\s+(\S+)\s+us/atom/task\s*$", re.M)
RANKS_RE = re.compile(r"Timing Statistics Across (\d+) Ranks")
LOOP_RE = re.compile(r"^loop\s+\d+:\s+(\S+)\s+\d+:\s+(\S+)\s+(\S+)\s+(\S+)\s*$", re.M)


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "comd")
    if "Performance Global Update Rates" in text or "Performance Results" in text:
        recs.extend(_yaml(text))
    else:
        ranks = RANKS_RE.search(text)
        params = {"ranks": int(ranks.group(1)) if ranks else None}
        if m := RATE_RE.search(text):
            recs.append(record("comd", "atom_update_rate", "us/atom/task", to_float(m.group(1)),
                               **params))
        if m := LOOP_RE.search(text):
            recs.append(record("comd", "loop_time", "s", to_float(m.group(2)), **params))
    if not recs:
        raise ParseError("no CoMD atom update rate or loop timer found (run cut short?)")
    return recs


def _yaml(text: str) -> list[Record]:
    items = outline(text)
    ranks = next((int(v) for p, v in items if p == ("Performance Results", "TotalRanks")), None)
    recs: list[Record] = []
    timer = None
    for path, value in items:
        if path == ("Performance Global Update Rates", "AtomUpdateRate", "AverageRate"):
            recs.append(record("comd", "atom_update_rate", "us/atom/task", to_float(value),
                               ranks=ranks))
        if path == ("Performance Results Across Ranks", "Timer"):
            timer = value.strip()
        elif timer == "loop" and path[-1] == "MaxTime":
            recs.append(record("comd", "loop_time", "s", to_float(value), ranks=ranks))
            timer = None
    return recs
