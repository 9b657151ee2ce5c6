"""SL -> VL maps of a routing run, and OpenSM's VL arbitration tables as conf text.

``opensm-sl2vl.dump`` is written when OpenSM programs SL2VL tables (``qos TRUE``, as PARX
and SAR route): per switch and (in, out) port pair, the VL of each of the 16 SLs. The
packet engine keeps one map per run: the tables must agree (our engines program SL i ->
VL i on every hop). The SL of each path is t2hx/routing/pathsl.py's.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from t2hx.errors import RoutingError

SL2VL_DUMP = "opensm-sl2vl.dump"
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s*:((?:\s*\d+){16})\s*$", re.M)


def parse_sl2vl(text: str) -> np.ndarray | None:
    """The SL -> VL map (16 entries) of a dump's tables, or None when it has none. Raises
    when tables disagree: the packet engine keeps one VL per message along its path."""
    rows = {tuple(int(x) for x in m.group(3).split()) for m in _ROW.finditer(text)}
    if not rows:
        return None
    if len(rows) > 1:
        raise RoutingError("the SL2VL tables differ between ports; the packet engine keeps "
                           "one SL -> VL map", field="sl2vl",
                           fix="program the same SL2VL everywhere (qos_sl2vl)")
    return np.array(next(iter(rows)), dtype=np.int64)


def read_sl2vl(routing: Path) -> np.ndarray | None:
    path = Path(routing) / SL2VL_DUMP
    return parse_sl2vl(path.read_text()) if path.is_file() else None


def parse_table(text: str) -> list[tuple[int, int]]:
    """An OpenSM VL arbitration table ``vl:weight,...`` as (vl, weight) pairs."""
    return [(int(a), int(b)) for a, b in (item.split(":") for item in text.split(","))]
