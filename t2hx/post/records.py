"""The shape of a parsed measurement.

A *record* is a flat dict: ``benchmark, metric, unit, better, value`` plus whatever parameters
the output itself carries (``msg_size``, ``ranks``, ``N``/``NB``/``P``/``Q``, ``scale`` …) and
``simulated``. Flat dicts turn into a tidy DataFrame without any reshaping.

The two lines every parser must understand are wire formats (t2hx/wire.py): the solver
walltime line our proxy-app patches print, and the ``# t2hx-simulated:`` first line of a
simulated output, which :func:`t2hx.post.parsers.parse_text` strips (the pairs are kept as
``sim_<key>`` fields of the records).
"""

from __future__ import annotations

import math
from typing import Any

from t2hx import wire
from t2hx.errors import T2hxError

Record = dict[str, Any]

# Direction of "better" from the unit. Units not listed here give better=None, which the
# statistics keep but never turn into a gain (a wrong sign would be worse than a gap).
LOWER_UNITS = {"s", "sec", "seconds", "ms", "us", "usec", "µs", "ns", "us/atom/task",
               "us/atom", "min"}
HIGHER_UNITS = {"MiB/s", "MB/s", "GiB/s", "GB/s", "Gflop/s", "GFLOP/s", "Gflops", "Mflop/s",
                "Mflops", "Mop/s", "Tflop/s", "TEPS", "runs", "atoms/us", "FOM", "nnz*iter/s", "nnz/s"}


class ParseError(T2hxError):
    """A raw output file holds no result (truncated, empty, failed run, wrong benchmark)."""


def better_for(unit: str | None) -> str | None:
    """'lower' or 'higher' for a unit; None when the direction is unknown."""
    if unit is None:
        return None
    if unit in LOWER_UNITS:
        return "lower"
    if unit in HIGHER_UNITS:
        return "higher"
    return None


class NotANumber(ParseError, ValueError):
    """A result field that is no finite number. Also a ValueError, so parsers that skip
    such lines keep doing so; one that does not ends in a ParseError naming the file."""


def to_float(text: str) -> float:
    """float() that refuses nan/inf: a benchmark never legitimately prints them as a result."""
    try:
        value = float(text)
    except ValueError:
        raise NotANumber(f"{text[:40]!r} is not a number",
                         fix="check the output is complete and unedited") from None
    if not math.isfinite(value):
        raise NotANumber(f"non-finite value {text[:40]!r}")
    return value


def record(benchmark: str, metric: str, unit: str, value: float, **params: Any) -> Record:
    """One measurement. ``better`` follows from the unit (see :func:`better_for`)."""
    rec: Record = {"benchmark": benchmark, "metric": metric, "unit": unit,
                   "better": better_for(unit), "value": float(value)}
    rec.update(params)
    return rec


def walltime_records(text: str, benchmark: str) -> list[Record]:
    """Records for every agreed walltime line (several when the solver ran several times)."""
    return [record(benchmark, "solver_walltime", "s", to_float(seconds), call=i)
            for i, seconds in enumerate(wire.walltimes(text))]
