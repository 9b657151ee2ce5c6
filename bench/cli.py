#!/usr/bin/env python3
"""What the command line costs before it does anything (#50: "``t2hx --help`` takes ~1.4
CPU-s"): the CPU seconds (user + system, of the process and its children) of ``t2hx --help``,
of a subcommand's help and of an argument error, each the median of ``RUNS`` fresh
interpreters, against the goal of 0.3 CPU-s. Writes bench/results/cli.json.

Contract: {goal_cpu_s, runs, commands: {name: {argv, median_cpu_s, samples_cpu_s}},
within_goal, python}.

``--smoke DIR``: two runs of each, the result in DIR/cli.json (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from t2hx.atomic import atomic_write

ROOT = Path(__file__).resolve().parent.parent
T2HX = str(ROOT / ".venv" / "bin" / "t2hx")
RUNS = 15
GOAL_CPU_S = 0.3
COMMANDS = {
    "help": ["--help"],
    "simulate --help": ["simulate", "--help"],
    "argument error": ["simulate", "--nosuch"],
}


def cpu_of(argv: list[str]) -> float:
    """CPU seconds of one fresh ``t2hx ARGV`` (its children's rusage, read around the run)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([T2HX, *argv], cwd=ROOT, capture_output=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(runs: int) -> dict:
    commands = {}
    for name, argv in COMMANDS.items():
        samples = [round(cpu_of(argv), 4) for _ in range(runs)]
        commands[name] = {"argv": argv, "median_cpu_s": round(statistics.median(samples), 4),
                          "samples_cpu_s": samples}
    return {"goal_cpu_s": GOAL_CPU_S, "runs": runs, "commands": commands,
            "within_goal": all(c["median_cpu_s"] <= GOAL_CPU_S for c in commands.values()),
            "python": platform.python_version(), "cpus": os.cpu_count()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="two runs each, the result in DIR/cli.json")
    args = ap.parse_args()
    result = measure(2 if args.smoke else RUNS)
    out = (args.smoke or ROOT / "bench" / "results") / "cli.json"
    atomic_write(out, json.dumps(result, indent=1) + "\n")
    for name, c in result["commands"].items():
        print(f"{name}: {c['median_cpu_s']:.3f} CPU-s (goal {GOAL_CPU_S})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
