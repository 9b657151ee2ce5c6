"""Service levels and virtual lanes of a routing run, as OpenSM left them in its dumps.

* ``opensm-sl2vl.dump`` (written when OpenSM programs SL2VL tables: ``qos TRUE``, as PARX
  and SAR route): per switch and (in, out) port pair, the VL of each of the 16 SLs. The
  packet engine keeps one map per run: the first table of the dump, checked to be the
  same everywhere (our engines program SL i -> VL i on every hop).
* ``opensm-path-sl.dump`` (optional): the SL a routing engine gives the paths from the
  switch of a source to a destination LID, one ``0xSWITCH_GUID 0xDLID SL`` line per path
  (what ``path_sl`` answers to SA path-record queries; DFSSSP's and PARX's virtual layers).
  Stock OpenSM writes no such dump; without it every path is on SL 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from t2hx.errors import RoutingError

SL2VL_DUMP = "opensm-sl2vl.dump"
PATH_SL_DUMP = "opensm-path-sl.dump"
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s*:((?:\s*\d+){16})\s*$", re.M)
_PATH = re.compile(r"^0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\d+)\s*$", re.M)


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


def read_path_sl(routing: Path) -> dict[tuple[int, int], int] | None:
    """(switch GUID, destination LID) -> SL, or None without a path-SL dump."""
    path = Path(routing) / PATH_SL_DUMP
    if not path.is_file():
        return None
    out = {(int(g, 16), int(d, 16)): int(sl) for g, d, sl in _PATH.findall(path.read_text())}
    if any(sl > 15 for sl in out.values()):
        raise RoutingError("an SL above 15", file=path, field="sl",
                           fix="write SLs 0..15, one '0xGUID 0xDLID SL' line per path")
    return out


def parse_table(text: str) -> list[tuple[int, int]]:
    """An OpenSM VL arbitration table ``vl:weight,...`` as (vl, weight) pairs."""
    return [(int(a), int(b)) for a, b in (item.split(":") for item in text.split(","))]
