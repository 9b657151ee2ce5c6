"""Graph500 reference (3.0.0): summary on stdout, per-root lines on stderr.

stdout: ``SCALE:``, ``edgefactor:``, ``NBFS:``, ``num_mpi_processes:`` and statistics lines
``bfs  harmonic_mean_TEPS:     !  1.8786e+07`` (``sssp`` likewise for the bfs_sssp binary).
stderr: ``TEPS for BFS 3 is 4.89e+07`` / ``Time for SSSP 0 is 0.005835``. A failed validation
prints ``No results printed for invalid run.`` — no records then.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

PARAM_RE = re.compile(r"^(SCALE|edgefactor|NBFS|num_mpi_processes):\s+(\d+)\s*$")
STAT_RE = re.compile(r"^(bfs|sssp)\s+(harmonic_mean_TEPS|median_TEPS|median_time|mean_time)"
                     r":\s+!?\s*(\S+)\s*$")
ROOT_RE = re.compile(r"^(TEPS|Time) for (BFS|SSSP) (\d+) is (\S+)\s*$")
PARAM_NAMES = {"SCALE": "scale", "edgefactor": "edgefactor", "NBFS": "nbfs",
               "num_mpi_processes": "ranks"}
UNITS = {"harmonic_mean_TEPS": "TEPS", "median_TEPS": "TEPS", "median_time": "s",
         "mean_time": "s", "TEPS": "TEPS", "Time": "s"}


def parse(text: str) -> list[Record]:
    if "No results printed for invalid run" in text:
        raise ParseError("Graph500 validation failed ('No results printed for invalid run.')")
    params = {PARAM_NAMES[m.group(1)]: int(m.group(2)) for line in text.splitlines()
              if (m := PARAM_RE.match(line.strip()))}
    recs: list[Record] = []
    for line in text.splitlines():
        if m := STAT_RE.match(line.strip()):
            metric = f"{m.group(1)}_{m.group(2).lower()}"
            recs.append(record("graph500", metric, UNITS[m.group(2)], to_float(m.group(3)),
                               **params))
        elif m := ROOT_RE.match(line.strip()):
            metric = f"{m.group(2).lower()}_root_{m.group(1).lower()}"
            recs.append(record("graph500", metric, UNITS[m.group(1)], to_float(m.group(4)),
                               root=int(m.group(3))))
    if not recs:
        raise ParseError("no Graph500 statistics or per-root lines found")
    return recs
