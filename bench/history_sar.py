#!/usr/bin/env python3
"""SAR re-routes of a job-history replay (#46 item 5, seed 004): one day replayed with the
SAR re-routes done by OpenSM (SIGHUP to the OpenSM that routed the day's first job set) and
by px-sar (the plugin's engine on the graph that OpenSM built, t2hx/history/pxsar.py), the
oblivious routings cached beforehand, both with the same rows required. Records wall and CPU
seconds (this process and its children) of each, the SAR routings, and the load beside.
Writes bench/results/history_sar.json.

Contract: {system, plane, day, samples, sar_routings, rows_equal, load_before,
ways: {"opensm" | "px-sar, first day" | "px-sar, graph kept": {wall_s, cpu_s}}, speedup_wall
(opensm over graph kept)}.

``--smoke DIR``: mini's fat-tree, three hand-made samples, the result in DIR/history_sar.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.conf import load_system, system_path
from t2hx.history import samples
from t2hx.history.sample_routing import OBLIVIOUS, Router, route_samples

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "conf" / "traces" / "LLNL-Atlas-2006-2.1-cln.swf.gz"


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def day_doc(system, day: int) -> dict:
    trace, placement, hosts = samples.load(TRACE, system)
    return samples.samples_doc(trace, placement, system.name, len(hosts), 600.0,
                               first_day=day, days=1)


def smoke_doc(system) -> dict:
    hosts = system.hostnames()
    jobs = [",".join(hosts[0:4]), ",".join(hosts[4:20]), ",".join(hosts[24:40])]
    return {"format": "t2hx-history-samples/1", "system": system.name, "nodes": len(hosts),
            "interval_s": 600.0, "trace": {}, "left_out": {},
            "jobs": [{"id": str(k), "start": 0, "end": 1, "hosts": h} for k, h in enumerate(jobs)],
            "samples": [{"t": 600.0 * k, "jobs": s} for k, s in enumerate([[0, 1], [1, 2], [0, 2]])]}


def measure(system_name: str, plane: str, day: int | None, work: Path) -> dict:
    system = load_system(system_path(system_name))
    doc = smoke_doc(system) if day is None else day_doc(system, day)
    with Router(system, plane, work) as warm:          # the oblivious tables, cached on disk
        for engine in OBLIVIOUS:
            warm.oblivious(engine)
    load = os.getloadavg()[0]
    ways, rows, routings = {}, {}, {}
    # px-sar twice: the first day of a campaign (OpenSM routes its first job set and keeps the
    # graph) and any later day (the kept graph: no OpenSM at all)
    for how, sar_with in (("opensm", "opensm"), ("px-sar, first day", "px-sar"),
                          ("px-sar, graph kept", "px-sar")):
        t0, c0 = time.monotonic(), cpu()
        with Router(system, plane, work, sar_with=sar_with) as router:
            rows[how] = route_samples(doc, router)
        ways[how] = {"wall_s": round(time.monotonic() - t0, 2), "cpu_s": round(cpu() - c0, 2)}
        routings[how] = router.reroutes
    same = all(rows[h] == rows["opensm"] and routings[h] == routings["opensm"] for h in rows)
    return {"system": system_name, "plane": plane, "day": day, "samples": len(doc["samples"]),
            "sar_routings": routings["opensm"], "rows_equal": same, "load_before": round(load, 2),
            "ways": ways, "speedup_wall": round(ways["opensm"]["wall_s"] / max(
                ways["px-sar, graph kept"]["wall_s"], 1e-9), 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", type=Path, metavar="DIR", help="mini, three samples; result in DIR")
    ap.add_argument("--system", default="sc16-tsubame")
    ap.add_argument("--plane", default="rail0")
    ap.add_argument("--day", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="history-sar-") as work:
        if args.smoke:
            result = measure("mini", "fattree", None, Path(work))
            out = args.smoke / "history_sar.json"
        else:
            result = measure(args.system, args.plane, args.day, Path(work))
            out = ROOT / "bench" / "results" / "history_sar.json"
    atomic_write(out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0 if result["rows_equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
