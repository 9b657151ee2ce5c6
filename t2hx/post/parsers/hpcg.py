"""HPCG result file ``HPCG-Benchmark_<ver>_<date>.txt`` (key=value lines with ``::`` paths).

The rating line is ``Final Summary::HPCG result is VALID with a GFLOP/s rating of=<x>`` in 3.1
(``:`` instead of ``=`` in other versions). An INVALID result is not a result. HPCG's stdout is
empty and its ``hpcg*.txt`` log carries no rating: both yield no records.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

RATING_RE = re.compile(r"HPCG result is (VALID|INVALID) with a GFLOP/s rating of\s*[=:]\s*(\S+)")
KEYS = {"Machine Summary::Distributed Processes": "ranks",
        "Machine Summary::Threads per processes": "threads",
        "Local Domain Dimensions::nx": "nx", "Local Domain Dimensions::ny": "ny",
        "Local Domain Dimensions::nz": "nz"}
TIME_RE = re.compile(r"(?:Benchmark Time Summary::Total|Final Summary::Results are valid but "
                     r"execution time \(sec\) is)\s*[=:]\s*(\S+)")


def parse(text: str) -> list[Record]:
    m = RATING_RE.search(text)
    if not m:
        raise ParseError("no 'HPCG result is VALID with a GFLOP/s rating' line",
                         fix="parse the HPCG-Benchmark_*.txt result file, not stdout")
    if m.group(1) != "VALID":
        raise ParseError("HPCG reports an INVALID result")
    params: dict = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip() in KEYS:
            params[KEYS[key.strip()]] = int(value)
    recs = [record("hpcg", "gflops", "GFLOP/s", to_float(m.group(2)), **params)]
    if t := TIME_RE.search(text):
        recs.append(record("hpcg", "time", "s", to_float(t.group(1)), **params))
    return recs
