"""miniFE YAML report (``miniFE.<nx>x<ny>x<nz>.P<n>.<date>.yaml``) and its stdout.

``CG solve:`` → ``Total:`` → ``Total CG Time`` (s) and ``Total CG Mflops``. stdout carries no
result of its own, only our solver walltime line when the patch is applied.
"""

from __future__ import annotations

from t2hx.post.parsers.yamlish import lookup, outline
from t2hx.post.records import ParseError, Record, record, to_float, walltime_records


def parse(text: str) -> list[Record]:
    recs = walltime_records(text, "minife")
    items = outline(text)
    cg_time = lookup(items, "CG solve", "Total", "Total CG Time")
    if cg_time is not None:
        params = {"ranks": _int(lookup(items, "Global Run Parameters", "number of processors")),
                  "nx": _int(lookup(items, "Global Run Parameters", "dimensions", "nx")),
                  "ny": _int(lookup(items, "Global Run Parameters", "dimensions", "ny")),
                  "nz": _int(lookup(items, "Global Run Parameters", "dimensions", "nz")),
                  "iterations": _int(lookup(items, "CG solve", "Iterations"))}
        recs.append(record("minife", "cg_time", "s", to_float(cg_time), **params))
        mflops = lookup(items, "CG solve", "Total", "Total CG Mflops")
        if mflops is not None:
            recs.append(record("minife", "cg_mflops", "Mflop/s", to_float(mflops), **params))
    if not recs:
        raise ParseError("no 'CG solve: Total: Total CG Time' in miniFE output",
                         fix="parse the miniFE.*.yaml report")
    return recs


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value.split()[0])
    except (ValueError, IndexError):
        return None
