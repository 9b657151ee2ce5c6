"""Only the agreed ``T2HX solver walltime: <seconds> s`` line (any proxy app)."""

from __future__ import annotations

from t2hx.post.records import ParseError, Record, walltime_records


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "walltime")
    if not recs:
        raise ParseError("no 'T2HX solver walltime: <seconds> s' line")
    return recs
