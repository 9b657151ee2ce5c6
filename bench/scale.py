#!/usr/bin/env python3
"""Scale bench: the seed 003 fat-tree configurations at 4,608 nodes (docs/fattree-configs.md).
Writes bench/results/scale.json = {nodes, configs: {name: {switches, cables, route_s,
mpigraph_s, alltoall_s, ebb100_s, peak_rss_mib}}}.

Per configuration (default sc17-sr-edr; --configs for more) and its first plane:
* route_s: build the fabric and route it with the real OpenSM (ftree) under ibsim.
* mpigraph_s: full 4,608-node mpiGraph (4,607 shift steps, 1 MiB, window 10).
* alltoall_s: IMB Alltoall on 4,608 ranks at 1 MiB.
* ebb100_s: 100 random bisections of the 4,608 nodes (1 MiB).
* peak_rss_mib: peak resident memory of the Python process that runs the configuration
  (one process per configuration; OpenSM and ibsim are reported apart as
  route_child_rss_mib).
Goal: all of it in < 10 min on 2 cores and < 8 GiB.

``--smoke DIR``: the same steps on mini.yaml (64 nodes, its fat-tree plane), routed into DIR,
the result in DIR/scale.json (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.conf import load_system, system_path  # noqa: E402
from t2hx.fabric.build import build_plane  # noqa: E402
from t2hx.fabric.cost import plane_counts  # noqa: E402
from t2hx.flowsim import patterns  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.progress import Progress  # noqa: E402
from t2hx.routing.opensm import route  # noqa: E402

MIB = 1 << 20


def timed(fn, *args, **kw):
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def one(name: str, work: Path, progress: Progress) -> dict:
    system = load_system(system_path(name))
    plane = next(iter(system.planes))
    start = time.perf_counter()
    fabric = build_plane(system, plane)
    run = route(fabric, work / name / plane / "ftree", "ftree",
                timeout=system.plane(plane).opensm["timeout"])
    route_s = time.perf_counter() - start
    if run.summary["fallback"]:
        raise SystemExit(f"{name}: OpenSM fell back to {run.summary['engine_used']}")
    progress.say(f"{name}: routed in {route_s:.1f} s (OpenSM {run.summary['seconds']} s)")
    hosts = system.hostnames()
    net, open_s = timed(open_network, system, plane, "ftree", hosts=hosts, dumps=run.out_dir)
    progress.say(f"{name}: tables loaded in {open_s:.1f} s")
    g, mpigraph_s = timed(patterns.mpigraph, net)
    progress.say(f"{name}: mpiGraph in {mpigraph_s:.1f} s")
    a2a, alltoall_s = timed(patterns.imb, net, "Alltoall", [MIB])
    progress.say(f"{name}: alltoall in {alltoall_s:.1f} s")
    e, ebb_s = timed(patterns.ebb, net, rounds=100, seed=1)
    progress.say(f"{name}: 100 bisections in {ebb_s:.1f} s")
    counts = plane_counts(fabric)
    return {
        "plane": plane, "switches": counts["switches"], "cables": counts["cables"],
        "route_s": round(route_s, 2), "opensm_s": run.summary["seconds"],
        "tables_s": round(open_s, 2),
        "mpigraph_s": round(mpigraph_s, 2),
        "mpigraph_avg_mib_s": round(patterns.average(g.send), 1),
        "alltoall_s": round(alltoall_s, 2),
        "alltoall_1mib_tmax_us": round(a2a[0].t_max, 1),
        "ebb100_s": round(ebb_s, 2),
        "total_s": round(route_s + open_s + mpigraph_s + alltoall_s + ebb_s, 2),
        "peak_rss_mib": rss_mib(),
        "route_child_rss_mib": rss_mib(resource.RUSAGE_CHILDREN),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=["sc17-sr-edr"],
                    help="system confs to run (default: sc17-sr-edr)")
    ap.add_argument("--work", help="routing output directory (default: a temporary one)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "scale.json"))
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    ap.add_argument("--single", help=argparse.SUPPRESS)  # child: one config, JSON on stdout
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml, routing and result in DIR (not bench/results/)")
    args = ap.parse_args()
    if args.smoke:
        args.configs, args.work, args.out = ["mini"], str(args.smoke), args.smoke / "scale.json"
    if args.single:
        with Progress("scale", quiet=args.quiet) as progress:
            print(json.dumps(one(args.single, Path(args.work), progress)))
        return 0
    configs: dict[str, dict] = {}
    nodes = 0
    with Progress("scale", total=len(args.configs), quiet=args.quiet) as progress, \
            tempfile.TemporaryDirectory(prefix="t2hx-scale-") as tmp:
        for name in args.configs:
            progress.step(name)
            # One process per configuration, so peak_rss_mib is that configuration's own.
            cmd = [sys.executable, __file__, "--single", name, "--work", args.work or tmp]
            child = subprocess.run(cmd + (["--quiet"] if args.quiet else []), check=True,
                                   stdout=subprocess.PIPE, text=True)
            configs[name] = json.loads(child.stdout)
            nodes = max(nodes, len(load_system(system_path(name)).hostnames()))
    result = {"nodes": nodes, "configs": configs, "cpu_count": os.cpu_count(),
              "smoke": bool(args.smoke),
              "goal": {"total_s": 600, "peak_rss_mib": 8192}}
    atomic_write(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
