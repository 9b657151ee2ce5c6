#!/usr/bin/env python3
"""The per-message cost of the PARX-aware MPI path (patches/openmpi/4.1-parx-lid-selection.patch)
measured against the unpatched Open MPI. Writes bench/results/parx_mpi_cost.json.

Two measurements, because no InfiniBand HCA is here:

* **In Open MPI**: bench/pingpong.c (two ranks, ob1 over shared memory, half round trip,
  best of ``--repeats``) under the unpatched build (Debian's Open MPI 4.1.4 by default) and
  under our patched build of the same version with ``pml_ob1_parx_enable`` 0 and 1, the
  builds taking turns ``--rounds`` times; medians per size. Without openib the LID hook is
  unset, so the enabled path stops at its first check: this is the patch's cost on the send
  path itself (the branch and the call), not the LID walk.
* **The LID walk**: bench/parx_select.c times the patch's module pick (hook call per module,
  coin, Table 1 from parx/table1.c) on synthetic endpoints of 4 modules: ns per message.

The patched build is made outside the repository (docs/modelling.md#parx-mpi-cost gives the
commands); pass its prefix with ``--patched``.

``--smoke DIR``: one round of 200 messages per size, the LID walk over 10^5 messages, the
result in DIR/parx_mpi_cost.json (tests/test_bench_smoke.py). Without ``--patched`` the
smoke run measures the unpatched build alone and records why the patched one is left out.
"""

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

SIZES = (1, 8, 64, 512, 4096)


def build(mpicc: str, out: Path) -> Path:
    exe = out / "pingpong"
    subprocess.run([mpicc, "-O2", "-o", str(exe), str(ROOT / "bench" / "pingpong.c")],
                   check=True)
    return exe


def pingpong(prefix: Path, exe: Path, parx: int | None, iterations: int,
             repeats: int) -> dict[int, float]:
    env = dict(os.environ, OPAL_PREFIX=str(prefix)) if prefix != Path("/usr") else \
        dict(os.environ)
    cmd = [str(prefix / "bin" / "mpirun"), "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "--mca", "pml", "ob1", "--mca", "btl", "self,vader"]
    if parx is not None:
        cmd += ["--mca", "pml_ob1_parx_enable", str(parx)]
    out = subprocess.run(cmd + [str(exe), str(iterations), str(repeats), *map(str, SIZES)],
                         check=True, capture_output=True, text=True, env=env).stdout
    return {int(s): float(t) for s, t in (line.split() for line in out.splitlines())}


def select_ns(runs: int, messages: int = 50_000_000) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "parx_select"
        subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                        str(ROOT / "bench" / "parx_select.c"), str(ROOT / "parx" / "table1.c")],
                       check=True)
        return [float(subprocess.run([str(exe), str(messages)], check=True, capture_output=True,
                                     text=True).stdout) for _ in range(runs)]


def version(prefix: Path) -> str:
    return subprocess.run([str(prefix / "bin" / "mpirun"), "--version"], capture_output=True,
                          text=True, env=dict(os.environ, OPAL_PREFIX=str(prefix)),
                          check=True).stdout.splitlines()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patched", type=Path, help="prefix of our patched build (required)")
    ap.add_argument("--unpatched", type=Path, default=Path("/usr"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "parx_mpi_cost.json")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: one short round; result in DIR (not bench/results/)")
    args = ap.parse_args()
    walk_messages = 50_000_000
    if args.smoke:
        args.rounds, args.iterations, args.repeats = 1, 200, 1
        args.out, walk_messages = args.smoke / "parx_mpi_cost.json", 100_000
    elif args.patched is None:
        ap.error("--patched is required (the prefix of our patched Open MPI build)")
    runs = measure(args)
    med = {k: {s: statistics.median(r[s] for r in v) for s in SIZES} for k, v in runs.items()}
    walk = select_ns(1 if args.smoke else 5, walk_messages)
    result = {
        "date": time.strftime("%Y-%m-%d"), "cores": len(os.sched_getaffinity(0)),
        "loadavg_1m": os.getloadavg()[0],
        "unpatched": version(args.unpatched),
        "transport": "ob1, btl self,vader (shared memory), 2 ranks on one host",
        "half_rtt_us": med,
        "lid_walk_ns": round(statistics.median(walk), 2), "lid_walk_runs_ns": walk,
        "samples": runs,
    }
    if args.patched is not None:
        result.update(patched=version(args.patched), **{
            "delta_ns_on_vs_unpatched": {s: round((med["patched_on"][s] - med["unpatched"][s])
                                                  * 1e3, 1) for s in SIZES},
            "delta_ns_on_vs_off": {s: round((med["patched_on"][s] - med["patched_off"][s])
                                            * 1e3, 1) for s in SIZES}})
    else:
        result["smoke_left_out"] = {"patched": "no --patched prefix: our patched Open MPI is "
                                    "built outside the repository (docs/modelling.md#parx-mpi-cost)"}
    atomic_write(args.out, json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result.get(k) for k in ("delta_ns_on_vs_unpatched", "delta_ns_on_vs_off",
                                                 "lid_walk_ns", "smoke_left_out")}))
    return 0


def measure(args: argparse.Namespace) -> dict[str, list[dict[int, float]]]:
    """Half round trips per build (and the patched one's PARX switch), builds taking turns."""
    keys = ("unpatched", "patched_off", "patched_on") if args.patched else ("unpatched",)
    runs: dict[str, list[dict[int, float]]] = {k: [] for k in keys}
    with tempfile.TemporaryDirectory() as tmp:
        for sub in ("plain", "ours"):
            (Path(tmp) / sub).mkdir()
        plain = build(str(args.unpatched / "bin" / "mpicc"), Path(tmp) / "plain")
        ours = build(str(args.patched / "bin" / "mpicc"), Path(tmp) / "ours") \
            if args.patched else None
        for _ in range(args.rounds):        # builds take turns: load drifts hit all alike
            runs["unpatched"].append(pingpong(args.unpatched, plain, None, args.iterations,
                                              args.repeats))
            if ours is None:
                continue
            for key, flag in (("patched_off", 0), ("patched_on", 1)):
                runs[key].append(pingpong(args.patched, ours, flag, args.iterations,
                                          args.repeats))
    return runs


if __name__ == "__main__":
    sys.exit(main())
