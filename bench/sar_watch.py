#!/usr/bin/env python3
"""Time per poll of ``t2hx sar watch`` (seed 004's filtering tool) and per re-route, on the
SM host of a test cluster (tests/test_sar_watch.py: real Slurm over network namespaces, the
64-node fat-tree plane's real OpenSM under ibsim). The watch polls every second for
--polls polls while a job over two leaf switches runs for the middle third, so it
re-routes three times (SAR installed, the job starts, the job ends). ``poll_s`` is squeue
plus the filter; ``route_s`` the re-route verified from OpenSM's output. Writes
bench/results/sar_watch.json.

``--smoke DIR``: the test cluster is left out (it needs root, network namespaces and the
machine's cores to itself: run/test starts it in its cluster phase, tests/test_sar_watch.py);
the smoke run builds the cluster's conf and the watch's command line in DIR and writes
DIR/sar_watch.json saying so (tests/test_bench_smoke.py)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402
from tests.test_sar_watch import polls, sar_cluster, sbatch, watch_command  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--polls", type=int, default=60)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "sar_watch.json")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="the cluster's conf and command only; result in DIR")
    args = ap.parse_args()
    if args.smoke:
        return smoke(args.smoke)
    with tempfile.TemporaryDirectory() as tmp:
        cluster = sar_cluster(Path(tmp)).start()
        try:
            log = Path(tmp) / "watch.jsonl"
            watch = subprocess.Popen(watch_command(cluster, log, "--polls", str(args.polls)),
                                     env=cluster.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
            while len(polls(log)) < args.polls // 3:
                time.sleep(0.5)
            job = sbatch(cluster, "cn001,cn009")
            while len(polls(log)) < 2 * args.polls // 3:
                time.sleep(0.5)
            cluster.run("scancel", job)
            watch.wait(timeout=args.polls * 30)
            seen = polls(log)
        finally:
            cluster.stop()
    quiet = [p["poll_s"] for p in seen if not p["changed"]]
    routes = [p["route_s"] for p in seen if p["rerouted"]]
    doc = {"fabric": "docs/examples/cluster64.yaml fat-tree plane (64 HCAs, 16 switches)",
           "polls": len(seen), "reroutes": len(routes),
           "poll_s_median": round(statistics.median(quiet), 4),
           "poll_s_max": round(max(quiet), 4),
           "route_s": [round(r, 2) for r in routes],
           "errors": sum(1 for p in seen if p["error"]),
           "load_after": [round(x, 2) for x in os.getloadavg()]}
    atomic_write(args.out, json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc))
    return 0


def smoke(folder: Path) -> int:
    cluster = sar_cluster(folder)           # conf and layout only: nothing starts
    command = watch_command(cluster, folder / "watch.jsonl", "--polls", "3")
    why = ("the test cluster (network namespaces, Slurm, the plane's OpenSM under ibsim; root) "
           "runs in run/test's cluster phase only (tests/test_sar_watch.py)")
    doc = {"smoke": True, "fabric": str(cluster.system.path.name),
           "nodes": list(cluster.nodes), "watch_command": command,
           "smoke_left_out": {"cluster": why}}
    atomic_write(folder / "sar_watch.json", json.dumps(doc, indent=2) + "\n")
    print(f"sar_watch smoke: left out {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
