"""MILC (Trinity ``su3_rmd``/``ks_imp_dyn``): ``Time = <t> seconds`` for the whole run, printed
once the run ends with ``RUNNING COMPLETED``. A run without that marker has no result.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float, walltime_records

TIME_RE = re.compile(r"^\s*Time\s*=\s*([0-9.eE+-]+)\s+seconds", re.M)


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "milc")
    if "RUNNING COMPLETED" in text:
        times = TIME_RE.findall(text)
        if times:
            recs.append(record("milc", "time", "s", to_float(times[-1])))
    if not recs:
        raise ParseError("MILC output lacks 'RUNNING COMPLETED' / 'Time = … seconds'")
    return recs
