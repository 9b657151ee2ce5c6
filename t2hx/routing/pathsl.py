"""The SL of every path of a routing run, as OpenSM's routing engine assigns it.

OpenSM answers a path's SL to SA path-record queries only (``path_sl``); it dumps none.

* DFSSSP (``osm_ucast_dfsssp.c``) keeps the VL of every (source LID, destination LID) pair
  after its deadlock removal and balancing, and logs that table at debug level
  (``vltable_print``: ``route from src_lid=S to dest_lid=D on vl=V``). Its
  ``get_dfsssp_sl`` answers ``V + rand() % split[V]``: balancing spreads each layer over
  ``split`` consecutive VLs and every path query draws one of them. The split of each base
  follows from the bases (each is the sum of the splits before it) and ``Virtual Lanes
  available``; :meth:`PathSL.sl` draws with a seeded stand-in for rand(), once per pair.
* PARX and SAR (our plugin, parx/px_engine.c) answer the layer of the path from the
  source's switch to the destination LID, and write those answers as
  ``parx-path-sl.dump`` (``0xSWITCH_GUID 0xDLID SL`` lines) beside the LFT dump.

A run routed before either was written (DFSSSP without debug logging, an older plugin) is
routed once more with the run's own configuration and LIDs (``guid2lid``) and debug
logging; its LFTs must equal the run's byte for byte, else :class:`RoutingError`. The
table is kept beside the run as ``t2hx-path-sl.npz`` (when the directory is writable).
Other engines have no layers: :func:`path_sl` returns None and every path is on SL 0.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx.errors import RoutingError
from t2hx.routing.lft import Tables, read_guid2lid
from t2hx.routing_engines import SL_FROM_LOG, routing_engine

CACHE = "t2hx-path-sl.npz"
PLUGIN_DUMP = "parx-path-sl.dump"
_PLUGIN = re.compile(rb"^0x([0-9a-fA-F]+) 0x([0-9a-fA-F]+) (\d+)$", re.M)
_ROUTE = re.compile(rb"route from src_lid=(\d+) to dest_lid=(\d+) on vl=(\d+)")
_AVAIL = re.compile(rb"Virtual Lanes available: (\d+)")
DEBUG = 0x08                 # OpenSM's OSM_LOG_DEBUG
NONE = 255


@dataclass
class PathSL:
    row: np.ndarray          # (max_lid + 1,) int32: the table row of a source LID, -1
    base: np.ndarray         # (rows, max_lid + 1) uint8: base SL towards each LID; 255 none
    split: np.ndarray        # (16,) SLs a base spreads over (DFSSSP's balancing; else 1)

    def sl(self, slid: np.ndarray, dlid: np.ndarray, draw: np.ndarray) -> np.ndarray:
        """SLs of paths slid -> dlid; ``draw``: a non-negative integer per path (the
        stand-in of OpenSM's rand())."""
        ok = (slid < len(self.row)) & (dlid < self.base.shape[1])
        row = np.where(ok, self.row[np.minimum(slid, len(self.row) - 1)], -1)
        b = np.where(row >= 0, self.base[np.maximum(row, 0),
                                         np.minimum(dlid, self.base.shape[1] - 1)], NONE)
        b = b.astype(np.int64)
        if (b == NONE).any():
            k = int(np.argmax(b == NONE))
            raise RoutingError(f"no SL for the path from LID {int(slid[k])} to LID "
                               f"{int(dlid[k])} in the routing engine's table", field="sl",
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
    return PathSL(np.arange(top + 1, dtype=np.int32), base, split)


def parse_plugin(text: bytes, tables: Tables, guid2lid: dict[int, tuple[int, int]]
                 ) -> PathSL | None:
    """The plugin's (source switch, destination LID) -> SL dump as a table by source LID:
    every LID of an HCA port takes the row of the switch that port is cabled to."""
    rows = _PLUGIN.findall(text)
    if not rows:
        return None
    fabric = tables.fabric
    switch_row = {fabric.nodes[s].guid: k for k, s in enumerate(fabric.switches())}
    guid = np.array([int(g, 16) for g, _, _ in rows], dtype=np.uint64)
    dlid = np.array([int(d, 16) for _, d, _ in rows], dtype=np.int64)
    sl = np.array([int(x) for _, _, x in rows], dtype=np.int64)
    try:
        sw = np.array([switch_row[int(g)] for g in guid], dtype=np.int64)
    except KeyError:
        raise RoutingError("the path-SL dump names a switch this fabric lacks",
                           field="sl", fix="re-route the plane") from None
    top = max(int(dlid.max()), max(hi for _, hi in guid2lid.values()))
    # px_path_sl answers 0 where the plugin has no layer (a destination on the source's
    # own switch) or knows neither end
    base = np.zeros((len(switch_row), top + 1), dtype=np.uint8)
    base[sw, dlid] = sl
    row = np.full(top + 1, -1, dtype=np.int32)
    node_of = {fabric.nodes[s].guid: s for s in fabric.switches()}
    for h in fabric.hcas():
        for port in range(1, fabric.nodes[h].ports + 1):
            link = tables.link_of[h, port]
            if link < 0:
                continue
            lo = int(tables.base_lid[h, port])
            row[lo:lo + (1 << tables.lmc)] = switch_row[fabric.nodes[
                int(tables.link_dst[link])].guid]
    for g, s in node_of.items():                 # a switch's own LID: its own row
        lo = int(tables.base_lid[s, 0])
        if lo:
            row[lo] = switch_row[g]
    split = np.ones(16, dtype=np.int64)
    return PathSL(row, base, split)


def path_sl(tables: Tables, run: Path, engine: str) -> PathSL | None:
    """The run's per-path SL table (None for engines without virtual layers)."""
    if routing_engine(engine).path_sl is None:
        return None
    run = Path(run)
    cached = run / CACHE
    if cached.is_file():
        with np.load(cached) as data:
            return PathSL(data["row"], data["base"], data["split"])
    table = _read(tables, run, run, engine)
    if table is None:
        table = _reroute(tables, run, engine)
    try:
        with tempfile.NamedTemporaryFile(dir=run, suffix=".tmp", delete=False) as fh:
            np.savez_compressed(fh, row=table.row, base=table.base, split=table.split)
        Path(fh.name).chmod(0o644)
        Path(fh.name).replace(cached)
    except OSError:
        pass                          # read-only dumps: computed again next time
    return table


def _read(tables: Tables, run: Path, out: Path, engine: str) -> PathSL | None:
    """The table from a routing's outputs in ``out`` (the run's LIDs in ``run``)."""
    if routing_engine(engine).path_sl == SL_FROM_LOG:
        log = out / "opensm.log"
        return parse_log(log.read_bytes()) if log.is_file() else None
    dump = out / PLUGIN_DUMP
    if not dump.is_file():
        return None
    return parse_plugin(dump.read_bytes(), tables, read_guid2lid(run / "guid2lid"))


def _reroute(tables: Tables, run: Path, engine: str) -> PathSL:
    """Route again with debug logging and the run's LIDs; the LFTs must not change."""
    from t2hx.routing.opensm import route

    conf = _conf(run / "opensm.conf")
    flags = int(str(conf.get("log_flags", "0x43")), 0) | (DEBUG if routing_engine(engine).path_sl == SL_FROM_LOG else 0)
    extra: dict[str, object] = {k: v for k, v in conf.items() if k not in (
        "lmc", "log_flags", "dump_files_dir", "honor_guid2lid_file", "root_guid_file",
        "cn_guid_file", "event_plugin_name")}     # the plugin's path: opensm.plugin_setup
    extra["log_flags"] = hex(flags)
    lids = {g: lo for g, (lo, _) in read_guid2lid(run / "guid2lid").items()}
    tmp = Path(tempfile.mkdtemp(prefix="t2hx-pathsl-"))
    try:
        again = route(tables.fabric, tmp, engine, tables.lmc, extra_conf=extra, guid2lid=lids)
        if again.lfts.read_bytes() != (run / "opensm-lfts.dump").read_bytes():
            raise RoutingError("OpenSM routed differently when asked for its SL table",
                               file=run / "opensm-lfts.dump", field="sl",
                               fix="re-route the plane, then retry")
        table = _read(tables, run, tmp, engine)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if table is None:
        raise RoutingError(f"{engine} left no SL table", file=run / "opensm.log",
                           field="sl", fix="rebuild the parx plugin (run/setup); check that "
                           "OpenSM logs at debug level")
    return table


def _conf(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and not line.startswith("#"):
                out[parts[0]] = parts[1].strip()
    return out
