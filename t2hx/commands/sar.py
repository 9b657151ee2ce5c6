"""``t2hx sar watch``: seed 004's filtering tool on a plane's OpenSM host — poll Slurm's
running jobs and re-route the plane with SAR only when its set of multi-switch jobs changes
(t2hx/routing/sarwatch.py, docs/routing.md#sar-watch)."""

from __future__ import annotations

import argparse

from t2hx import argtypes as A
from t2hx.conf import load_system, system_path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sar", help="scheduling-aware routing on a running plane")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    w = verbs.add_parser("watch", help="poll squeue; re-route with SAR when the multi-switch "
                         "jobs change (runs on the plane's OpenSM host)")
    w.add_argument("--system", required=True, type=A.system,
                   help="conf/systems/<sys>.yaml or its name")
    w.add_argument("--plane", required=True, type=A.name, help="the plane SAR routes")
    w.add_argument("--interval", type=A.seconds, default=60.0,
                   help="seconds between polls (default 60)")
    w.add_argument("--polls", type=A.positive_int, default=None,
                   help="stop after this many polls (default: until SIGTERM/SIGINT)")
    w.add_argument("--log", type=A.as_path(A.output_file), default=None,
                   help="append one JSON line per poll to this file")
    w.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    from t2hx.progress import Progress
    from t2hx.routing import sarwatch, smhost

    system = load_system(system_path(args.system))
    smhost.request_for(system, args.plane, "sar")        # the plane must list sar
    watch = sarwatch.Watch(system, args.plane)

    def apply(data: bytes) -> dict:
        return smhost.apply(system, smhost.request_for(system, args.plane, "sar", "jobs",
                                                       data), quiet=args.quiet)

    with Progress(f"sar watch {args.plane}", quiet=args.quiet) as prog:
        return sarwatch.run(watch, apply, args.interval, args.polls, args.log, prog.say)
