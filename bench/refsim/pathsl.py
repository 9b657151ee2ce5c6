"""The SL OpenSM's subnet administrator answers for each (source, destination) HCA pair.

DFSSSP puts every path in a virtual layer and answers the layer as the PathRecord SL (OpenSM's
``path_sl`` callback); an MPI asks once per peer and sends on that SL. ``t2hx`` routes with
``opensm -o`` (one sweep, then exit), so nobody is there to ask: this starts the same fabric
under ibsim with the same opensm.conf as a daemon, waits for ``SUBNET UP``, asks the SA with
``saquery -p --src-to-dst SLID:DLID`` (through libumad2sim, attached to another HCA) for every
ordered pair, checks that this run's LFTs equal the ones t2hx routed, and stops both.

Note (OpenSM 3.3.23, osm_ucast_dfsssp.c): when DFSSSP needs fewer VLs than the ports offer it
spreads a layer over several VLs and answers a *random* one of them per query (``srand(time)``
at start). The SLs recorded here are therefore one draw, kept as data (path_sl.csv); the
layer of a pair is the VL group its SL falls in (``vl_groups`` in routing.json).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from t2hx.fabric.graph import Fabric
from t2hx.fabric.netfile import write_netfile
from t2hx.routing.lft import load_tables
from t2hx.routing.opensm import (
    opensm_binary,
    opensm_conf,
    plugin_setup,
    spawn,
    start_ibsim,
    stop,
    umad2sim,
)

SL_LINE = re.compile(r"^\s*sl\.+0x([0-9a-fA-F]+)\s*$", re.MULTILINE)
SLID_LINE = re.compile(r"^\s*slid\.+(\d+)\s*$", re.MULTILINE)
DLID_LINE = re.compile(r"^\s*dlid\.+(\d+)\s*$", re.MULTILINE)


def query_path_sls(fabric: Fabric, engine: str, lmc: int, extra_conf: dict, out: Path,
                   pairs: list[tuple[int, int]], guid2lid: Path, timeout: float = 120.0
                   ) -> tuple[dict[tuple[int, int], int], Path]:
    """SL per (source LID, destination LID) of ``pairs``, as the SA of a running OpenSM
    answers; returns them and the run directory (its LFT dump and log). ``guid2lid``: the
    t2hx run's LID assignment, handed to this OpenSM as its cache (same LIDs)."""
    out = Path(out).resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cache = out / "cache"
    cache.mkdir()
    shutil.copyfile(guid2lid, cache / "guid2lid")
    netfile = write_netfile(fabric, out / "fabric.net", None, lmc)
    # force_log_flush: only so that SUBNET UP is seen at once (routing is unaffected)
    extra, plugin_env = plugin_setup(engine, {**extra_conf, "force_log_flush": "TRUE"})
    conf = out / "opensm.conf"
    conf.write_text(opensm_conf(fabric, engine, lmc, out, extra))
    hcas = fabric.hcas()
    env = dict(os.environ, IBSIM_SOCKNAME=f"t2hx-refsl-{os.getpid()}-{uuid.uuid4().hex[:8]}",
               OSM_CACHE_DIR=str(cache), SIM_HOST=fabric.nodes[hcas[0]].name, **plugin_env)
    ibsim = start_ibsim(fabric, netfile, out, env, timeout)
    sm = None
    try:
        sm = spawn([opensm_binary(), "-F", str(conf), "-f", str(out / "opensm.log")],
                   dict(env, LD_PRELOAD=str(umad2sim())), open(out / "opensm.out", "w"), out)
        log = out / "opensm.log"
        deadline = time.monotonic() + timeout
        while not (log.exists() and "SUBNET UP" in log.read_text(errors="replace")):
            if time.monotonic() > deadline or sm.poll() is not None:
                raise RuntimeError(f"OpenSM did not bring the subnet up; see {log}")
            time.sleep(0.1)
        while not (out / "opensm-lfts.dump").exists():
            time.sleep(0.1)
        qenv = dict(env, LD_PRELOAD=str(umad2sim()), SIM_HOST=fabric.nodes[hcas[-1]].name)
        sls: dict[tuple[int, int], int] = {}
        for slid, dlid in pairs:
            r = subprocess.run(["saquery", "-p", "--src-to-dst", f"{slid}:{dlid}"], env=qenv,
                               cwd=out, capture_output=True, text=True, timeout=30,
                               check=False)
            got = (SL_LINE.findall(r.stdout), SLID_LINE.findall(r.stdout),
                   DLID_LINE.findall(r.stdout))
            if r.returncode != 0 or len(got[0]) != 1 or \
                    (int(got[1][0]), int(got[2][0])) != (slid, dlid):
                raise RuntimeError(f"saquery {slid}:{dlid} failed: {r.stdout[-300:]}"
                                   f"{r.stderr[-300:]}")
            sls[(slid, dlid)] = int(got[0][0], 16)
        time.sleep(0.5)          # let OpenSM finish writing its dumps
        return sls, out
    finally:
        if sm is not None:
            stop(sm)
        stop(ibsim)
        for junk in out.glob("sys-*"):
            shutil.rmtree(junk, ignore_errors=True)


def daemon_tables(fabric: Fabric, out: Path):
    """The daemon run's tables (guid2lid from its cache), for comparison with t2hx's run."""
    if (out / "cache" / "guid2lid").exists():
        shutil.copyfile(out / "cache" / "guid2lid", out / "guid2lid")
    return load_tables(fabric, out)
