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

* **Job start-up at 1-4 nodes** (``--cluster``): the same program started by ``srun`` and by
  ``mpirun`` on the 4-node test cluster (tests/cluster.py: a real slurmd per node, each node
  its own network namespace, Open MPI over TCP), from inside one allocation as the capacity
  driver starts its runs (t2hx.launcher.launch_command), ``CLUSTER_REPS`` times each,
  interleaved. Raw runs in log/startup/runs.json; :func:`fit_startup` fits each launcher's
  start-up to every law of ``LAWS`` and keeps its launch mechanism's (``MECHANISM``)
  (docs/modelling.md#run-overheads; t2hx/conf.py RUN_OVERHEAD holds the chosen fit and
  tests/test_capacity_whole_job.py recomputes it from the committed runs).

Contract: {launch: {open_mpi, runs, median_s: {ranks: s}, samples_s}, startup: {runs_file,
fits: {launcher: {law: {a_s, b_s, rms_s, residuals_s}}}, chosen: {launcher: law}}, setup:
{code: {fraction, runs: [{file, timed_s, outside_s}]}}, not_measured: [...]}.

``--smoke DIR``: one launch at 1 and 2 ranks, every fixture read, the start-up fit of the
committed cluster runs, the result in DIR/overheads.json (tests/test_bench_smoke.py).
"""

import argparse
import json
import os
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
STARTUP_DIR = ROOT / "log" / "startup"
STARTUP_RUNS = STARTUP_DIR / "runs.json"
CLUSTER_REPS = 12
LAUNCH_TIMEOUT_S = 60
CLUSTER_NODES = ("cn001", "cn002", "cn003", "cn004")
CLUSTER_CONF = ROOT / "docs" / "examples" / "cluster64.yaml"
#: Scaling laws of a job's start-up with its node count N: start-up = a + b * x(N).
#: levels: one step per level of ORTE's radix-64 daemon tree (t2hx.flowsim.overhead);
#: log2: a binary fan-out (PMIx/Slurm wire-up rounds); linear: one step per extra node.
LAWS = ("levels", "log2", "linear")
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


def law_x(law: str, nodes: int) -> float:
    from t2hx.flowsim.overhead import law_x as x
    return x(law, nodes)


#: The law each launcher's start-up follows, from how it starts a job: mpirun's ORTE spawns
#: its daemons along a radix-64 tree (orte/mca/routed/radix), Slurm forwards a step's launch
#: along a tree of TreeWidth 50 (slurm.conf default): a step per tree level. Chosen by the
#: mechanism, not by the residuals: the test cluster's four "nodes" share this machine's two
#: cores, so every extra node adds CPU time one after another, which favours the linear law
#: at 1-4 nodes (it fits best on an idle machine) although no tree launch grows linearly.
MECHANISM = {"mpirun": "levels", "srun": "levels"}


def fit_startup(runs: list[dict]) -> dict:
    """Each launcher's start-up fitted to every law of LAWS by least squares on the medians
    per node count (a slow outlier moves a median less than a mean), all reported; the
    chosen law per launcher is its mechanism's (MECHANISM)."""
    import numpy as np

    fits: dict[str, dict] = {}
    chosen: dict[str, str] = {}
    for how in sorted({r["launcher"] for r in runs}):
        by_n: dict[int, list[float]] = {}
        for r in runs:
            if r["launcher"] == how and r["rc"] == 0:
                by_n.setdefault(r["nodes"], []).append(r["seconds"])
        ns = sorted(by_n)
        med = np.array([statistics.median(by_n[n]) for n in ns])
        fits[how] = {"median_s": {str(n): round(float(m), 4) for n, m in zip(ns, med)},
                     "runs": {str(n): len(by_n[n]) for n in ns}}
        for law in LAWS:
            x = np.array([law_x(law, n) for n in ns])
            b, a = np.polyfit(x, med, 1)
            res = med - (a + b * x)
            fits[how][law] = {"a_s": round(float(a), 4), "b_s": round(float(b), 4),
                              "rms_s": round(float(np.sqrt(np.mean(res ** 2))), 4),
                              "residuals_s": [round(float(v), 4) for v in res]}
        chosen[how] = MECHANISM[how]
    return {"runs_file": str(STARTUP_RUNS.relative_to(ROOT)), "fits": fits, "chosen": chosen}


def _driver(reps: int, exe: Path, hosts: Path, out: Path) -> str:
    """The batch script: every (repetition, node count, launcher) start-up, timed by the
    shell around the launch command the capacity driver uses (t2hx.launcher)."""
    srun = ("env SLURM_HOSTFILE={h} srun --distribution=arbitrary --mpi=pmix --ntasks={k} "
            "--nodes={k} {exe}")
    mpirun = "mpirun --hostfile {h} -np {k} {exe}"
    lines = ["#!/bin/bash", "set -u", "export OMPI_ALLOW_RUN_AS_ROOT=1 "
             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
             # As tests/test_cluster.py runs Open MPI here: TCP, idle ranks yield.
             "export OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self OMPI_MCA_mpi_yield_when_idle=1",
             f"echo 'load_before' $(cut -d' ' -f1-3 /proc/loadavg) >> {out}"]
    for rep in range(reps):
        order = ("srun", "mpirun") if rep % 2 == 0 else ("mpirun", "srun")
        for k in range(1, len(CLUSTER_NODES) + 1):
            for how in order:
                cmd = (srun if how == "srun" else mpirun).format(h=hosts / f"{k}.hosts", k=k,
                                                                 exe=exe)
                # A launch that hangs (Open MPI's TCP wire-up or Slurm's PMIx on this
                # cluster, tests/test_cluster.py) is ended and recorded as failed.
                lines += [f"t0=$(date +%s.%N); timeout -k 5 {LAUNCH_TIMEOUT_S} {cmd} "
                          "> /dev/null 2>&1; rc=$?; "
                          f"t1=$(date +%s.%N); echo run {rep} {how} {k} $rc $t0 $t1 >> {out}"]
    lines.append(f"echo 'load_after' $(cut -d' ' -f1-3 /proc/loadavg) >> {out}")
    return "\n".join(lines) + "\n"


