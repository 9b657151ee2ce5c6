"""The subnet manager's side of routing a real plane: make the running OpenSM of one plane
route with the engine and LMC a combo needs (PARX with the job's demand file, SAR with its
job file), then prove it from OpenSM's own output. Runs on the plane's OpenSM host, as
``t2hx sm apply`` (over ssh) or inside ``t2hx sm serve`` (the agent); docs/cluster.md.

A host may run one OpenSM per plane: the plane's is the ``opensm`` process started with
``-F <opensm.sm.conf_file>``, never "any opensm". OpenSM re-reads neither ``routing_engine``
nor ``lmc`` nor its plugin options on SIGHUP (``osm_subnet.c`` marks them not changeable at
run time), so a change of engine or LMC rewrites that conf file and restarts the process;
a new demand or job file only needs SIGHUP (our engines re-read their files on every
routing run). Verification reads what OpenSM wrote after the request: the log line naming
the engine that configured the tables, the LFT dump and guid2lid (LMC, every HCA LID
routed, PARX's quadrant LID policy).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.conf import System
from t2hx.errors import RoutingError, T2hxError
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.progress import Progress
from t2hx.routing import demand as dm, parx
from t2hx.routing.lft import load_tables, read_guid2lid, switch_routes
from t2hx.routing.opensm import PLUGIN_NAME, USED
from t2hx.routing_engines import DEMAND, JOBS, input_options, routing_engine

#: Where the SM host keeps each routing input kind (opensm.sm fields); which engine reads
#: it and by which plugin option is the engine table's (t2hx/routing_engines.py).
SM_FIELD = {DEMAND: "demand_file", JOBS: "jobs_file"}
# Log flags t2hx needs: errors, info (the "tables configured" line) and routing (the dumps).
NEEDED_LOG_FLAGS = 0x43
ERR = re.compile(r"ERR [0-9A-F]{4}: .*")
# Options OpenSM reads only when it starts (osm_subnet.c, "can be updated" = 0).
START_ONLY = ("routing_engine", "lmc", "event_plugin_name", "event_plugin_options",
              "honor_guid2lid_file", "dump_files_dir", "log_file")


@dataclass(frozen=True)
class Request:
    """What a job asks of its plane's subnet manager."""
    plane: str
    engine: str
    lmc: int
    kind: str | None = None       # the routing input's kind (DEMAND, JOBS) or None
    data: bytes = b""             # the input file's content


def request_for(system: System, plane: str, engine: str, kind: str | None = None,
                data: bytes = b"") -> Request:
    """A request with the LMC the engine needs on this plane (PARX: 2, docs/routing.md)."""
    spec = system.plane(plane).opensm
    if engine not in spec["routing"]:
        raise T2hxError(f"plane '{plane}' is not routed with {engine}", file=system.path,
                        field=f"planes.{plane}.opensm.routing",
                        fix=f"use one of: {', '.join(spec['routing'])}")
    return Request(plane, engine, parx.engine_lmc(engine, spec["lmc"]), kind, data)


# --- opensm.conf ------------------------------------------------------------------------

def read_options(text: str) -> dict[str, str]:
    """``key value`` lines of an opensm.conf (comments and blank lines skipped)."""
    out = {}
    for line in text.splitlines():
        words = line.split(None, 1)
        if words and not words[0].startswith("#"):
            out[words[0]] = words[1].strip() if len(words) > 1 else ""
    return out


def set_options(text: str, updates: dict[str, str]) -> str:
    """``text`` with each key of ``updates`` set: its line replaced in place (the first one;
    later duplicates dropped, OpenSM would take the last), missing keys appended."""
    done: set[str] = set()
    lines = []
    for line in text.splitlines():
        words = line.split(None, 1)
        key = words[0] if words and not words[0].startswith("#") else None
        if key in updates:
            if key not in done:
                lines.append(f"{key} {updates[key]}")
                done.add(key)
            continue
        lines.append(line)
    missing = [k for k in updates if k not in done]
    if missing:
        lines.append("# set by t2hx sm apply (docs/cluster.md)")
        lines += [f"{k} {updates[k]}" for k in missing]
    return "\n".join(lines) + "\n"


