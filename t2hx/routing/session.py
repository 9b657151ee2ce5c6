"""A plane routed by one long-lived OpenSM under ibsim, re-routed by SIGHUP: what an operator's
OpenSM does when SAR's filtering tool rewrites its job file (seed 004 §3.2.1; ``t2hx sar
watch`` on a real plane). The job-history replay routes SAR this way: a fresh ibsim and
OpenSM per job set would rediscover the fabric and push every forwarding table again, while
a re-route sends only the LFT blocks that changed.

OpenSM re-reads the plugin's job file on every routing; ``reroute`` writes it whole, marks
the end of OpenSM's log, signals, and returns once the log shows the engine's "tables
configured" line and "SUBNET UP" after the mark and the LFT dump has been rewritten.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.errors import RoutingError
from t2hx.fabric.graph import Fabric
from t2hx.fabric.netfile import write_netfile
from t2hx.routing.opensm import (ERR, USED, opensm_binary, opensm_conf, plugin_setup, spawn,
                                 start_ibsim, stop, umad2sim)
from t2hx.routing.smhost import read_from

SUBNET_UP = "SUBNET UP"
LFTS = "opensm-lfts.dump"


class Session:
    """``with Session(fabric, out, "sar", args, input_path) as s: s.reroute(text)``; ``args``
    as t2hx.routing.engines.route_args gives them for ``input_path``."""

    def __init__(self, fabric: Fabric, out: Path, engine: str, args: dict, input_path: Path,
                 timeout: float = 600.0) -> None:
        self.fabric, self.out, self.engine, self.args = fabric, Path(out).resolve(), engine, args
        self.input, self.timeout = Path(input_path), timeout
        self.procs: list = []
        self.reroutes = 0

    def __enter__(self) -> Session:
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "cache").mkdir(exist_ok=True)
        if not self.input.exists():
            atomic_write(self.input, "")
        netfile = write_netfile(self.fabric, self.out / "fabric.net", None, self.args["lmc"])
        extra, plugin_env = plugin_setup(self.engine, self.args.get("extra_conf", {}))
        extra["force_log_flush"] = "TRUE"     # the log is how we see a sweep end
        conf = atomic_write(self.out / "opensm.conf", opensm_conf(
            self.fabric, self.engine, self.args["lmc"], self.out, extra))
        env = dict(os.environ, IBSIM_SOCKNAME=f"t2hx-{os.getpid()}-{uuid.uuid4().hex[:12]}",
                   OSM_CACHE_DIR=str(self.out / "cache"),
                   SIM_HOST=self.fabric.nodes[self.fabric.hcas()[0]].name, **plugin_env)
        try:
            self.procs.append(start_ibsim(self.fabric, netfile, self.out, env, self.timeout))
            self.log = self.out / "opensm.log"
            self.log.unlink(missing_ok=True)
            self.opensm_out = open(self.out / "opensm.out", "w")
            self.procs.append(spawn([opensm_binary(), "-F", str(conf), "-f", str(self.log)],
                                    dict(env, LD_PRELOAD=str(umad2sim())), self.opensm_out,
                                    self.out))
            self._wait(0, 0)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_exc: object) -> None:
        for proc in reversed(self.procs):
            stop(proc)
        self.procs = []
        if getattr(self, "opensm_out", None):
            self.opensm_out.close()

    def reroute(self, text: str) -> Path:
        """Route for ``text`` (the engine's input file); the directory of the new dumps."""
        mark = self.log.stat().st_size
        before = (self.out / LFTS).stat().st_mtime_ns
        atomic_write(self.input, text)
        os.kill(self.procs[-1].pid, signal.SIGHUP)
        self._wait(mark, before)
        self.reroutes += 1
        return self.out

    def _wait(self, mark: int, before: int) -> None:
        deadline = time.monotonic() + self.timeout
        lfts = self.out / LFTS
        while time.monotonic() < deadline:
            if self.procs[-1].poll() is not None:
                raise RoutingError(f"OpenSM exited with status {self.procs[-1].returncode}",
                                   file=self.log, fix="read the ERR lines in that log")
            text = read_from(self.log, mark)
            used = USED.findall(text)
            if used and SUBNET_UP in text.split(used[-1], 1)[-1] and lfts.exists() \
                    and lfts.stat().st_mtime_ns != before:
                if used[-1] != self.engine:
                    raise RoutingError(f"OpenSM fell back from {self.engine} to {used[-1]}",
                                       file=self.log, fix="read the ERR lines in that log")
                cache = self.out / "cache" / "guid2lid"
                if cache.exists():        # stored at SUBNET UP; t2hx.routing.lft reads it here
                    shutil.copyfile(cache, self.out / "guid2lid")
                    return
            time.sleep(0.05)
        errors = ERR.findall(read_from(self.log, mark))
        raise RoutingError(f"OpenSM did not re-route with {self.engine} within "
                           f"{self.timeout:.0f} s" + (f"; first error: {errors[0]}"
                                                      if errors else ""),
                           file=self.log, field="opensm.timeout", fix="raise the timeout or "
                           "read that log")
