"""FFVC-mini: its ``history_base.txt`` tracks convergence, not solver time, so the kernel time
comes only from our walltime patch line (see :mod:`t2hx.post.records`).
"""

from __future__ import annotations

from t2hx.post.records import ParseError, Record, walltime_records


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "ffvc")
    if not recs:
        raise ParseError("no 'T2HX solver walltime' line in FFVC output",
                         fix="build FFVC with the walltime patch from patches/")
    return recs