def wanted_options(req: Request, sm: dict, current: dict[str, str]) -> dict[str, str]:
    """The options a request sets: engine (never a silent fallback), LMC, the log flags the
    verification reads, and for our plugin engines the plugin, QoS (SL→VL) and input files."""
    flags = int(current.get("log_flags", "0x03"), 0) | NEEDED_LOG_FLAGS
    # force_log_flush: a daemon's log is otherwise buffered, and the verification reads it.
    want = {"routing_engine": f"{req.engine},no_fallback", "lmc": str(req.lmc),
            "log_flags": f"0x{flags:02x}", "force_log_flush": "TRUE"}
    row = routing_engine(req.engine)
    if row.ours:
        files = ",".join(f"{opt}={sm[SM_FIELD[kind]]}"
                         for kind, (_, opt) in input_options().items())
        want.update(event_plugin_name=PLUGIN_NAME, event_plugin_options=files, qos="TRUE")
    if row.lid_policy:
        want["honor_guid2lid_file"] = "TRUE"
    return want


# --- the plane's OpenSM process ------------------------------------------------------------

def opensm_pids(conf_file: str | Path) -> list[int]:
    """PIDs of ``opensm`` processes started with ``-F conf_file`` (or ``--config``)."""
    want = os.path.realpath(conf_file)
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if not args or os.path.basename(args[0]) != "opensm":
            continue
        if want in _config_args(args):
            pids.append(int(proc.name))
    return sorted(pids)


def _config_args(args: list[str]) -> list[str]:
    found = []
    for i, arg in enumerate(args):
        if arg in ("-F", "--config") and i + 1 < len(args):
            found.append(args[i + 1])
        elif arg.startswith("--config="):
            found.append(arg.split("=", 1)[1])
        elif arg.startswith("-F") and len(arg) > 2:
            found.append(arg[2:])
    return [os.path.realpath(a) for a in found]


def restart(sm: dict, pids: list[int], deadline: float) -> None:
    """Restart the plane's OpenSM: the site's command, or stop it and wait for its
    supervisor (systemd ``Restart=always``, ``t2hx sm opensm``) to start it again."""
    if sm["restart"]:
        done = subprocess.run(sm["restart"], shell=True, capture_output=True, text=True,
                              timeout=max(1.0, deadline - time.monotonic()))
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RoutingError(f"'{sm['restart']}' failed: {last}", field="opensm.sm.restart",
                               fix="check the command and the rights of the user running it")
    else:
        if not pids:
            raise RoutingError(f"no opensm runs with -F {sm['conf_file']} on this host",
                               field="opensm.sm.conf_file", fix="start the plane's OpenSM with "
                               "that conf file, or set opensm.sm.restart")
        for pid in pids:
            _signal(pid, signal.SIGTERM)
    while time.monotonic() < deadline:
        now = opensm_pids(sm["conf_file"])
        if now and not set(now) & set(pids):
            return
        time.sleep(0.2)
    raise RoutingError(f"OpenSM with -F {sm['conf_file']} did not come back after the restart",
                       field="opensm.sm.restart", fix="give a restart command, or run OpenSM "
                       "under a supervisor (systemd Restart=always, t2hx sm opensm)")


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError:
        raise RoutingError(f"not allowed to signal OpenSM (pid {pid})", field="opensm.sm",
                           fix="run t2hx sm apply as OpenSM's user or root (docs/cluster.md)") \
            from None


