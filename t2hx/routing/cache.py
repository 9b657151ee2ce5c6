"""The routing cache: a plane routed by the real OpenSM under ibsim, once per input.

Every engine is routed with the arguments ``t2hx reproduce`` uses
(:func:`t2hx.routing.engines.route_args`: our plugin engines with their LMC, LID policy, QoS and no fallback). Runs are
cached under ``<work>/routing/<sys>/<plane>/<engine>-lmc<N>[-<inputs>]/`` (the suffix names
the content of a demand or job file) and reused while the system conf's sha256, the
generated fabric's netfile sha256 and the digest of the routing arguments (input files by
content, our plugin library) - all stored in ``t2hx-conf.sha256`` next to the dumps - match.
Concurrent users of one entry (simulated cases as parallel Slurm jobs; the cache then lives on
a shared filesystem: ``T2HX_WORK_ROOT``) serialise on a lock file beside it, so a plane is
never routed twice at once. A run routes into a temp directory beside the entry and renames
it into place whole: a job killed mid-routing leaves no half-written entry (its temp
directory is removed by the next router). See docs/routing.md.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from t2hx.atomic import atomic_write, replace_dir
from t2hx.conf import System
from t2hx.errors import RoutingError, WorkloadError
from t2hx.fabric.graph import Fabric
from t2hx.fabric.netfile import render
from t2hx.routing.engines import route_args
from t2hx.routing_engines import DEMAND, RoutingInput, routing_engine

STAMP = "t2hx-conf.sha256"


def routing_dir(work: Path, system: System, plane: str, engine: str, lmc: int,
                tag: str = "") -> Path:
    return work / "routing" / system.name / plane / \
        (f"{engine}-lmc{lmc}-{tag}" if tag else f"{engine}-lmc{lmc}")


def ensure_routing(system: System, plane: str, engine: str, lmc: int | None, work: Path,
                   fabric: Fabric, quiet: bool = True,
                   routing_input: RoutingInput | None = None) -> Path:
    """Route with real OpenSM unless a cached run for this exact conf and input exists."""
    check_input(fabric, routing_input)
    args = route_args(fabric, engine, system.plane(plane).opensm, system.path, lmc,
                      routing_input)
    if lmc is not None and lmc != args["lmc"]:     # our engines' LID policy fixes the LMC
        raise WorkloadError(f"{engine} routes with LMC {args['lmc']}, not {lmc}", field="lmc",
                            fix=f"drop --lmc or pass --lmc {args['lmc']}")
    out = routing_dir(work, system, plane, engine, args["lmc"], inputs_tag(args))
    out.parent.mkdir(parents=True, exist_ok=True)
    # Simulated jobs may start side by side: one routes, the others wait and reuse.
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _route_locked(system, plane, engine, args, out, fabric, quiet)


def check_input(fabric: Fabric, routing_input: RoutingInput | None) -> None:
    """A demand or job file against the fabric, as ``t2hx demand check`` does: OpenSM's
    plugin only logs a node it does not know and routes without it."""
    from t2hx.routing import demand as dm

    if routing_input is None:
        return
    path = routing_input.path
    if routing_input.kind == DEMAND:
        dm.validate_demand(dm.read_demand(path), fabric, path)
    else:
        dm.validate_jobs(dm.read_jobs(path), fabric, path)


def _route_locked(system: System, plane: str, engine: str, args: dict, out: Path,
                  fabric: Fabric, quiet: bool) -> Path:
    from t2hx.progress import Progress
    from t2hx.routing.lft import load_tables
    from t2hx.routing.opensm import route

    stamp = out / STAMP
    # The conf, the generated fabric (GUIDs, cabling: generator code can change while the
    # conf does not) and the routing inputs (demand/job file, plugin build) must all match.
    want = " ".join((system.sha256, hashlib.sha256(render(fabric).encode()).hexdigest(),
                     args_digest(args, engine)))
    if stamp.exists() and stamp.read_text().strip() == want \
            and (out / "opensm-lfts.dump").exists() and (out / "guid2lid").exists():
        return out
    for stale in out.parent.glob(f".{out.name}.*.tmp"):   # a killed router's (we hold the lock)
        shutil.rmtree(stale, ignore_errors=True)
    fresh = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp"))
    fresh.chmod(0o755)                   # mkdtemp's 0700 would hide it from other users' jobs
    fell_back = None
    try:
        with Progress(f"routing {system.name}/{plane} {engine}", quiet=quiet) as prog:
            prog.say("running ibsim + OpenSM")
            run = route(fabric, fresh, engine, timeout=system.plane(plane).opensm["timeout"],
                        **args)
        if run.summary.get("fallback") or run.summary.get("engine_used") != engine:
            fell_back = run.summary.get("engine_used")
        else:
            # OpenSM says nothing when it cannot write its dumps (a full disk leaves them
            # empty): only tables that load whole are a good run, and only those look cached.
            load_tables(fabric, fresh, args["lmc"])
            atomic_write(fresh / STAMP, want + "\n")
    finally:
        # Whole, also after an error (its log is what the user reads), but stamped only
        # when good: readers see the old entry or this one, never half of one.
        replace_dir(fresh, out)
    if fell_back is not None:
        raise RoutingError(f"OpenSM fell back from {engine} to {fell_back}",
                           file=out / Path(run.log).name,
                           fix="read the ERR lines; the engine cannot route this plane")
    return out


def _plugin_options(args: dict) -> list[tuple[str, str]]:
    opts = str(args.get("extra_conf", {}).get("event_plugin_options", ""))
    return [(item.partition("=")[0], item.partition("=")[2])
            for item in opts.replace(",", " ").split()]


def _content(value: str) -> str:
    """A plugin option's value as the run sees it: a file by its content's sha256."""
    path = Path(value)
    return hashlib.sha256(path.read_bytes()).hexdigest() if value and path.is_file() else value


def args_digest(args: dict, engine: str) -> str:
    """sha256 of everything a routing run with ``args`` depends on besides the fabric: the
    arguments (input files by content, not by path) and, for our engines, the plugin."""
    from t2hx.routing.opensm import OPENSM_ENV, opensm_binary, parx_library

    conf = {k: v for k, v in args.get("extra_conf", {}).items() if k != "event_plugin_options"}
    doc = {"engine": engine, "lmc": args.get("lmc"), "conf": conf,
           "options": [(k, _content(v)) for k, v in _plugin_options(args)],
           "guid2lid": sorted((args.get("guid2lid") or {}).items())}
    h = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode())
    lib = parx_library()
    if routing_engine(engine).ours and lib.is_file():
        h.update(lib.read_bytes())
    if os.environ.get(OPENSM_ENV):       # another OpenSM build may route differently
        h.update(Path(opensm_binary()).read_bytes())
    return h.hexdigest()


def inputs_tag(args: dict) -> str:
    """A short name for the input files of a routing run ('' without any): runs of one
    engine with different demand/job files must not share (and overwrite) one directory."""
    files = [(k, _content(v)) for k, v in _plugin_options(args) if v and Path(v).is_file()]
    if not files:
        return ""
    return hashlib.sha256(json.dumps(sorted(files)).encode()).hexdigest()[:12]
