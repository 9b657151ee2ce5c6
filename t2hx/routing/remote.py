"""Routing a real plane from a job: hand the request (engine, LMC, PARX demand or SAR job
file) to the plane's OpenSM host and get its verified result (docs/cluster.md).

Two ways, chosen by the plane's ``opensm.sm.via``:

* ``ssh``: ``ssh <opensm.host> <opensm.sm.t2hx> sm apply ...`` with the input on stdin; the
  job user needs password-less ssh to the SM host and the rights ``t2hx sm apply`` needs
  there (write the input files and opensm.conf, signal OpenSM);
* ``agent``: a request to ``t2hx sm serve`` on the SM host, authenticated by MUNGE; the job
  user needs nothing on the SM host.

Either way the SM host runs :func:`t2hx.routing.smhost.apply`, which fails unless OpenSM's
own output shows the requested engine and LMC.
"""

from __future__ import annotations

import json
import shlex
import subprocess

from t2hx.conf import System
from t2hx.errors import RoutingError
from t2hx.progress import Progress
from t2hx.routing import smagent
from t2hx.routing.smhost import Request

SSH = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]


def apply_remote(system: System, req: Request, quiet: bool | None = None) -> dict:
    spec = system.plane(req.plane).opensm
    host, sm = spec["host"], spec["sm"]
    with Progress("route", quiet=quiet) as prog:
        prog.say(f"{req.plane}: {req.engine} (LMC {req.lmc}) on {host} via {sm['via']}")
        if sm["via"] == "agent":
            result = smagent.request(host, sm["port"], req, spec["timeout"])
        else:
            result = _ssh_apply(system, req, host, sm, spec["timeout"])
    if not result.get("verified") or result.get("engine_used") != req.engine:
        raise RoutingError(f"{host} did not confirm {req.engine} on plane {req.plane}",
                           field="opensm.sm", fix=f"read OpenSM's log on {host}")
    return result


def ssh_command(system: System, req: Request, host: str, sm: dict) -> list[str]:
    conf = sm["conf_path"] or str(system.path.resolve())
    remote = [*shlex.split(sm["t2hx"]), "-q", "sm", "apply", "--system", conf,
              "--plane", req.plane, "--engine", req.engine, "--lmc", str(req.lmc)]
    if req.kind:
        remote += ["--input-kind", req.kind, "--input", "-"]
    # ssh joins its arguments into one remote shell line: quote each word.
    return [*SSH, *sm["ssh_options"], host, " ".join(shlex.quote(w) for w in remote)]


def _ssh_apply(system: System, req: Request, host: str, sm: dict, timeout: float) -> dict:
    try:
        done = subprocess.run(ssh_command(system, req, host, sm), input=req.data,
                              capture_output=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        raise RoutingError(f"ssh to {host} timed out while routing", field="opensm.timeout",
                           fix=f"check OpenSM on {host}") from None
    except FileNotFoundError:
        raise RoutingError("ssh is not installed on this node", field="opensm.sm.via",
                           fix="install openssh-client or use via: agent") from None
    out = done.stdout.decode(errors="replace").strip().splitlines()
    if done.returncode:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise RoutingError(f"{host}: {last}", field="opensm.sm",
                           fix=f"check ssh to {host} and `t2hx sm apply` there "
                           "(docs/cluster.md#the-subnet-managers)")
    try:
        return json.loads(out[-1])
    except (IndexError, ValueError):
        raise RoutingError(f"{host}: `t2hx sm apply` printed no result", field="opensm.sm.t2hx",
                           fix="check that opensm.sm.t2hx names t2hx on that host") from None