# --- apply ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Paths:
    """Where this plane's OpenSM keeps what the verification reads."""
    conf: Path
    log: Path
    dumps: Path
    cache: Path

    @classmethod
    def of(cls, sm: dict, options: dict[str, str], dump_dir: str) -> Paths:
        return cls(Path(sm["conf_file"]), Path(options.get("log_file") or sm["log_file"]),
                   Path(options.get("dump_files_dir") or dump_dir), Path(sm["cache_dir"]))


def apply(system: System, req: Request, timeout: float | None = None,
          quiet: bool | None = None) -> dict:
    """Make the plane's OpenSM route as ``req`` asks; the verified result (raises
    RoutingError when OpenSM did not, so the job's routing step fails)."""
    spec = system.plane(req.plane).opensm
    sm = spec["sm"]
    timeout = timeout or spec["timeout"]
    deadline = time.monotonic() + timeout
    fabric = build_plane(system, req.plane)
    conf = Path(sm["conf_file"])
    if not conf.is_file():
        raise RoutingError("the plane's opensm.conf does not exist on this host", file=conf,
                           field="opensm.sm.conf_file", fix="point it at the -F file of the "
                           "plane's OpenSM (t2hx sm opensm writes one)")
    text = conf.read_text()
    current = read_options(text)
    paths = Paths.of(sm, current, spec["dump_dir"])
    with Progress("sm", quiet=quiet) as prog:
        install_input(req, sm, fabric)
        new = set_options(text, wanted_options(req, sm, current))
        start_only = {k: v for k, v in read_options(new).items() if k in START_ONLY}
        need_restart = start_only != {k: v for k, v in current.items() if k in START_ONLY}
        if routing_engine(req.engine).lid_policy:
            # Before anything is written: a guid2lid of other GUIDs would make OpenSM
            # renumber every port of the real fabric.
            if not same_fabric(fabric, paths.cache / "guid2lid"):
                raise RoutingError(NOT_THIS_FABRIC, file=system.path,
                                   field=f"planes.{req.plane}.topology", fix=NOT_THIS_FABRIC_FIX)
            need_restart |= install_lid_policy(fabric, paths.cache, system.path)
        pids = opensm_pids(conf)
        mark, before = _size(paths.log), _mtime(paths.dumps / "opensm-lfts.dump")
        if not need_restart and new == text and not routing_engine(req.engine).ours:
            # Already routing with this engine and nothing to re-read: verify without
            # disturbing the fabric (a re-route of a stock engine gives the same tables).
            used = last_routed(paths.log)
            if used == req.engine and pids:
                prog.say(f"{req.plane}: OpenSM already routes with {req.engine}")
                result = verify_settled(fabric, paths, req, used, system.path, deadline)
                result.update(plane=req.plane, restarted=False, host=os.uname().nodename)
                return result
        if need_restart:
            prog.say(f"{req.plane}: restarting OpenSM with {req.engine}, LMC {req.lmc}")
            atomic_write(conf, new)
            restart(sm, pids, deadline)
        else:
            if not pids:
                raise RoutingError(f"no opensm runs with -F {conf} on this host",
                                   field="opensm.sm.conf_file",
                                   fix="start the plane's OpenSM with that conf file")
            if new != text:
                atomic_write(conf, new)       # log flags: re-read on SIGHUP
            prog.say(f"{req.plane}: SIGHUP to OpenSM (pid {pids[0]}): re-route")
            _signal(pids[0], signal.SIGHUP)
        used = wait_routed(paths, mark, before, deadline, req.engine)
        result = verify_settled(fabric, paths, req, used, system.path, deadline)
    result.update(plane=req.plane, restarted=need_restart, host=os.uname().nodename)
    return result


