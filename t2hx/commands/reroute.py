"""``t2hx reroute``: regenerate a plane's routing for a new PARX demand or SAR job file.

Simulated (default): validate the file, then rerun ibsim + the stock OpenSM with our plugin
(t2hx.fabric.opensm.route). Real cluster (``--real``): validate, copy the file to the OpenSM
host named in the plane's ``opensm.host`` over ssh (atomically: to a temp name, then mv to
the path the running OpenSM reads, i.e. ``parx_demand=``/``sar_jobs=`` in the plane's
``opensm.options.event_plugin_options``), send SIGHUP to opensm, and wait until
``<opensm.dump_dir>/opensm-lfts.dump`` is rewritten after the signal.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import time
from pathlib import Path

from t2hx import ROOT, demand as dm, parx
from t2hx.conf import load_system, system_path
from t2hx.errors import RoutingError, T2hxError
from t2hx.fabric.build import build_plane
from t2hx.fabric.opensm import route
from t2hx.progress import Progress

SSH = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
OPTION = {"parx": "parx_demand", "sar": "sar_jobs"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reroute", help="re-route a plane for a new demand (parx) or job "
                       "(sar) file", description=__doc__.split("\n\n")[0])
    p.add_argument("--system", required=True, help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", default="hyperx", help="plane name (default: hyperx)")
    p.add_argument("--routing", required=True, choices=sorted(OPTION),
                   help="routing engine of the plugin")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--demand", help="PARX demand file (t2hx demand build)")
    src.add_argument("--jobs", help="SAR job file (t2hx demand jobs)")
    p.add_argument("--real", action="store_true",
                   help="hand the file to the real OpenSM host and signal it (ssh)")
    p.add_argument("--out", help="simulated: output directory (default: "
                   "work/<sys>/<plane>/reroute-<routing>)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds to wait for the new routing (default: plane opensm.timeout)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_reroute)


def cmd_reroute(args: argparse.Namespace) -> int:
    system = load_system(system_path(args.system))
    if args.plane not in system.planes:
        raise T2hxError(f"no plane '{args.plane}'", file=system.path, field="planes",
                        fix=f"pick one of {', '.join(system.planes)}")
    plane = system.planes[args.plane]
    fabric = build_plane(system, args.plane)
    path = _validated_input(args, fabric)
    timeout = args.timeout or float(plane.opensm.get("timeout", 600.0))
    if args.real:
        return _real(args, plane, Path(path), timeout)
    out = Path(args.out) if args.out else \
        ROOT / "work" / system.name / args.plane / f"reroute-{args.routing}"
    kw = parx.routing_args(fabric, args.routing, demand=args.demand, jobs=args.jobs,
                           source=system.path)
    with Progress("reroute", quiet=args.quiet or None) as prog:
        prog.say(f"routing {fabric.name} with {args.routing} (ibsim + OpenSM)")
        run = route(fabric, out, args.routing, timeout=timeout, **kw)
    print(json.dumps(run.summary))
    if run.summary["fallback"] or run.summary["engine_used"] != args.routing:
        raise RoutingError(f"{args.routing} did not route the fabric "
                           f"({'; '.join(run.summary['errors'][:1]) or 'see the log'})",
                           file=run.log, fix="read the ERR lines in that log")
    return 0


def _validated_input(args: argparse.Namespace, fabric) -> str:
    """One clear line for any file the engine would refuse, before OpenSM starts."""
    if args.routing == "parx":
        if not args.demand:
            raise T2hxError("parx reroutes from a demand file", field="--demand",
                            fix="pass --demand FILE (t2hx demand build)")
        dm.validate_demand(dm.read_demand(args.demand), fabric, args.demand)
        return args.demand
    if not args.jobs:
        raise T2hxError("sar reroutes from a job file", field="--jobs",
                        fix="pass --jobs FILE (t2hx demand jobs)")
    dm.validate_jobs(dm.read_jobs(args.jobs), fabric, args.jobs)
    return args.jobs


def _remote_path(plane, routing: str) -> str:
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


def _real(args: argparse.Namespace, plane, path: Path, timeout: float) -> int:
    host = plane.opensm.get("host", "localhost")
    remote = _remote_path(plane, args.routing)
    lfts = f"{plane.opensm.get('dump_dir', '/var/log/opensm').rstrip('/')}/opensm-lfts.dump"
    q = shlex.quote
    with Progress("reroute", quiet=args.quiet or None) as prog:
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
                print(f"{host}: OpenSM rerouted with {args.routing} ({lfts} updated)")
                return 0
            time.sleep(2)
    raise RoutingError(f"OpenSM on {host} did not write new LFTs within {timeout:.0f} s",
                       field="opensm.timeout", fix=f"check opensm.log on {host}; the "
                       "dump needs log_flags with 0x40 or dump_files_dir set")
