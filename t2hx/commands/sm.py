"""``t2hx sm apply|serve|opensm|status``: the subnet-manager side of routing a real plane
(docs/cluster.md#the-subnet-managers). These run on a plane's OpenSM host.

``apply``  makes the plane's running OpenSM route with an engine and LMC (and a PARX demand or
           SAR job file), then prints the result verified from OpenSM's log and dumps as one
           JSON line; exit 0 only when verified. Jobs reach it over ssh (opensm.sm.via: ssh).
``serve``  the routing agent: serves apply requests of jobs over TCP, each authenticated by
           MUNGE, so job users need no ssh or rights on the SM host (opensm.sm.via: agent).
``opensm`` runs the plane's OpenSM and starts it again whenever it exits (the supervisor a
           restart relies on when the site has no systemd unit); ``--ibsim`` serves the
           plane's fabric from ibsim (the test cluster's stand-in for the switches).
``status`` what the plane's opensm.conf says and which OpenSM runs with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from t2hx import argtypes as A

from t2hx.conf import ENGINES, load_system, system_path
from t2hx.errors import T2hxError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sm", help="the subnet-manager side of routing a real plane",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")

    a = verbs.add_parser("apply", help="route the plane's OpenSM with an engine and verify it")
    _plane(a)
    a.add_argument("--routing", "--engine", dest="engine", required=True, choices=ENGINES,
                   metavar="ROUTING", help="routing engine (one of the plane's)")
    a.add_argument("--lmc", type=A.lmc, default=None,
                   help="the LMC the request expects (default: what the engine needs)")
    a.add_argument("--input-kind", choices=("demand", "jobs"), default=None,
                   help="demand (parx) or jobs (sar)")
    a.add_argument("--input", default=None, type=A.input_file_or_stdin,
                   help="the input file, or - for stdin")
    a.add_argument("--timeout", type=A.seconds, default=None,
                   help="seconds to wait for OpenSM (default: the plane's opensm.timeout)")
    a.set_defaults(func=cmd_apply)

    s = verbs.add_parser("serve", help="the routing agent (MUNGE-authenticated requests)")
    s.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    s.add_argument("--bind", default="0.0.0.0", type=A.host,
                   help="address to listen on (default all)")
    s.add_argument("--port", type=A.int_range(1, 65535, "a TCP port"), default=None,
                   help="TCP port (default: the planes' opensm.sm.port)")
    s.add_argument("--allow-user", action="append", default=[], type=A.name,
                   help="only these users (names or uids) may route; default: any user "
                   "MUNGE authenticates")
    s.set_defaults(func=cmd_serve)

    o = verbs.add_parser("opensm", help="run the plane's OpenSM, restarting it when it exits")
    _plane(o)
    o.add_argument("--state", required=True, type=A.output_dir,
                   help="working directory (netfile, OpenSM's "
                   "output, ibsim's log)")
    o.add_argument("--ibsim", action="store_true",
                   help="serve the plane's fabric from ibsim (OpenSM through libumad2sim)")
    o.set_defaults(func=cmd_opensm)

    t = verbs.add_parser("status", help="the plane's opensm.conf and running OpenSM")
    _plane(t)
    t.set_defaults(func=cmd_status)


def _plane(p: argparse.ArgumentParser) -> None:
    p.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", required=True, type=A.name, help="plane name")


def _system(args: argparse.Namespace):
    system = load_system(system_path(args.system))
    if getattr(args, "plane", None) is not None:
        system.plane(args.plane)          # an unknown plane: one line naming the conf
    return system


def cmd_apply(args: argparse.Namespace) -> int:
    from t2hx.routing.smhost import apply, request_for

    system = _system(args)
    data = b""
    if args.input is not None:
        if not args.input_kind:
            raise T2hxError("an input file needs its kind", field="--input-kind",
                            fix="demand (parx) or jobs (sar)")
        data = sys.stdin.buffer.read() if args.input == "-" else _read(args.input)
    req = request_for(system, args.plane, args.engine, args.input_kind, data)
    if args.lmc is not None and args.lmc != req.lmc:
        raise T2hxError(f"{req.engine} routes plane {req.plane} with LMC {req.lmc}",
                        field="--lmc", fix=f"ask for LMC {req.lmc} (docs/routing.md)")
    result = apply(system, req, args.timeout, quiet=args.quiet or None)
    print(json.dumps(result, sort_keys=True))
    return 0


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as err:
        raise T2hxError(f"cannot read it ({err.strerror})", file=path, field="--input",
                        fix="give a readable demand or job file") from None


def cmd_serve(args: argparse.Namespace) -> int:
    from t2hx.routing.smagent import serve, uids

    system = _system(args)
    ports = {p.opensm["sm"]["port"] for p in system.planes.values()}
    if args.port is None and len(ports) != 1:
        raise T2hxError("the planes name different agent ports", file=system.path,
                        field="opensm.sm.port", fix="give --port, or one port for all planes")
    port = args.port if args.port is not None else ports.pop()
    return serve(system, args.bind, port, uids(args.allow_user), quiet=args.quiet or None)


def cmd_opensm(args: argparse.Namespace) -> int:
    from t2hx.routing.smdaemon import run

    return run(_system(args), args.plane, Path(args.state).resolve(), ibsim=args.ibsim,
               quiet=args.quiet or None)


def cmd_status(args: argparse.Namespace) -> int:
    from t2hx.routing.smhost import opensm_pids, read_options

    system = _system(args)
    sm = system.plane(args.plane).opensm["sm"]
    conf = Path(sm["conf_file"])
    options = read_options(conf.read_text()) if conf.is_file() else {}
    print(json.dumps({"plane": args.plane, "conf_file": str(conf),
                      "routing_engine": options.get("routing_engine"),
                      "lmc": options.get("lmc"), "pids": opensm_pids(conf)}, sort_keys=True))
    return 0
