#!/usr/bin/env python3
"""Run-to-run spread of real runs on THIS machine: the calibration data of the noise model
(t2hx/flowsim/noise.py, docs/modelling.md#run-to-run-noise).

Runs the Spack-built IMB-MPI1 (Allreduce, Bcast, Alltoall) and miniFE under Open MPI with
2 ranks over shared memory, ``--repetitions`` times each, and records every raw number with
its command, host and load. The coefficient of variation (sample std / mean) per quantity
and its median per group are what the study's ``noise: cv:`` takes over. This box has no
network: the spread is OS and memory jitter of a shared 2-core machine, not fabric
contention (the caveats are in docs/modelling.md).

The view is ``$T2HX_SPACK_VIEW`` (default ``spack-env/view`` under the repository).
Writes bench/results/noise.json.

``--smoke DIR``: two repetitions of short runs (IMB ``-time 0.05 -iter 20``, miniFE at 10^3),
the result in DIR/noise.json (tests/test_bench_smoke.py). Without the view's binaries the
runs are left out, said in the result, and IMB's committed output of the same collectives
(tests/data/post/fixtures/imb/) goes through the same reading instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.wire import WALLTIME_RE  # noqa: E402

IMB_SIZES = (8, 1024, 65536, 1048576)      # bytes of the rows kept per collective
IMB_COLLECTIVES = ("Allreduce", "Bcast", "Alltoall")
MINIFE_N = 80
BINARIES = ("IMB-MPI1", "miniFE.x")
FIXTURE = ROOT / "tests" / "data" / "post" / "fixtures" / "imb" / \
    "imb-mpi1-np4-collectives-msglog0-16.out"


def mpirun(view: Path, ranks: int, args: list[str], cwd: Path) -> str:
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMP_NUM_THREADS": "1",
           "LD_LIBRARY_PATH": f"{view}/lib:{os.environ.get('LD_LIBRARY_PATH', '')}"}
    cmd = ["mpirun", "-np", str(ranks), "--mca", "btl", "self,vader", "--bind-to", "none",
           str(view / "bin" / args[0]), *args[1:]]
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()[-300:]}")
    return done.stdout


def imb_rows(text: str) -> dict[str, dict[int, float]]:
    """t_min [us] (the study's IMB metric) per collective and message size, as IMB prints them."""
    out: dict[str, dict[int, float]] = {}
    name = None
    for line in text.splitlines():
        m = re.match(r"# Benchmarking (\w+)", line)
        if m:
            name = m.group(1)
            continue
        cols = line.split()
        if name and len(cols) == 5 and cols[0].isdigit() and int(cols[0]) in IMB_SIZES:
            out.setdefault(name, {})[int(cols[0])] = float(cols[2])
    return out


def cv(values: list[float]) -> float:
    return statistics.stdev(values) / statistics.fmean(values)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repetitions", type=int, default=8)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "noise.json"))
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: two short repetitions; result in DIR (not bench/results/)")
    args = ap.parse_args()
    view = Path(os.environ.get("T2HX_SPACK_VIEW") or ROOT / "spack-env" / "view")
    imb_cmd = ["IMB-MPI1", *IMB_COLLECTIVES, "-npmin", "2", "-msglog", "0:20", "-time", "2"]
    fe_n = MINIFE_N
    if args.smoke:
        args.repetitions, args.out, fe_n = 2, args.smoke / "noise.json", 10
        imb_cmd[-1:] = ["0.05", "-iter", "20"]
        missing = [b for b in BINARIES if not (view / "bin" / b).is_file()]
        if missing:
            return smoke_without_view(view, missing, args.out)
    fe_cmd = ["miniFE.x", f"nx={fe_n}", f"ny={fe_n}", f"nz={fe_n}"]
    raw_imb: list[dict] = []
    raw_fe: list[float] = []
    loads = []
    with tempfile.TemporaryDirectory(prefix="t2hx-noise-") as tmp:
        for rep in range(args.repetitions):
            loads.append(round(os.getloadavg()[0], 2))
            rows = imb_rows(mpirun(view, 2, imb_cmd, Path(tmp)))
            raw_imb.append({c: {str(s): v for s, v in r.items()} for c, r in rows.items()})
            text = mpirun(view, 2, fe_cmd, Path(tmp))
            times = [float(m.group(1)) for line in text.splitlines()
                     if (m := WALLTIME_RE.match(line))]
            raw_fe.append(times[-1])
            print(f"rep {rep}: miniFE {times[-1]:.4f} s, load {loads[-1]}", flush=True)
    network = {f"{c}/{s}": round(cv([r[c][str(s)] for r in raw_imb]), 4)
               for c in IMB_COLLECTIVES for s in IMB_SIZES}
    result = {
        "what": "run-to-run spread of real runs, 2 ranks over shared memory on this machine",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "smoke": bool(args.smoke),
        "machine": platform.machine(), "cores": os.cpu_count(),
        "load_1min_per_repetition": loads,
        "repetitions": args.repetitions,
        "commands": {"imb": " ".join(imb_cmd), "minife": " ".join(fe_cmd)},
        "raw": {"imb_t_min_us": raw_imb, "minife_solver_walltime_s": raw_fe},
        "cv": {"imb": network, "minife": round(cv(raw_fe), 4)},
        "cv_group": {"network": round(statistics.median(network.values()), 4),
                     "app": round(cv(raw_fe), 4)},
    }
    atomic_write(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["cv_group"]))
    return 0


def smoke_without_view(view: Path, missing: list[str], out: Path) -> int:
    """The smoke run on a machine without the Spack view: IMB's committed output read as a
    run's would be; the runs themselves left out, with the reason."""
    rows = imb_rows(FIXTURE.read_text())
    absent = [c for c in IMB_COLLECTIVES if not rows.get(c)]
    if absent:
        raise SystemExit(f"{FIXTURE}: no rows of {absent} (the IMB reader broke?)")
    why = f"{', '.join(missing)} not in {view}/bin (build the Spack view: spack-env/README.md)"
    doc = {"smoke": True, "imb_t_min_us_from_fixture": rows,
           "fixture": str(FIXTURE.relative_to(ROOT)), "smoke_left_out": {"runs": why}}
    atomic_write(out, json.dumps(doc, indent=2) + "\n")
    print(f"noise smoke: runs left out: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
