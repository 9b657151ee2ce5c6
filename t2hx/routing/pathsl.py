"""The SL of every path of a routing run, as OpenSM assigns it (DFSSSP's virtual layers).

OpenSM answers a path's SL to SA path-record queries only (``path_sl``); it writes no dump
of them. DFSSSP (``osm_ucast_dfsssp.c``) keeps a table of the VL of every (source LID,
destination LID) pair after its deadlock removal and balancing, and logs that table at
debug level (``vltable_print``: ``route from src_lid=S to dest_lid=D on vl=V``). Its
``get_dfsssp_sl`` then answers ``V + rand() % split[V]``: balancing spreads each layer
over ``split`` consecutive VLs, and every path query draws one of them. So:

* the table comes from the run's ``opensm.log`` when it was routed with debug logging,
  else from a second run of the same OpenSM on the same fabric with the run's LIDs
  (``guid2lid``) and ``log_flags`` plus debug, whose LFTs must equal the run's byte for
  byte (else :class:`~t2hx.errors.RoutingError`);
* the split of each base VL follows from the bases (they are consecutive: each layer's
  base is the sum of the splits before it) and ``Virtual Lanes available``;
* :meth:`PathSL.sl` draws the SL of a pair from ``split`` with a seeded generator, once
  per pair (an MPI connection asks once per peer).

The table is kept beside the run as ``t2hx-path-sl.npz`` (when the directory is writable).
Other engines: :func:`path_sl` returns None (no layers; PARX's and SAR's layers live in
the plugin, which does not publish them yet), and every path is on SL 0.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx.errors import RoutingError
from t2hx.fabric.graph import Fabric

CACHE = "t2hx-path-sl.npz"
LAYERED = ("dfsssp",)
_ROUTE = re.compile(rb"route from src_lid=(\d+) to dest_lid=(\d+) on vl=(\d+)")
_AVAIL = re.compile(rb"Virtual Lanes available: (\d+)")
DEBUG = 0x08                 # OpenSM's OSM_LOG_DEBUG
NONE = 255


@dataclass
class PathSL:
    base: np.ndarray         # (max_lid + 1, max_lid + 1) uint8: base VL of (slid, dlid)
    split: np.ndarray        # (16,) VLs the layer at each base spreads over (0: no base)

    def sl(self, slid: np.ndarray, dlid: np.ndarray, draw: np.ndarray) -> np.ndarray:
        """SLs of paths slid -> dlid; ``draw``: a non-negative integer per path (the
        stand-in of OpenSM's rand())."""
        b = self.base[slid, dlid].astype(np.int64)
        if (b == NONE).any():
            k = int(np.argmax(b == NONE))
            raise RoutingError(f"no SL for the path from LID {int(slid[k])} to LID "
                               f"{int(dlid[k])} in OpenSM's table", field="sl",
                               fix="re-route the plane (the table belongs to another run)")
        return b + draw % np.maximum(self.split[b], 1)


def parse_log(text: bytes) -> PathSL | None:
    """DFSSSP's table from an OpenSM log, or None when the log has none."""
    rows = np.array(_ROUTE.findall(text), dtype=np.int64)
    if rows.size == 0:
        return None
    avail = _AVAIL.findall(text)
    if not avail:
        raise RoutingError("the log has DFSSSP's table but not 'Virtual Lanes available'",
                           field="opensm.log", fix="re-route the plane")
    top = int(rows[:, :2].max())
    base = np.full((top + 1, top + 1), NONE, dtype=np.uint8)
    base[rows[:, 0], rows[:, 1]] = rows[:, 2]
    bases = sorted(set(rows[:, 2].tolist()))
    ends = bases[1:] + [int(avail[-1])]
    split = np.zeros(16, dtype=np.int64)
    for b, e in zip(bases, ends):
        split[b] = max(1, e - b)
    return PathSL(base, split)


def path_sl(fabric: Fabric, run: Path, engine: str, lmc: int) -> PathSL | None:
    """The run's per-path SL table (None for engines without virtual layers)."""
    if engine not in LAYERED:
        return None
    run = Path(run)
    cached = run / CACHE
    if cached.is_file():
        with np.load(cached) as data:
            return PathSL(data["base"], data["split"])
    log = run / "opensm.log"
    table = parse_log(log.read_bytes()) if log.is_file() else None
    if table is None:
        table = _reroute(fabric, run, engine, lmc)
    try:
        with tempfile.NamedTemporaryFile(dir=run, suffix=".tmp", delete=False) as fh:
            np.savez_compressed(fh, base=table.base, split=table.split)
        Path(fh.name).chmod(0o644)
        Path(fh.name).replace(cached)
    except OSError:
        pass                          # read-only dumps: computed again next time
    return table


def _reroute(fabric: Fabric, run: Path, engine: str, lmc: int) -> PathSL:
    """Route again with debug logging and the run's LIDs; the LFTs must not change."""
    from t2hx.routing.lft import read_guid2lid
    from t2hx.routing.opensm import route

    conf = _conf(run / "opensm.conf")
    flags = int(str(conf.get("log_flags", "0x43")), 0) | DEBUG
    extra = {k: v for k, v in conf.items() if k not in (
        "routing_engine", "lmc", "log_flags", "dump_files_dir", "honor_guid2lid_file",
        "root_guid_file", "cn_guid_file")}
    extra["log_flags"] = hex(flags)
    lids = {g: lo for g, (lo, _) in read_guid2lid(run / "guid2lid").items()}
    tmp = Path(tempfile.mkdtemp(prefix="t2hx-pathsl-"))
    try:
        again = route(fabric, tmp, engine, lmc, extra_conf=extra, guid2lid=lids)
        if again.lfts.read_bytes() != (run / "opensm-lfts.dump").read_bytes():
            raise RoutingError("OpenSM routed differently when asked for its SL table",
                               file=run / "opensm-lfts.dump", field="sl",
                               fix="re-route the plane, then retry")
        table = parse_log(again.log.read_bytes())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if table is None:
        raise RoutingError(f"{engine} logged no SL table", file=run / "opensm.log",
                           field="sl", fix="check that the OpenSM build logs at debug level")
    return table


def _conf(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and not line.startswith("#"):
                out[parts[0]] = parts[1].strip()
    return out
