"""Qbox / qb@ll: XML timing elements ``<timing name="iteration" min="…" max="…" …/>``.

Attributes may come in any order and values are space-padded. The last ``iteration`` element
(the run's summary) gives ``iteration_time`` = its max over tasks.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

TIMING_RE = re.compile(r"<timing\b([^>]*)/>")
ATTR_RE = re.compile(r'(\w+)\s*=\s*"\s*([^"]*?)\s*"')


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "qbox")
    last = None
    for m in TIMING_RE.finditer(text):
        attrs = dict(ATTR_RE.findall(m.group(1)))
        if attrs.get("name") == "iteration" and "max" in attrs:
            last = attrs
    if last:
        recs.append(record("qbox", "iteration_time", "s", to_float(last["max"])))
    if not recs:
        raise ParseError("no Qbox <timing name=\"iteration\" …/> element")
    return recs
