"""Route a fabric with the real, stock OpenSM on an ibsim-simulated subnet.

ibsim serves the fabric's MADs over a unix socket named by IBSIM_SOCKNAME (unique per run,
so runs overlap safely); OpenSM runs once (``-o``) with libumad2sim preloaded, writes its
dumps (``opensm-lfts.dump``, ``opensm-subnet.lst``) and the ``guid2lid`` cache, and exits.
Both processes live in their own process group and are killed on every exit path.

A site may route with its own build (e.g. the Spack view's OpenSM and plugin): ``T2HX_OPENSM``
names the opensm binary (default: ``opensm`` on PATH), ``T2HX_PARX_LIB`` the PARX/SAR plugin
(default: parx/libparx.so of this checkout).
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from t2hx.errors import RoutingError
from t2hx.fabric.graph import Fabric
from t2hx.atomic import atomic_write
from t2hx.fabric.netfile import write_netfile
from t2hx.routing_engines import routing_engine

UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
READY_MARK = "Network simulator ready."
OPENSM_ENV = "T2HX_OPENSM"
PARX_LIB_ENV = "T2HX_PARX_LIB"
#: Our event plugin, which registers our routing engines: OpenSM dlopen()s
#: lib<event_plugin_name>.so.
PLUGIN_NAME = "parx"
PARX_LIB_NAME = f"lib{PLUGIN_NAME}.so"
_LIVE: set[int] = set()


@dataclass
class RoutingRun:
    out_dir: Path
    summary: dict

    @property
    def lfts(self) -> Path:
        return self.out_dir / "opensm-lfts.dump"

    @property
    def subnet(self) -> Path:
        return self.out_dir / "opensm-subnet.lst"

    @property
    def guid2lid(self) -> Path:
        return self.out_dir / "guid2lid"

    @property
    def log(self) -> Path:
        return self.out_dir / "opensm.log"


def umad2sim() -> Path:
    for candidate in (Path(os.environ.get("T2HX_UMAD2SIM", "")), UMAD2SIM,
                      *Path("/usr/lib").glob("*/umad2sim/libumad2sim.so")):
        if candidate.is_file():
            return candidate
    raise RoutingError("libumad2sim.so not found", fix="install Debian package libumad2sim0 "
                       "(run/setup does it as root) or set T2HX_UMAD2SIM")


def opensm_conf(fabric: Fabric, engine: str, lmc: int, dump_dir: Path,
                extra: dict[str, object]) -> str:
    lines = {
        "routing_engine": engine,
        "lmc": lmc,
        "log_flags": "0x43",  # errors, info and the routing dumps
        "dump_files_dir": str(dump_dir),
        "honor_guid2lid_file": "TRUE",
        "sm_priority": 15,
        "max_op_vls": 8,
    }
    if routing_engine(engine).roots:
        lines.update(tree_files(fabric, dump_dir))
    lines.update({k: v for k, v in extra.items()})
    return "".join(f"{k} {v}\n" for k, v in lines.items())


def tree_files(fabric: Fabric, dump_dir: Path) -> dict[str, str]:
    """ftree/updn need the roots (top-level switches) and the compute-node GUIDs."""
    levels = [fabric.nodes[s].attrs.get("level") for s in fabric.switches()]
    if not any(levels):
        return {}
    top = max(lv for lv in levels if lv is not None)
    roots = [f"0x{fabric.nodes[s].guid:016x}" for s in fabric.switches()
             if fabric.nodes[s].attrs.get("level") == top]
    cns = [f"0x{fabric.nodes[h].port_guid(p):016x}" for h in fabric.hcas()
           for p in range(1, fabric.nodes[h].ports + 1)]
    atomic_write(dump_dir / "root_guids.txt", "\n".join(roots) + "\n")
    atomic_write(dump_dir / "cn_guids.txt", "\n".join(cns) + "\n")
    return {"root_guid_file": str(dump_dir / "root_guids.txt"),
            "cn_guid_file": str(dump_dir / "cn_guids.txt")}


def guid2lid_text(fabric: Fabric, lids: dict[int, int], lmc: int) -> str:
    """OpenSM's guid2lid cache: HCA ports get 2^lmc LIDs, switch port 0 one LID (OpenSM
    drops entries whose range does not match, so the policy would silently not apply)."""
    switch_guids = {fabric.nodes[s].guid for s in fabric.switches()}
    lines = []
    for guid, lid in sorted(lids.items(), key=lambda kv: kv[1]):
        span = 1 if guid in switch_guids else 1 << lmc
        # OpenSM's own cache keeps a blank line after each entry; without it the reader
        # takes the next line as a continuation and drops the entry.
        lines.append(f"0x{guid:016x} 0x{lid:04x} 0x{lid + span - 1:04x}\n\n")
    return "".join(lines)


def route(fabric: Fabric, out_dir: str | Path, engine: str, lmc: int = 0,
          extra_conf: dict[str, object] | None = None, guid2lid: dict[int, int] | None = None,
          timeout: float = 600.0, env: dict[str, str] | None = None) -> RoutingRun:
    """Route ``fabric`` with OpenSM's ``engine``; dumps and a summary land in ``out_dir``."""
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("opensm-lfts.dump", "opensm-subnet.lst", "guid2lid", "opensm.log"):
        (out / stale).unlink(missing_ok=True)
    cache = out / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    if guid2lid:
        atomic_write(cache / "guid2lid", guid2lid_text(fabric, guid2lid, lmc))
    netfile = write_netfile(fabric, out / "fabric.net", guid2lid, lmc)
    extra, plugin_env = plugin_setup(engine, extra_conf or {})
    conf = atomic_write(out / "opensm.conf", opensm_conf(fabric, engine, lmc, out, extra))
    run_env = dict(os.environ, IBSIM_SOCKNAME=f"t2hx-{os.getpid()}-{uuid.uuid4().hex[:12]}",
                   OSM_CACHE_DIR=str(cache), SIM_HOST=fabric.nodes[fabric.hcas()[0]].name,
                   **plugin_env, **(env or {}))
    start = time.monotonic()
    ibsim = start_ibsim(fabric, netfile, out, run_env, timeout)
    try:
        _run_opensm(conf, out, run_env, timeout - (time.monotonic() - start))
    finally:
        stop(ibsim)
    seconds = time.monotonic() - start
    if (cache / "guid2lid").exists():
        shutil.copyfile(cache / "guid2lid", out / "guid2lid")
    summary = summarise(fabric, out, engine, lmc, seconds)
    atomic_write(out / "opensm-run.json", json.dumps(summary, indent=2) + "\n")
    return RoutingRun(out, summary)