def cluster_startups(reps: int, quiet: bool) -> dict:
    """Start the 4-node test cluster (no subnet manager: no fabric is routed here), run the
    driver as one batch job holding every node, return the raw runs with what made them."""
    sys.path.insert(0, str(ROOT))
    from t2hx.conf import load_system
    from tests.cluster import TestCluster

    class StartupCluster(TestCluster):
        def _sm_host(self) -> None:
            """No OpenSM: a start-up needs Slurm and MPI only."""

    mpicc = shutil.which("mpicc")
    if not mpicc:
        raise SystemExit("bench/overheads.py: mpicc not found (fix: run/setup)")
    with tempfile.TemporaryDirectory(prefix="t2hx-startup-") as tmp:
        root = Path(tmp)
        exe, hosts, out = root / "mpinit", root / "hosts", root / "runs.txt"
        subprocess.run([mpicc, "-O2", "-o", str(exe), str(ROOT / "bench" / "mpinit.c")],
                       check=True)
        hosts.mkdir()
        for k in range(1, len(CLUSTER_NODES) + 1):
            (hosts / f"{k}.hosts").write_text("".join(h + "\n" for h in CLUSTER_NODES[:k]))
        (root / "driver.sh").write_text(_driver(reps, exe, hosts, out))
        (root / "c").mkdir()
        cluster = StartupCluster(load_system(CLUSTER_CONF), root / "c", list(CLUSTER_NODES))
        try:
            cluster.start()
            cluster.run("sbatch", "--wait", "--exclusive", f"--nodes={len(CLUSTER_NODES)}",
                        f"--nodelist={','.join(CLUSTER_NODES)}", "--output",
                        str(root / "job.out"), str(root / "driver.sh"), timeout=3600)
            versions = {"slurm": cluster.run("srun", "--version").strip()}
        finally:
            cluster.stop()
        text = out.read_text()
    runs, load = [], {}
    for line in text.splitlines():
        word, *rest = line.split()
        if word == "run":
            rep, how, k, rc, t0, t1 = rest
            runs.append({"rep": int(rep), "launcher": how, "nodes": int(k), "rc": int(rc),
                         "seconds": round(float(t1) - float(t0), 4)})
        else:
            load[word] = [float(v) for v in rest]
    if not quiet:
        print(f"{len(runs)} start-ups, {sum(r['rc'] != 0 for r in runs)} failed", file=sys.stderr)
    mpirun = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
    return {"runs": runs, "reps": reps, "nodes": list(CLUSTER_NODES),
            "versions": {**versions, "open_mpi": mpirun.splitlines()[0],
                         "kernel": os.uname().release},
            "loadavg": load, "cores": len(os.sched_getaffinity(0)),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "program": "bench/mpinit.c (mpicc -O2)",
            "timeout": f"timeout -k 5 {LAUNCH_TIMEOUT_S} around each launch (rc 124: hung)",
            "commands": {"srun": "env SLURM_HOSTFILE=<K hosts> srun --distribution=arbitrary "
                                 "--mpi=pmix --ntasks=K --nodes=K mpinit",
                         "mpirun": "mpirun --hostfile <K hosts> -np K mpinit"},
            "environment": "OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self "
                           "OMPI_MCA_mpi_yield_when_idle=1",
            "allocation": "sbatch --wait --exclusive --nodes=4 --nodelist=cn001,...,cn004 "
                          "driver.sh (tests/cluster.py's 4-node cluster, no SM host)"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "overheads.json"))
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: one launch at 1 and 2 ranks; result in DIR (not bench/results/)")
    ap.add_argument("--cluster", action="store_true",
                    help="also measure srun/mpirun start-ups at 1-4 nodes on the test cluster "
                    "(root: network namespaces) into log/startup/runs.json")
    args = ap.parse_args()
    if args.cluster and not args.smoke:
        made = cluster_startups(CLUSTER_REPS, args.quiet)
        atomic_write(STARTUP_RUNS, json.dumps(made, indent=1) + "\n")
    launch = launches(args.quiet, 1, (1, 2)) if args.smoke else launches(args.quiet)
    if args.smoke:
        args.out = args.smoke / "overheads.json"
    startup = fit_startup(json.loads(STARTUP_RUNS.read_text())["runs"])
    result = {"launch": launch, "startup": startup, "setup": setup_fractions(),
              "smoke": bool(args.smoke),
              "not_measured": list(NOT_MEASURED),
              "date": time.strftime("%Y-%m-%d"), "cores": len(os.sched_getaffinity(0))}
    atomic_write(Path(args.out), json.dumps(result, indent=1) + "\n")
    print(json.dumps({"launch_median_s": result["launch"]["median_s"],
                      "startup_chosen": startup["chosen"],
                      "setup": {k: v["fraction"] for k, v in result["setup"].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
