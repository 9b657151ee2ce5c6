"""Re-routing on a real cluster: hand a demand (parx) or job (sar) file to the plane's OpenSM
host and make the running OpenSM pick it up.

The file is copied over ssh to a temp name and moved onto the path the running OpenSM reads
(``parx_demand=``/``sar_jobs=`` in the plane's ``opensm.options.event_plugin_options``), so
OpenSM never sees half a file; then opensm gets SIGHUP (a heavy sweep re-runs the routing
engine) and we wait until ``<opensm.dump_dir>/opensm-lfts.dump`` is rewritten after it.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from pathlib import Path

from t2hx.errors import RoutingError, T2hxError
from t2hx.progress import Progress

SSH = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
OPTION = {"parx": "parx_demand", "sar": "sar_jobs"}


def remote_path(plane, routing: str) -> str:
    opts = str(plane.opensm.get("options", {}).get("event_plugin_options", ""))
    for item in opts.replace(",", " ").split():
        key, _, value = item.partition("=")
        if key == OPTION[routing] and value:
            return value
    raise T2hxError(f"the plane's OpenSM does not name a {OPTION[routing]} file",
                    field=f"planes.{plane.name}.opensm.options.event_plugin_options",
                    fix=f"set event_plugin_options: {OPTION[routing]}=/path/on/the/opensm/host")


def _ssh(host: str, command: str, timeout: float, what: str) -> str:
    try:
        done = subprocess.run(SSH + [host, command], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RoutingError(f"ssh to {host} timed out while {what}", field="opensm.host",
                           fix="check the host name and ssh access") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RoutingError(f"ssh to {host} failed while {what}: {last}", field="opensm.host",
                           fix="check the plane's opensm.host and password-less ssh to it")
    return done.stdout.strip()


def reroute_remote(plane, routing: str, path: Path, timeout: float,
                   quiet: bool | None = None) -> int:
    host = plane.opensm.get("host", "localhost")
    remote = remote_path(plane, routing)
    lfts = f"{plane.opensm.get('dump_dir', '/var/log/opensm').rstrip('/')}/opensm-lfts.dump"
    q = shlex.quote
    with Progress("reroute", quiet=quiet) as prog:
        prog.say(f"checking ssh to {host}")
        _ssh(host, "true", 30, "checking access")
        prog.say(f"copying {path} to {host}:{remote}")
        try:
            subprocess.run(["scp", "-q", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                            str(path), f"{host}:{remote}.t2hx-new"], check=True,
                           capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
            raise RoutingError(f"scp to {host}:{remote} failed ({err})", field="opensm.host",
                               fix="check write access to that path on the OpenSM host") \
                from None
        _ssh(host, f"mv -f {q(remote + '.t2hx-new')} {q(remote)}", 30, "installing the file")
        before = _ssh(host, f"date +%s; stat -c %Y {q(lfts)} 2>/dev/null || echo 0", 30,
                      "reading the LFT dump time").split()
        prog.say("signalling OpenSM (SIGHUP)")
        _ssh(host, "kill -HUP $(pidof -s opensm)", 30, "signalling opensm")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            now = _ssh(host, f"stat -c %Y {q(lfts)} 2>/dev/null || echo 0", 30,
                       "polling the LFT dump")
            if int(now or 0) >= int(before[0]) and now != before[-1]:
                print(f"{host}: OpenSM rerouted with {routing} ({lfts} updated)")
                return 0
            time.sleep(2)
    raise RoutingError(f"OpenSM on {host} did not write new LFTs within {timeout:.0f} s",
                       field="opensm.timeout", fix=f"check opensm.log on {host}; the "
                       "dump needs log_flags with 0x40 or dump_files_dir set")