def opensm_binary() -> str:
    """The opensm to run: ``$T2HX_OPENSM`` when set, else ``opensm`` from PATH."""
    path = os.environ.get(OPENSM_ENV)
    if not path:
        return "opensm"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RoutingError(f"{path} is not an executable file", field=OPENSM_ENV,
                           fix="point it at an opensm binary, e.g. <Spack view>/sbin/opensm, "
                           "or unset it to use opensm from PATH")
    return path


def parx_library() -> Path:
    """The PARX/SAR plugin: ``$T2HX_PARX_LIB`` when set, else parx/libparx.so."""
    from t2hx import ROOT

    path = os.environ.get(PARX_LIB_ENV)
    if not path:
        return ROOT / "parx" / PARX_LIB_NAME
    lib = Path(path).resolve()
    if not lib.is_file() or Path(path).name != PARX_LIB_NAME:
        raise RoutingError(f"{path} is not a file named {PARX_LIB_NAME}", field=PARX_LIB_ENV,
                           fix="point it at the plugin, e.g. <Spack view>/lib/libparx.so "
                           "(OpenSM loads it by that name), or unset it")
    return Path(path)


def plugin_setup(engine: str, extra: dict[str, object]) -> tuple[dict, dict[str, str]]:
    """For our plugin engines, the conf lines and library path that make the stock opensm
    load the plugin (:func:`parx_library`; OpenSM dlopen()s lib<event_plugin_name>.so)."""
    if not routing_engine(engine).ours or "event_plugin_name" in extra:
        return dict(extra), {}
    return {"event_plugin_name": PLUGIN_NAME, **extra}, plugin_env()


def plugin_env() -> dict[str, str]:
    """The library path under which the stock opensm finds our plugin."""
    lib = parx_library()
    if not lib.exists():
        raise RoutingError("our OpenSM plugin (the parx, sar ... engines) is not built",
                           file=lib, fix="run run/setup (it runs make -C parx)")
    paths = [str(lib.parent)] + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    return {"LD_LIBRARY_PATH": ":".join(paths)}


