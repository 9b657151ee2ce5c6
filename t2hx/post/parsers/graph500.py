"""Graph500 reference (3.0.0 and 2.1.x): summary on stdout, per-root lines on stderr.

stdout: ``SCALE:``, ``edgefactor:``, ``NBFS:``, ``num_mpi_processes:`` and statistics lines
``bfs  harmonic_mean_TEPS:     !  1.8786e+07`` (``sssp`` likewise for the bfs_sssp binary).
2.1.x (``graph500_mpi_simple``, ``_replicated``, ...) runs BFS only and prints the same
statistics without the kernel word and the ``!`` mark: ``harmonic_mean_TEPS:   7.70781e+07``;
they are read as the ``bfs`` statistics of 3.0.0, so both versions give the same metrics.
stderr: ``TEPS for BFS 3 is 4.89e+07`` / ``Time for SSSP 0 is 0.005835`` (both versions).
A failed validation prints ``No results printed for invalid run.`` — no records then.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

PARAM_RE = re.compile(r"^(SCALE|edgefactor|NBFS|num_mpi_processes):\s+(\d+)\s*$")
# The kernel word is absent in 2.1.x (BFS only).
STAT_RE = re.compile(r"^(?:(bfs|sssp)\s+)?(harmonic_mean_TEPS|median_TEPS|median_time|"
                     r"mean_time):\s+!?\s*(\S+)\s*$")
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
            metric = f"{m.group(1) or 'bfs'}_{m.group(2).lower()}"
            recs.append(record("graph500", metric, UNITS[m.group(2)], to_float(m.group(3)),
                               **params))
        elif m := ROOT_RE.match(line.strip()):
            metric = f"{m.group(2).lower()}_root_{m.group(1).lower()}"
            recs.append(record("graph500", metric, UNITS[m.group(1)], to_float(m.group(4)),
                               root=int(m.group(3))))
    if not recs:
        raise ParseError("no Graph500 statistics (e.g. 'harmonic_mean_TEPS:', 3.0 or 2.1 "
                         "format) or per-root lines ('TEPS for BFS 0 is') found")
    return recs
