"""``t2hx reroute``: regenerate a plane's routing for a new PARX demand or SAR job file.

Simulated (default): validate the file, then rerun ibsim + the stock OpenSM with our plugin
(t2hx.routing.reroute). Real cluster (``--real``): validate, then hand the file to the
plane's OpenSM host (``opensm.host``, over ssh or to its routing agent: ``opensm.sm.via``),
which installs it where the plugin reads it, switches the running OpenSM to the engine and
LMC when needed, and answers once OpenSM's log and dumps confirm the new routing
(docs/cluster.md).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from t2hx import argtypes as A, routing_engines
from t2hx.conf import load_system, system_path
from t2hx.routing_engines import RoutingInput


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reroute", help="re-route a plane for a new demand (parx) or job "
                       "(sar) file", description=__doc__.split("\n\n")[0])
    p.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    p.add_argument("--plane", default="hyperx", type=A.name, help="plane name (default: hyperx)")
    p.add_argument("--routing", required=True, choices=routing_engines.input_aware(),
                   help="an engine that routes from a demand or job file")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--demand", type=A.input_file, help="PARX demand file (t2hx demand build)")
    src.add_argument("--jobs", type=A.input_file, help="SAR job file (t2hx demand jobs)")
    p.add_argument("--real", action="store_true",
                   help="hand the file to the plane's real OpenSM host (opensm.sm.via)")
    p.add_argument("--out", type=A.output_dir, help="simulated: output directory (default: "
                   "work/<sys>/<plane>/reroute-<routing>)")
    p.add_argument("--timeout", type=A.seconds, default=None,
                   help="seconds to wait for the new routing (default: plane opensm.timeout)")
    p.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                   help="no progress output")
    p.set_defaults(func=cmd_reroute)


def cmd_reroute(args: argparse.Namespace) -> int:
    from t2hx.routing.reroute import reroute

    system = load_system(system_path(args.system))
    summary = reroute(system, args.plane, args.routing,
                      RoutingInput.of(args.demand, args.jobs), real=args.real, out=Path(args.out) if args.out else None,
                      timeout=args.timeout, quiet=args.quiet or None)
    if args.real:
        print(f"{summary['host']}: OpenSM rerouted with {args.routing}")
    else:
        print(json.dumps(summary))
    return 0