def start_ibsim(fabric: Fabric, netfile: Path, out: Path, env: dict[str, str],
                 timeout: float) -> subprocess.Popen:
    n = len(fabric.nodes)
    ports = sum(node.ports + 1 for node in fabric.nodes)
    cmd = ["ibsim", "-s", "-n", "-N", str(max(2048, 2 * n)),
           "-S", str(max(256, 2 * len(fabric.switches()))), "-P", str(max(13312, 2 * ports)),
           str(netfile)]
    log = open(out / "ibsim.log", "w")
    proc = spawn(cmd, env, log, out)
    deadline = time.monotonic() + min(timeout, 120.0)
    while time.monotonic() < deadline:
        if READY_MARK in (out / "ibsim.log").read_text(errors="replace"):
            return proc
        if proc.poll() is not None:
            tail = (out / "ibsim.log").read_text(errors="replace").strip().splitlines()[-1:]
            raise RoutingError(f"ibsim exited ({' '.join(tail)})", file=netfile,
                               fix="check the netfile; see ibsim.log next to it")
        time.sleep(0.05)
    stop(proc)
    raise RoutingError("ibsim did not become ready", file=netfile,
                       fix="raise opensm.timeout or check ibsim.log")


def _run_opensm(conf: Path, out: Path, env: dict[str, str], timeout: float) -> None:
    env = dict(env, LD_PRELOAD=str(umad2sim()))
    cmd = [opensm_binary(), "-F", str(conf), "-o", "-f", str(out / "opensm.log")]
    with open(out / "opensm.out", "w") as log:
        proc = spawn(cmd, env, log, out)
        try:
            # What is left of the run's timeout, no floor: a floor let a fast OpenSM finish
            # a run whose timeout had already passed while ibsim started.
            proc.wait(timeout=max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            raise RoutingError(f"OpenSM did not finish within {timeout:.0f} s", file=conf,
                               field="opensm.timeout", fix="raise the timeout or check "
                               "opensm.log") from None
        finally:
            stop(proc)
    if proc.returncode != 0:
        raise RoutingError(f"OpenSM exited with status {proc.returncode}", file=out /
                           "opensm.log", fix="read the ERR lines in that log")


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
_PR_SET_PDEATHSIG = 1


def _child_setup() -> None:
    """In the child: die with the parent (even on SIGKILL), and take signals again."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


def spawn(cmd: list[str], env: dict[str, str], log, cwd: Path) -> subprocess.Popen:
    # cwd matters: umad2sim fakes sysfs in ./sys-<pid> of the preloaded process.
    # Ctrl-C is held back until the child is registered for cleanup, so no interrupt can
    # fall between fork and bookkeeping and leave an orphan behind.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd,
                                preexec_fn=_child_setup)
        _LIVE.add(proc.pid)
    except FileNotFoundError:
        raise RoutingError(f"{cmd[0]} not found", fix="run run/setup (Debian packages opensm "
                           "and ibsim-utils)") from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return proc


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            _killpg_hard(proc.pid)
            proc.wait()
    _LIVE.discard(proc.pid)


def _killpg_hard(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_LIVE):
        _killpg_hard(pgid)


USED = re.compile(r"osm_ucast_mgr_process: (\S+) tables configured on all switches")
VLS = re.compile(r"Lanes needed: (\d+)")  # dfsssp "Virtual Lanes needed", lash "Lanes needed"
ERR = re.compile(r"ERR [0-9A-F]{4}: (.*)")


def summarise(fabric: Fabric, out: Path, engine: str, lmc: int, seconds: float) -> dict:
    log = (out / "opensm.log").read_text(errors="replace") if (out / "opensm.log").exists() else ""
    used = USED.findall(log)
    if not (out / "opensm-lfts.dump").exists():
        first = ERR.search(log)
        raise RoutingError(f"OpenSM wrote no LFT dump ({first.group(1) if first else 'no error'})",
                           file=out / "opensm.log", fix="read the ERR lines in that log")
    vls = [int(v) for v in VLS.findall(log)]
    return {
        "engine": engine,
        "engine_used": used[-1] if used else "unknown",
        "fallback": bool(used) and used[-1] != engine,
        "lmc": lmc,
        "vls": vls[-1] if vls else 1,
        "hca_count": len(fabric.hcas()),
        "switch_count": len(fabric.switches()),
        "errors": [m.group(1).strip() for m in ERR.finditer(log)][:20],
        "seconds": round(seconds, 3),
    }
