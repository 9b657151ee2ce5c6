"""mVMC-mini: ``zvo_HitachiTimer.dat`` lines ``All                         [0]   123.45678``
(timer 0 = whole run) plus our walltime line on stdout.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

ALL_RE = re.compile(r"^\s*All\s+\[\s*0\s*\]\s+([0-9.eE+-]+)\s*$", re.M)


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "mvmc")
    if m := ALL_RE.search(text):
        recs.append(record("mvmc", "total_time", "s", to_float(m.group(1))))
    if not recs:
        raise ParseError("no mVMC 'All [0] <t>' timer line or walltime line")
    return recs
