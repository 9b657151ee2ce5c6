"""NTChem-mini (RI-MP2, taxol): timing lines containing ``WALL time`` (``… CPU time … WALL
time …  <t>``); the last one printed is the whole calculation.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

# NTChem prints e.g. ` ...   WALL time (RIMP2_Driver    ) :        1.55` (the routine in
# parentheses is optional in other versions).
WALL_RE = re.compile(r"WALL\s*time\s*(?:\([^)]*\))?\s*[:=]?\s*([0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)",
                     re.I)


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "ntchem")
    walls = [m.group(1) for line in text.splitlines() if "WALL" in line.upper()
             and not line.startswith("T2HX") for m in [WALL_RE.search(line)] if m]
    if walls:
        recs.append(record("ntchem", "wall_time", "s", to_float(walls[-1])))
    if not recs:
        raise ParseError("no NTChem 'WALL time' line or walltime line")
    return recs
