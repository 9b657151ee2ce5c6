"""Netgauge effective bisection bandwidth (``-x ebb``).

Only the final line counts: ``size: S num: N average: T (B MiB/s)``. Per-round lines
(``size: S, round R: …``) and bucket lines are ignored. B is size·reps/µs, i.e. decimal MB/s
despite netgauge's ``MiB/s`` label (and seed 000's Fig 5c, which plots netgauge's number):
we keep the number, which compares 1:1 with published plots, and record its true unit, MB/s.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

FINAL_RE = re.compile(r"^size:\s*(\d+)\s+num:\s*(\d+)\s+average:\s*([0-9.eE+-]+)\s+"
                      r"\(([0-9.eE+-]+) MiB/s\)\s*$")
ROUND_RE = re.compile(r"^size:\s*\d+, round (\d+):")
PROCS_RE = re.compile(r"\(P=(\d+)")


def parse(text: str) -> list[Record]:
    recs: list[Record] = []
    procs = PROCS_RE.search(text)
    ranks = int(procs.group(1)) if procs else None
    rounds = sum(1 for line in text.splitlines() if ROUND_RE.match(line))
    for line in text.splitlines():
        if m := FINAL_RE.match(line.strip()):
            params = {"msg_size": int(m.group(1)), "num": int(m.group(2)), "ranks": ranks,
                      "rounds": rounds}
            recs.append(record("ebb", "bandwidth", "MB/s", to_float(m.group(4)), **params))
            recs.append(record("ebb", "time", "us", to_float(m.group(3)), **params))
    if not recs:
        raise ParseError("no final netgauge eBB summary line (truncated or failed run)",
                         fix="expected 'size: S num: N average: T (B MiB/s)' at the end")
    return recs
