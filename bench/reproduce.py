#!/usr/bin/env python3
"""Wall and CPU time of the main job, ``t2hx reproduce`` (quick profile), from cold: fresh
log and work roots, so every plane is routed again and every case runs (goal: under 15
minutes on 2 cores). Also records the machine's load before and after, since a busy machine
stretches the wall time, and how many simulated runs the run cache served. Writes
bench/results/reproduce.json; ``--no-cache --out bench/results/reproduce-nocache.json``
measures the same without the run cache.

``--smoke DIR``: the same path on mini.yaml for one MpiGraph case (its hostfiles written into
DIR first), the result in DIR/reproduce.json (tests/test_bench_smoke.py)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

GOAL_S = 15 * 60
SMOKE_CASE = ["--", "-c", "checks/mpigraph.py", "-n", "MpiGraph", "-P", "repetition=0",
              "-P", "num_nodes=7", "-P", "combo=ft-ftree-linear"]


def sim_cases(logdir: Path) -> dict[str, int]:
    """Simulated runs by what their first line says: simulated (miss), deterministic repeat
    or noisy repeat of a cached simulation (hit), cache bypassed (off)."""
    counts: dict[str, int] = {}
    for meta in logdir.rglob("t2hx-run.json"):
        cache = json.loads(meta.read_text()).get("sim", {}).get("cache", "unknown")
        counts[cache] = counts.get(cache, 0) + 1
    return dict(sorted(counts.items()))


def engine_line(stdout: str) -> str | None:
    """What run/reproduce said about the verdicts the packet engine changes."""
    return next((line for line in stdout.splitlines() if line.startswith("packet engine:")),
                None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--system", default="t2hx")
    ap.add_argument("--full", action="store_true", help="the whole matrix (hours)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "reproduce.json"))
    ap.add_argument("--no-cache", action="store_true",
                    help="simulate every repetition (T2HX_NO_SIM_CACHE=1): the time the run "
                    "cache saves is the difference to a run without this flag")
    ap.add_argument("--keep-paper", default=None, metavar="DIR",
                    help="copy the run's paper/ (figures, data, report) here to inspect")
    ap.add_argument("--in-place", action="store_true",
                    help="regenerate the committed campaign (log/reference, paper/) from cold: "
                    "only the work root (routing and run caches) is fresh")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="one case on mini.yaml; result in DIR (not bench/results/)")
    args = ap.parse_args()
    if args.smoke:
        args.system, args.out, args.in_place = "mini", args.smoke / "reproduce.json", False
    with tempfile.TemporaryDirectory(prefix="t2hx-bench-reproduce-") as tmp:
        env = {**os.environ, "T2HX_WORK_ROOT": f"{tmp}/work",
               "T2HX_NO_SIM_CACHE": "1" if args.no_cache else ""}
        cmd = [str(ROOT / "run" / "t2hx"), "reproduce", "--system", args.system,
               *(["--full"] if args.full else [])]
        if args.smoke:
            env["T2HX_HOSTFILES"] = f"{tmp}/hostfiles"
            subprocess.run([str(ROOT / "run" / "t2hx"), "-q", "hostfiles", "--system",
                            args.system, "--out", env["T2HX_HOSTFILES"]], env=env, check=True)
        logdir, paper = ROOT / "log" / "reference", ROOT / "paper"
        if not args.in_place:
            env["T2HX_LOG_ROOT"] = f"{tmp}/log"
            cmd += ["--campaign", "bench", "--out", f"{tmp}/paper"]
            logdir, paper = Path(tmp, "log", "bench"), Path(tmp, "paper")
        cmd += SMOKE_CASE if args.smoke else []
        load_before = os.getloadavg()
        start = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=None if not args.quiet else
                              subprocess.DEVNULL)
        wall = time.monotonic() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        verdicts = [line for line in done.stdout.splitlines() if "Fig 1:" in line]
        figures = len(list((paper / "figures").glob("*.png")))
        cases = sim_cases(logdir)
        if args.keep_paper:
            shutil.copytree(paper, args.keep_paper, dirs_exist_ok=True)
    result = {
        "profile": "full" if args.full else "quick", "system": args.system,
        "smoke": bool(args.smoke),
        "exit_code": done.returncode, "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1), "goal_s": GOAL_S,
        "within_goal": wall < GOAL_S, "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "sim_cache": not args.no_cache, "cases": cases, "in_place": args.in_place,
        "packet_engine": engine_line(done.stdout),
        "figures": figures, "fig1": verdicts, "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d"),
    }
    atomic_write(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if done.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
