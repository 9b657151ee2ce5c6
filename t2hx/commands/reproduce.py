"""``t2hx reproduce``: the main job on the embedded simulated cluster.

Builds both planes of the reference system, routes each with the engines its conf lists
(real OpenSM under ibsim) and prints the routing analysis; results land in
``work/reproduce/<system>/<plane>/<engine>/``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from t2hx import analysis
from t2hx.conf import load_system, system_path
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.fabric.lft import load_tables
from t2hx.fabric.netfile import atomic_write
from t2hx.fabric.opensm import route
from t2hx.parx import engine_args
from t2hx.progress import Progress


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reproduce", help="run the study on the embedded simulated cluster",
                       description=__doc__)
    p.add_argument("--system", default="t2hx", help="system conf (default: t2hx)")
    p.add_argument("--out", default="work/reproduce", help="output directory")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    system = load_system(system_path(args.system))
    jobs = [(plane, engine) for plane in system.planes
            for engine in system.plane(plane).opensm["routing"]]
    rows = []
    with Progress(f"reproduce {system.name}", total=len(jobs), quiet=args.quiet) as progress:
        for plane, engine in jobs:
            progress.step(f"{plane}: building and routing with {engine}")
            rows.append(route_and_analyse(system, plane, engine, Path(args.out)))
    atomic_write(Path(args.out) / system.name / "routing.json", json.dumps(rows, indent=2) + "\n")
    print_table(rows)
    failed = [r for r in rows if r.get("error") or r.get("fallback")]
    return 1 if failed else 0


def route_and_analyse(system, plane: str, engine: str, out: Path) -> dict:
    fabric = build_plane(system, plane)
    where = out / system.name / plane / engine
    try:
        args = engine_args(fabric, engine, system.plane(plane).opensm, system.path)
        run = route(fabric, where, engine, timeout=system.plane(plane).opensm["timeout"], **args)
        report = analysis.summary(load_tables(fabric, where), run.summary)
    except T2hxError as err:
        return {"plane": plane, "engine": engine, "error": err.line()}
    report.pop("errors", None)
    atomic_write(where / "routing-summary.json", json.dumps(report, indent=2) + "\n")
    return {"plane": plane, **report}


def print_table(rows: list[dict]) -> None:
    head = f"{'plane':9} {'engine':7} {'lmc':>3} {'VLs':>3} {'hops max/avg':>12} " \
           f"{'EFI max/mean':>14} {'unused':>8} {'CDG(1 VL)':>9} {'secs':>6}"
    print(head)
    print("-" * len(head))
    for r in rows:
        if "error" in r:
            print(f"{r['plane']:9} {r['engine']:7} ERROR {r['error']}")
            continue
        fb = f" (fell back to {r['engine_used']})" if r["fallback"] else ""
        print(f"{r['plane']:9} {r['engine']:7} {r['lmc']:>3} {r['vls']:>3} "
              f"{r['max_switch_hops']:>5}/{r['avg_switch_hops']:<6.3f} "
              f"{r['max_efi']:>6}/{r['mean_efi']:<7.1f} "
              f"{r['unused_links']:>4}/{r['inter_switch_links']:<4}"
              f"{'acyclic' if r['cdg_acyclic_single_vl'] else 'cyclic':>9} {r['seconds']:>6}{fb}")