def install_input(req: Request, sm: dict, fabric: Fabric) -> None:
    """The engine's input file, validated against the fabric, written whole. A plugin engine
    without input gets an empty file: a previous job's demand must not route this one."""
    for kind, (engine, _) in input_options().items():
        if engine != req.engine:
            continue
        data = req.data if req.kind == kind else b""
        if data:
            with tempfile.NamedTemporaryFile(suffix=".txt") as tmp:
                tmp.write(data)
                tmp.flush()
                if kind == DEMAND:
                    dm.validate_demand(dm.read_demand(tmp.name), fabric, f"the job's {kind}")
                else:
                    dm.validate_jobs(dm.read_jobs(tmp.name), fabric, f"the job's {kind}")
        body = data or f"# no {kind} for this job: balanced routing (t2hx sm apply)\n".encode()
        atomic_write(sm[SM_FIELD[kind]], body)
    if req.kind and req.kind not in SM_FIELD:
        readers = " or ".join(f"{k} ({e})" for k, (e, _) in input_options().items())
        raise T2hxError(f"unknown input kind {req.kind!r}", field="kind", fix=readers)


NOT_THIS_FABRIC = ("the plane's conf does not describe this fabric (its GUIDs differ), so "
                   "PARX's quadrant LIDs cannot be placed or checked")
NOT_THIS_FABRIC_FIX = "describe the plane as the real fabric (docs/cluster.md#known-limits)"


def fabric_guids(fabric: Fabric) -> set[int]:
    """Every GUID guid2lid may name: switches and every HCA port."""
    return {fabric.nodes[s].guid for s in fabric.switches()} | {
        fabric.nodes[h].port_guid(p) for h in fabric.hcas()
        for p in range(1, fabric.nodes[h].ports + 1)}


def same_fabric(fabric: Fabric, guid2lid: Path) -> bool:
    """OpenSM's cache names only this fabric's GUIDs (no cache yet: nothing to compare)."""
    try:
        return set(read_guid2lid(guid2lid)) <= fabric_guids(fabric)
    except RoutingError:
        return True


def install_lid_policy(fabric: Fabric, cache: Path, source: object) -> bool:
    """PARX's quadrant LIDs as OpenSM's guid2lid (read at start with honor_guid2lid_file);
    True when the file changed, i.e. OpenSM must restart to take it."""
    text = parx.guid2lid_file(fabric, parx.lid_policy(fabric, source))
    path = cache / "guid2lid"
    try:
        if path.read_text() == text:
            return False
    except OSError:
        pass
    atomic_write(path, text)
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def last_routed(log: Path, tail: int = 4 << 20) -> str | None:
    """The engine of the last "tables configured" line in OpenSM's log (its last 4 MiB)."""
    found = USED.findall(read_from(log, max(0, _size(log) - tail)))
    return found[-1] if found else None


def wait_routed(paths: Paths, mark: int, before: int, deadline: float, engine: str) -> str:
    """The engine OpenSM names in its first "tables configured" line after ``mark``, once the
    LFT dump has been rewritten (its mtime differs from ``before``)."""
    lfts = paths.dumps / "opensm-lfts.dump"
    used, errors = None, []
    while time.monotonic() < deadline:
        text = read_from(paths.log, mark)
        errors = ERR.findall(text)
        found = USED.findall(text)
        if found:
            used = found[0]
        if used and _mtime(lfts) not in (0, before):
            return used
        time.sleep(0.3)
    what = "no routing line in its log" if not used else f"no new LFT dump ({lfts})"
    raise RoutingError(f"OpenSM did not finish routing with {engine}: {what}"
                       + (f"; first error: {errors[0]}" if errors else ""), file=paths.log,
                       field="opensm.timeout", fix="read that log; the dump needs log_flags "
                       "with 0x40 (t2hx sets it) and dump_files_dir")


def read_from(path: Path, mark: int) -> str:
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size < mark:   # rotated or truncated: all of it
                mark = 0
            fh.seek(mark)
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


class Unrouted(RoutingError):
    """The LFT dump leaves switch entries towards HCA LIDs unset."""


SETTLE = 0.6      # seconds without a change: OpenSM has closed its LFT dump
RESWEEP = 10.0    # seconds to wait for a newer dump after one with unrouted entries


