"""SAR re-routes for a job-history replay without OpenSM: ``parx/px-sar`` runs the plugin's
own sar engine (sar.c and the routing core it shares with PARX) on the switch graph OpenSM
built for the day's first routing (the plugin writes it with option ``px_snapshot=``), one
job file after another, and answers each on its stdout once the tables are written. The
forwarding tables are those OpenSM would install after a SIGHUP re-route (the test routes
sampled job sets both ways: tests/test_history_sar.py); what is left out is OpenSM pushing
them to the simulated switches, which no metric of the replay reads.

On TSUBAME2's rail (1,408 nodes, 392 switches) a day's SAR routings take a sixth of the
SIGHUP path's time, the graph kept from an earlier day (docs/history.md#routing-speed)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from t2hx import ROOT
from t2hx.atomic import atomic_write
from t2hx.errors import RoutingError
from t2hx.routing.lft import Tables

BINARY = ROOT / "parx" / "px-sar"
PLUGIN = ROOT / "parx" / "libparx.so"
SNAPSHOT = "px-snapshot"         # the file the plugin writes into a routing's directory
MAGIC = b"px-lft 1 "
SL_MAGIC = b"px-sl 1 "
NO_PATH = 255
#: What a graph entry keeps of the OpenSM routing that wrote it: the snapshot, and the dumps
#: the day's base tables are read from (t2hx.routing.lft.load_tables).
KEPT = (SNAPSHOT, "guid2lid", "opensm-lfts.dump")


def binary() -> Path:
    if not BINARY.is_file():
        raise RoutingError("px-sar is not built", file=BINARY, fix="run/setup (make -C parx)")
    return BINARY


def read_lfts(path: Path, tables: Tables) -> np.ndarray:
    """A px-lft 1 file as the (nodes × LIDs) egress ports of ``tables`` (-1: no path)."""
    data = path.read_bytes()
    head, _, body = data.partition(b"\n")
    if not head.startswith(MAGIC):
        raise RoutingError("not a px-lft 1 file", file=path, fix="rebuild parx (make -C parx)")
    nsw, max_lid = (int(x) for x in head[len(MAGIC):].split())
    width = max_lid + 1
    if len(body) != nsw * (8 + width) or width != tables.lft.shape[1]:
        raise RoutingError(f"{len(body)} bytes for {nsw} switches and max LID {max_lid}",
                           file=path, fix="the snapshot is from another fabric; re-route")
    rows = np.frombuffer(body, dtype=np.uint8).reshape(nsw, 8 + width)
    index = _by_guid(path, rows[:, :8].copy().view("<u8").ravel(), tables)
    lft = np.full_like(tables.lft, -1)
    ports = rows[:, 8:].astype(np.int16)
    ports[ports == NO_PATH] = -1
    lft[index] = ports
    return lft


def read_layers(path: Path, tables: Tables) -> np.ndarray:
    """A px-sl 1 file as the (nodes × LIDs) layer (SL = VL) of the path from each switch
    towards each destination LID of ``tables`` (255: none)."""
    data = path.read_bytes()
    head, _, body = data.partition(b"\n")
    if not head.startswith(SL_MAGIC):
        raise RoutingError("not a px-sl 1 file", file=path, fix="rebuild parx (make -C parx)")
    ndest, nsw, _layers = (int(x) for x in head[len(SL_MAGIC):].split())
    if len(body) != nsw * 8 + ndest * (2 + nsw):
        raise RoutingError(f"{len(body)} bytes for {ndest} destinations and {nsw} switches",
                           file=path, fix="the snapshot is from another fabric; re-route")
    rows = _by_guid(path, np.frombuffer(body[:nsw * 8], dtype="<u8"), tables)
    dest = np.frombuffer(body[nsw * 8:], dtype=np.uint8).reshape(ndest, 2 + nsw)
    lids = dest[:, :2].copy().view("<u2").ravel().astype(np.int64)
    if lids.max(initial=0) >= tables.lft.shape[1]:
        raise RoutingError(f"LID {lids.max()} beyond the fabric's {tables.lft.shape[1] - 1}",
                           file=path, fix="the snapshot is from another fabric; re-route")
    out = np.full(tables.lft.shape, NO_PATH, dtype=np.uint8)
    out[np.ix_(np.asarray(rows), lids)] = dest[:, 2:].T
    return out


def _by_guid(path: Path, guids: np.ndarray, tables: Tables) -> list[int]:
    """The node index in ``tables`` of each switch GUID; every switch exactly once."""
    by_guid = {n.guid: i for i, n in enumerate(tables.fabric.nodes) if n.kind == "switch"}
    missing = [int(g) for g in guids if int(g) not in by_guid]
    if missing or len(guids) != len(by_guid):
        raise RoutingError(f"{len(missing)} switch GUIDs not in fabric "
                           f"'{tables.fabric.name}'", file=path, fix="re-route this fabric")
    return [by_guid[int(g)] for g in guids]


def graph_key(system_sha256: str, plane: str, options: dict) -> str:
    """What the graph OpenSM builds for a plane depends on: the conf file, the plane, the
    plugin that writes the snapshot, px-sar that reads it, and the routing's OpenSM options."""
    text = json.dumps([system_sha256, plane, digest(PLUGIN), digest(BINARY), options],
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


def keep_graph(out: Path, entry: Path) -> None:
    """Keep a routing's snapshot and dumps as the graph entry ``entry`` (staged, then renamed:
    two days routing at once leave one whole entry)."""
    if entry.is_dir():
        return
    stage = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    for name in KEPT:
        shutil.copyfile(out / name, stage / name)
    try:
        stage.rename(entry)
    except OSError:                     # another day kept it first
        shutil.rmtree(stage, ignore_errors=True)


class PxSar:
    """``parx/px-sar`` serving one snapshot: ``route(text)`` gives ``tables`` (the graph's
    first routing) with the LFTs of that job file; job and LFT files live in a temporary
    directory under ``work``. Use as a context manager (it ends the process and removes
    that directory)."""

    def __init__(self, snapshot: Path, tables: Tables, work: Path) -> None:
        if not snapshot.is_file():
            raise RoutingError("OpenSM wrote no graph snapshot", file=snapshot,
                               fix="rebuild the plugin (make -C parx) so it knows px_snapshot")
        self.tables = tables
        self.dir = Path(tempfile.mkdtemp(prefix="px-sar-", dir=work))
        self.proc = subprocess.Popen([str(binary()), str(snapshot)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def __enter__(self) -> PxSar:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)

    def route(self, text: str) -> Tables:
        return self._run(text, None)[0]

    def route_with_layers(self, text: str) -> tuple[Tables, np.ndarray]:
        """The tables and the layer of every (switch, destination LID) path (read_layers)."""
        tables, layers = self._run(text, self.dir / "layers.px")
        assert layers is not None
        return tables, layers

    def _run(self, text: str, sl: Path | None) -> tuple[Tables, np.ndarray | None]:
        jobs, out = self.dir / "jobs.txt", self.dir / "lfts.px"
        atomic_write(jobs, text)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(f"{jobs} {out}" + (f" {sl}\n" if sl else "\n"))
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        answer = self.proc.stdout.readline().strip()
        if answer != f"ok {out}":
            why = answer.removeprefix("error ") or (self.proc.stderr.read().strip()
                                                     if self.proc.stderr else "") or "no answer"
            raise RoutingError(f"px-sar: {why}", file=jobs, fix="route this job set with "
                               "OpenSM (t2hx reroute --routing sar) to see its log")
        tables = dataclasses.replace(self.tables, lft=read_lfts(out, self.tables))
        return tables, (read_layers(sl, tables) if sl else None)
