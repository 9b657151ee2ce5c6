"""A plane's OpenSM as a long-running daemon that is started again whenever it exits: the
supervisor ``t2hx sm apply`` relies on to restart OpenSM with another engine or LMC
(docs/cluster.md). Sites that run OpenSM under systemd with ``Restart=always`` do not need
it; the test cluster does, and with ``ibsim=True`` it also serves the plane's fabric from
ibsim, standing in for the plane's switches (OpenSM through libumad2sim).

The first start writes ``opensm.sm.conf_file`` when it does not exist yet: the plane's first
engine and LMC, the dump and log options the verification reads, our plugin when the plane
lists one of its engines, and the plane's ``opensm.options``.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.conf import System
from t2hx.fabric.build import build_plane
from t2hx.fabric.netfile import write_netfile
from t2hx.progress import Progress
from t2hx.routing import parx
from t2hx.routing.opensm import (opensm_binary, opensm_conf, plugin_env,
                                 spawn, start_ibsim, stop, tree_files, umad2sim)
from t2hx.routing.smhost import Request, install_lid_policy, set_options, wanted_options
from t2hx.routing_engines import routing_engine

RESTART_PAUSE = 0.5     # seconds between an exit and the next start (no busy loop)


def initial_conf(system: System, plane: str) -> str:
    """opensm.conf for the plane's first engine (what a site would have written)."""
    spec = system.plane(plane).opensm
    sm, fabric = spec["sm"], build_plane(system, plane)
    engine = spec["routing"][0]
    req = Request(plane, engine, parx.engine_lmc(engine, spec["lmc"]))
    dumps = Path(spec["dump_dir"])
    dumps.mkdir(parents=True, exist_ok=True)
    extra: dict[str, object] = {"log_file": sm["log_file"], **spec["options"]}
    if any(routing_engine(e).roots for e in spec["routing"]):
        extra.update(tree_files(fabric, dumps))
    text = opensm_conf(fabric, engine, req.lmc, dumps, extra)
    return set_options(text, wanted_options(req, sm, {}))


def run(system: System, plane: str, state: Path, ibsim: bool = False,
        quiet: bool | None = None) -> int:
    """Run the plane's OpenSM until SIGTERM/SIGINT, starting it again whenever it exits."""
    spec = system.plane(plane).opensm
    sm, fabric = spec["sm"], build_plane(system, plane)
    state.mkdir(parents=True, exist_ok=True)
    conf, cache = Path(sm["conf_file"]), Path(sm["cache_dir"])
    cache.mkdir(parents=True, exist_ok=True)
    Path(sm["log_file"]).parent.mkdir(parents=True, exist_ok=True)
    if not conf.is_file():
        atomic_write(conf, initial_conf(system, plane))
        if routing_engine(spec["routing"][0]).lid_policy:
            install_lid_policy(fabric, cache, system.path)
    env = dict(os.environ, OSM_CACHE_DIR=str(cache), **plugin_env())
    stopping: list[int] = []

    def on_stop(signum: int, _frame: object) -> None:
        stopping.append(signum)

    old = {s: signal.signal(s, on_stop) for s in (signal.SIGTERM, signal.SIGINT)}
    sim = None
    try:
        with Progress(f"sm {plane}", quiet=quiet) as prog:
            if ibsim:
                env.update(IBSIM_SOCKNAME=f"t2hx-sm-{os.getpid()}-{uuid.uuid4().hex[:8]}",
                           SIM_HOST=fabric.nodes[fabric.hcas()[0]].name,
                           LD_PRELOAD=str(umad2sim()))
                netfile = write_netfile(fabric, state / "fabric.net")
                sim = start_ibsim(fabric, netfile, state, {k: v for k, v in env.items()
                                                           if k != "LD_PRELOAD"}, 120.0)
                prog.say(f"ibsim serves {fabric.name} ({len(fabric.hcas())} HCAs)")
            supervise(conf, env, state, stopping, prog)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if sim is not None:
            stop(sim)
    return 0


def supervise(conf: Path, env: dict[str, str], state: Path, stopping: list[int],
              prog: Progress) -> None:
    starts = 0
    while not stopping:
        with open(state / "opensm.out", "a") as log:
            proc = spawn([opensm_binary(), "-F", str(conf)], env, log, state)
        starts += 1
        prog.say(f"OpenSM started (pid {proc.pid}, start {starts})")
        while proc.poll() is None and not stopping:
            time.sleep(0.2)
        if stopping:
            stop(proc)
            break
        prog.say(f"OpenSM exited with status {proc.returncode}; starting it again")
        time.sleep(RESTART_PAUSE)
