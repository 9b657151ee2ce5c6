"""AMG (LLNL/AMG, AMG2013 1.x and AMG2023).

``Figure of Merit (FOM_1): <x>`` (problem 1; ``FOM_2`` for problem 2; ``FOM`` in AMG2023) and
the solve phase's ``wall clock time = <t> seconds`` under ``PCG Solve:`` / ``GMRES Solve:``.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

FOM_RE = re.compile(r"^Figure of Merit \((FOM(?:_\d+)?)\):\s*(\S+)\s*$", re.M)
SOLVE_RE = re.compile(r"^(\w+) Solve:\s*\n\s*wall clock time\s*=\s*(\S+) seconds", re.M)
GRID_RE = re.compile(r"\(Px, Py, Pz\)\s*=\s*\((\d+),\s*(\d+),\s*(\d+)\)")
PROBLEM_RE = re.compile(r"^Problem (\d+):", re.M)


def parse(text: str) -> list[Record]:
    params: dict = {}
    if g := GRID_RE.search(text):
        params["ranks"] = int(g.group(1)) * int(g.group(2)) * int(g.group(3))
    if p := PROBLEM_RE.search(text):
        params["problem"] = int(p.group(1))
    recs = walltime_records(text, "amg")
    for m in FOM_RE.finditer(text):
        recs.append(record("amg", "fom", "FOM", to_float(m.group(2)), fom=m.group(1), **params))
    for m in SOLVE_RE.finditer(text):
        recs.append(record("amg", "solve_time", "s", to_float(m.group(2)),
                           solver=m.group(1), **params))
    if not recs:
        raise ParseError("no AMG 'Figure of Merit' or solve time found")
    return recs
