"""SWFFT (HACC FFT kernel): per repetition ``FORWARD max <t>s avg <t>s min <t>s dev <t>s`` and
the same for ``BACKWARD``. ``max`` is the wall-clock figure; records give the sum over all
repetitions (the paper's kernel time) and the repetition count.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

LINE_RE = re.compile(r"^\s*(FORWARD|BACKWARD)\s+max\s+([0-9.eE+-]+)\s*s\s+avg\b", re.M)


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "swfft")
    for direction in ("FORWARD", "BACKWARD"):
        times = [to_float(m.group(2)) for m in LINE_RE.finditer(text) if m.group(1) == direction]
        if times:
            recs.append(record("swfft", f"{direction.lower()}_time", "s", sum(times),
                               reps=len(times)))
    if not recs:
        raise ParseError("no SWFFT 'FORWARD max …' / 'BACKWARD max …' lines")
    return recs
