#!/usr/bin/env python3
"""Seed 004's property-preserving network update (Def 6, §3.3) on a replayed day (#48 item 2):
every SAR re-route of day 30 of the Atlas log (fragmented placement) on a seed 004 system,
checked as the protocol would install it (t2hx/history/updates.py), and for the first few
also what the same LFT blocks would do without the protocol. Records per system the LFT
blocks OpenSM sends per re-route (MADs), the block rounds and switches they span, the share
of paths a re-route moves (each a flow re-routed under its packets without the protocol), whether
Def 6 holds for each, SAR's VLs, the naive update's intermediate states with a loop and its
block rounds with a deadlock cycle, and the seconds the checks took. Writes
bench/results/network_update.json.

Contract: {day, placement, load_before, systems: {name: {plane, reroutes, preserving,
layers_max, top_vl, mads: {min, median, max}, rounds_max, moved_share: {median, max} (of
the leaf-to-base-LID paths, those the re-route moves), switches, block_entries, check_s
(mean per re-route), naive: [{reroute, mads, loop_states, cycle_rounds, s}]}}}.

``--smoke DIR``: mini's fat-tree, hand-made samples, the result in DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.conf import load_system, system_path
from t2hx.history import samples
from t2hx.history.updates import updates
from t2hx.routing.lftupdate import BLOCK

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "conf" / "traces" / "LLNL-Atlas-2006-2.1-cln.swf.gz"
PLACEMENT = "least-recent"


def day_doc(system, day: int) -> dict:
    trace, placement, hosts = samples.load(TRACE, system, policy=PLACEMENT)
    return samples.samples_doc(trace, placement, system.name, len(hosts), 600.0,
                               first_day=day, days=1)


def smoke_doc(system) -> dict:
    h = system.hostnames()
    jobs = [",".join(h[0:4] + h[20:24]), ",".join(h[4:20]), ",".join(h[24:40] + h[60:64])]
    return {"format": "t2hx-history-samples/1", "system": system.name, "nodes": len(h),
            "interval_s": 600.0, "trace": {}, "left_out": {},
            "jobs": [{"id": str(k), "start": 0, "end": 1, "hosts": x} for k, x in enumerate(jobs)],
            "samples": [{"t": 600.0 * k, "jobs": s} for k, s in enumerate([[0, 1], [1, 2], [0, 2]])]}


def measure(name: str, plane: str, doc: dict, work: Path, naive: int) -> dict:
    system = load_system(system_path(name))
    found = list(updates(doc, system, plane, work))
    mads = [r["mads"] for r in found]
    shares = [round(r["moved"] / r["paths"], 4) for r in found if r["paths"]]
    return {"plane": plane, "reroutes": len(found),
            "preserving": all(r["preserving"] for r in found),
            "layers_max": max((max(r["layers"]) for r in found), default=0),
            "top_vl": found[0]["top_vl"] if found else None,
            "mads": {"min": min(mads, default=0), "median": statistics.median(mads) if mads else 0,
                     "max": max(mads, default=0)},
            "rounds_max": max((r["rounds"] for r in found), default=0),
            "moved_share": {"median": statistics.median(shares) if shares else 0,
                            "max": max(shares, default=0)},
            "switches": max((r["switches"] for r in found), default=0),
            "block_entries": BLOCK,
            "check_s": round(statistics.mean(r["check_s"] for r in found), 2) if found else 0,
            "naive": _naive(doc, system, plane, work, naive)}


def _naive(doc: dict, system, plane: str, work: Path, count: int) -> list[dict]:
    out = []
    for r in updates(doc, system, plane, work, limit=count, naive_too=True):
        out.append({"reroute": r["reroute"], "mads": r["mads"],
                    "loop_states": r["naive_loop_states"],
                    "cycle_rounds": r["naive_cycle_rounds"], "s": r["check_s"]})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", type=Path, metavar="DIR", help="mini's fat-tree; result in DIR")
    ap.add_argument("--day", type=int, default=30)
    ap.add_argument("--naive", type=int, default=2, help="re-routes also checked without "
                    "the protocol (default 2)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    result: dict = {"day": None if args.smoke else args.day, "placement": PLACEMENT,
                    "load_before": round(load, 2), "systems": {}}
    with tempfile.TemporaryDirectory(prefix="network-update-") as work:
        if args.smoke:
            mini = load_system(system_path("mini"))
            result["systems"]["mini"] = measure("mini", "fattree", smoke_doc(mini), Path(work), 1)
            out = args.smoke / "network_update.json"
        else:
            for name, plane in (("sc16-taurus", "ib"), ("sc16-tsubame", "rail0")):
                t0 = time.monotonic()
                doc = day_doc(load_system(system_path(name)), args.day)
                result["systems"][name] = measure(name, plane, doc, Path(work), args.naive)
                result["systems"][name]["wall_s"] = round(time.monotonic() - t0, 1)
            out = ROOT / "bench" / "results" / "network_update.json"
    atomic_write(out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0 if all(s["preserving"] for s in result["systems"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