def settled(path: Path, deadline: float, quiet_for: float = SETTLE) -> None:
    """Return once ``path`` has not changed for ``quiet_for`` seconds (or at the deadline).
    OpenSM truncates and rewrites its dumps in place, so a dump read mid-write lacks its last
    switches and looks unrouted."""
    last, since = (-1, -1), time.monotonic()
    while time.monotonic() < deadline:
        state = (_mtime(path), _size(path))
        if time.time_ns() - state[0] >= quiet_for * 1e9:
            return
        if state != last:
            last, since = state, time.monotonic()
        elif time.monotonic() - since >= quiet_for:
            return
        time.sleep(0.1)


def verify_settled(fabric: Fabric, paths: Paths, req: Request, used: str, source: object,
                   deadline: float) -> dict:
    """``verify`` on a dump OpenSM has finished writing. A dump with unrouted entries gets one
    more chance when OpenSM rewrites it soon after (a heavy sweep right after a restart may
    route before every port is up, and the next sweep completes it)."""
    lfts = paths.dumps / "opensm-lfts.dump"
    while True:
        settled(lfts, deadline)
        seen = _mtime(lfts)
        try:
            return verify(fabric, paths, req, used, source)
        except Unrouted:
            grace = min(deadline, time.monotonic() + RESWEEP)
            while _mtime(lfts) == seen and time.monotonic() < grace:
                time.sleep(0.2)
            if _mtime(lfts) == seen:
                raise


def verify(fabric: Fabric, paths: Paths, req: Request, used: str, source: object) -> dict:
    """From OpenSM's own output: the engine that routed, the LMC, and every HCA LID routed
    from every switch, read from the dumps alone; then, when the conf describes this very
    fabric (every GUID of guid2lid is one of the plane's), PARX's quadrant LID policy, which
    the MPI patch relies on and which needs the switches' HyperX coordinates."""
    if used != req.engine:
        raise RoutingError(f"OpenSM routed with {used}, not {req.engine} (fallback)",
                           file=paths.log, fix="read the ERR lines of that log")
    lids = read_guid2lid(paths.cache / "guid2lid")
    routes = switch_routes(paths.dumps / "opensm-lfts.dump")
    hcas = {g: lo_hi for g, lo_hi in lids.items() if g not in routes}
    spans = {hi - lo + 1 for lo, hi in hcas.values()}
    lmc = max(spans, default=1).bit_length() - 1
    if lmc != req.lmc or len(spans) > 1:
        raise RoutingError(f"OpenSM runs with LMC {lmc}, not {req.lmc}",
                           file=paths.cache / "guid2lid", fix=f"check the lmc line of "
                           f"{paths.conf} and restart OpenSM")
    missing = sum(1 for table in routes.values() for lo, _ in hcas.values() if lo not in table)
    if missing or not routes:
        raise Unrouted(f"{missing} switch entries towards HCA LIDs are unrouted",
                           file=paths.dumps / "opensm-lfts.dump", fix="read OpenSM's log")
    same = set(lids) <= fabric_guids(fabric)
    if routing_engine(req.engine).lid_policy:
        if not same:
            raise RoutingError(NOT_THIS_FABRIC, file=source, field=f"planes.{req.plane}.topology",
                               fix=NOT_THIS_FABRIC_FIX)
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copyfile(paths.dumps / "opensm-lfts.dump", Path(tmp) / "opensm-lfts.dump")
            shutil.copyfile(paths.cache / "guid2lid", Path(tmp) / "guid2lid")
            tables = load_tables(fabric, tmp)
        parx.check_lids(fabric, tables.hca_lids(), tables.lmc, source)
    return {"engine": req.engine, "engine_used": used, "lmc": lmc, "verified": True,
            "hca_ports": len(hcas), "switches": len(routes), "conf_fabric": same,
            "input": req.kind, "input_bytes": len(req.data)}
