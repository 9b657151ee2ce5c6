#!/usr/bin/env python3
"""What a capacity run costs besides its solver's timed section (docs/modelling.md#capacity-mode),
from our own measurements. Writes bench/results/overheads.json.

* **Launch**: real ``mpirun`` start-ups of the smallest MPI job (bench/mpinit.c: MPI_Init,
  one barrier, MPI_Finalize) at 1-4 ranks on this machine, ``RUNS`` each; the median per
  rank count. t2hx/flowsim/overhead.py models N nodes from the 1-rank median.
* **Set-up and teardown**: each code's real outputs in tests/data/post/fixtures/ (our own
  runs, tests/data/post/fixtures/README.md) give the wall time outside the timed section
  beside the timed section itself; the fraction (outside / timed) per run and its median
  per code. Codes without such an output are listed as not measured.

Contract: {launch: {open_mpi, runs, median_s: {ranks: s}, samples_s}, setup: {code:
{fraction, runs: [{file, timed_s, outside_s}]}}, not_measured: [...]}.

``--smoke DIR``: one launch at 1 and 2 ranks, every fixture read, the result in
DIR/overheads.json (tests/test_bench_smoke.py).
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

FIXTURES = ROOT / "tests" / "data" / "post" / "fixtures"
RUNS = 7
RANKS = (1, 2, 3, 4)
#: Capacity apps (conf/studies/hyperx-vs-fattree-sc19.yaml) with no real output here that
#: times more than the solver: their runs are launch + solve.
NOT_MEASURED = ("ffvc", "milc", "mvmc", "ntchem", "qball", "swfft", "hpl", "mupp", "emdl")


def _num(pattern: str, text: str, what: Path) -> float:
    found = re.findall(pattern, text)
    if not found:
        raise SystemExit(f"{what}: no match for {pattern!r} (a fixture changed?)")
    return float(found[0])


def minife(path: Path) -> tuple[float, float]:
    text = path.read_text()
    timed = _num(r"Total CG Time: ([0-9.eE+-]+)", text, path)
    return timed, _num(r"Total Program Time: ([0-9.eE+-]+)", text, path) - timed


def amg(path: Path) -> tuple[float, float]:
    """Generate Matrix + IJ vector set-up + PCG set-up outside; PCG solve timed."""
    walls = [float(x) for x in re.findall(r"wall clock time = ([0-9.eE+-]+)", path.read_text())]
    if len(walls) != 4:
        raise SystemExit(f"{path}: expected 4 wall clock times, found {len(walls)}")
    return walls[3], sum(walls[:3])


def comd(path: Path) -> tuple[float, float]:
    text = path.read_text()
    loop = _num(r"(?m)^loop\s+\d+\s+[0-9.]+\s+([0-9.]+)", text, path)
    return loop, _num(r"(?m)^total\s+\d+\s+[0-9.]+\s+([0-9.]+)", text, path) - loop


def graph500(path: Path) -> tuple[float, float]:
    """The BFS searches timed; generation, construction and every search's validation
    (the reference code validates unless told not to) outside."""
    text = path.read_text()
    nbfs = _num(r"NBFS:\s+(\d+)", text, path)
    timed = nbfs * _num(r"bfs\s+mean_time:\s+([0-9.eE+-]+)", text, path)
    outside = (_num(r"graph_generation:\s+([0-9.eE+-]+)", text, path)
               + _num(r"construction_time:\s+([0-9.eE+-]+)", text, path)
               + nbfs * _num(r"bfs\s+mean_validate:\s+([0-9.eE+-]+)", text, path))
    return timed, outside


def hpcg(path: Path) -> tuple[float, float]:
    """Set-up and optimisation outside the timed sets (the untimed reference and
    validation sets are modelled as sets: t2hx/benchmarks/hpcg.py)."""
    text = path.read_text()
    return (_num(r"Benchmark Time Summary::Total=([0-9.eE+-]+)", text, path),
            _num(r"Setup Information::Setup Time=([0-9.eE+-]+)", text, path)
            + _num(r"Benchmark Time Summary::Optimization phase=([0-9.eE+-]+)", text, path))


READERS = {"minife": ("minife/*.yaml", minife), "amg": ("amg/amg-problem1-*.out", amg),
           "comd": ("comd/*.out", comd), "graph500": ("graph500/graph500-bfs-np*-scale*.out",
                                                       graph500),
           "hpcg": ("hpcg/*.HPCG-Benchmark.txt", hpcg)}


def setup_fractions() -> dict:
    out = {}
    for code, (glob, read) in READERS.items():
        runs = []
        for path in sorted(FIXTURES.glob(glob)):
            timed, outside = read(path)
            runs.append({"file": str(path.relative_to(ROOT)), "timed_s": timed,
                         "outside_s": round(outside, 9)})
        out[code] = {"fraction": round(statistics.median(r["outside_s"] / r["timed_s"]
                                                         for r in runs), 4), "runs": runs}
    return out


def launches(quiet: bool, runs: int = RUNS, ranks: tuple[int, ...] = RANKS) -> dict:
    mpicc, mpirun = shutil.which("mpicc"), shutil.which("mpirun")
    if not (mpicc and mpirun):
        raise SystemExit("bench/overheads.py: mpicc/mpirun not found (fix: run/setup installs "
                         "Debian's Open MPI)")
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True,
                             check=True).stdout.splitlines()[0]
    samples: dict[int, list[float]] = {k: [] for k in ranks}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "mpinit"
        subprocess.run([mpicc, "-O2", "-o", str(exe), str(ROOT / "bench" / "mpinit.c")],
                       check=True)
        for _ in range(runs):             # interleaved: load drifts hit every count alike
            for k in ranks:
                t0 = time.perf_counter()
                subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-np",
                                str(k), str(exe)], check=True)
                samples[k].append(round(time.perf_counter() - t0, 4))
        if not quiet:
            print({k: statistics.median(v) for k, v in samples.items()}, file=sys.stderr)
    return {"open_mpi": version, "runs": runs, "program": "bench/mpinit.c",
            "command": "mpirun --allow-run-as-root --oversubscribe -np K mpinit",
            "median_s": {str(k): statistics.median(v) for k, v in samples.items()},
            "samples_s": {str(k): v for k, v in samples.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "overheads.json"))
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: one launch at 1 and 2 ranks; result in DIR (not bench/results/)")
    args = ap.parse_args()
    launch = launches(args.quiet, 1, (1, 2)) if args.smoke else launches(args.quiet)
    if args.smoke:
        args.out = args.smoke / "overheads.json"
    result = {"launch": launch, "setup": setup_fractions(), "smoke": bool(args.smoke),
              "not_measured": list(NOT_MEASURED),
              "date": time.strftime("%Y-%m-%d"), "cores": len(__import__("os").sched_getaffinity(0))}
    atomic_write(Path(args.out), json.dumps(result, indent=1) + "\n")
    print(json.dumps({"launch_median_s": result["launch"]["median_s"],
                      "setup": {k: v["fraction"] for k, v in result["setup"].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
