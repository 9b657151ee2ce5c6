"""Calibration runs of the application and x500 codes (docs/modelling.md#calibration).

A calibration runs a code's own `local` ReFrame check (the Spack view's binary, the study's
small ``local.input``) at several rank counts with Open MPI's ``pml_monitoring`` switched on
(``enable 2``: ``E`` lines count the user's point-to-point bytes, ``I`` lines the messages
inside collectives), and keeps, per rank count, what the code reported (its Table 2 metric,
e.g. the solver walltime) and what every rank sent: bytes, messages and distinct peers, both
kinds apart. The result is ``conf/calibration/<benchmark>.json`` with its provenance.

Running through ReFrame, not a command line of our own, keeps calibration and the study on one
definition of each code's command, inputs and staging.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx import ROOT, benchmarks
from t2hx.atomic import atomic_write
from t2hx.errors import T2hxError
from t2hx.paths import spack_view, work_root

CALIBRATION_DIR = ROOT / "conf" / "calibration"
PROFILE_PREFIX = "t2hx-mon"        # pml_monitoring_filename, relative to the stage dir
LINE = re.compile(r"^([EI])\s+(\d+)\s+(\d+)\s+(\d+) bytes\s+(\d+) msgs", re.M)
MONITORING = {"OMPI_MCA_pml_monitoring_enable": "2",
              "OMPI_MCA_pml_monitoring_enable_output": "3",
              "OMPI_MCA_pml_monitoring_filename": PROFILE_PREFIX}


# Codes whose output times their phases: the timers a run's record keeps (``phases``), for
# work rules that weigh a code's parts by where our own run spent its time.
PHASE_TIMERS = {"ntchem": re.compile(r"^ \.{3,5}\s+WALL time \(([^)]*?)\s*\)\s*:\s*([\d.]+)",
                                     re.M)}


class CalibrationError(T2hxError):
    """A calibration cannot be run or read."""


@dataclass(frozen=True)
class Traffic:
    """What each rank of one run sent, by kind (``p2p``: E lines, ``coll``: I lines)."""
    ranks: int
    bytes: dict[str, list[int]]
    msgs: dict[str, list[int]]
    peers: dict[str, list[int]]


def read_traffic(stage: Path, ranks: int) -> Traffic:
    """The ``<prefix>.<rank>.prof`` files of one run in ``stage``."""
    out = {k: {"p2p": np.zeros(ranks, np.int64), "coll": np.zeros(ranks, np.int64)}
           for k in ("bytes", "msgs")}
    peers: dict[str, list[set[int]]] = {"p2p": [set() for _ in range(ranks)], "coll": [set() for _ in range(ranks)]}
    files = sorted(stage.rglob(f"{PROFILE_PREFIX}.*.prof"))   # mVMC: rank 0 chdirs
    if len(files) != ranks:
        raise CalibrationError(f"{len(files)} pml_monitoring files for {ranks} ranks",
                               file=stage, fix="rerun: a rank died before MPI_Finalize")
    for f in files:
        for kind, src, dst, nbytes, msgs in LINE.findall(f.read_text(errors="replace")):
            k, s = ("p2p" if kind == "E" else "coll"), int(src)
            if s == int(dst):      # a rank's messages to itself never reach the network
                continue
            out["bytes"][k][s] += int(nbytes)
            out["msgs"][k][s] += int(msgs)
            if int(nbytes):
                peers[k][s].add(int(dst))
    return Traffic(ranks, {k: v.tolist() for k, v in out["bytes"].items()},
                   {k: v.tolist() for k, v in out["msgs"].items()},
                   {k: [len(p) for p in v] for k, v in peers.items()})


def mean_per_rank(traffic: dict, kind: str, what: str = "bytes") -> float:
    """Mean over ranks of what one rank sent of ``kind`` (p2p, coll or total)."""
    kinds = ("p2p", "coll") if kind == "total" else (kind,)
    return float(np.mean(np.sum([traffic[what][k] for k in kinds], axis=0)))


def read_phases(code: str, stage: Path) -> dict[str, float]:
    """Rank 0's phase timers (seconds) in a run's output, for the codes of PHASE_TIMERS."""
    timer = PHASE_TIMERS.get(code)
    out = stage / "rfm_job.out"
    if timer is None or not out.is_file():
        return {}
    return {name: float(sec) for name, sec in timer.findall(out.read_text(errors="replace"))}


def _reframe_run(bench: benchmarks.Benchmark, ranks: list[int], campaign: str,
                 logs: Path, quiet: bool) -> None:
    from t2hx.paths import cli

    env = dict(os.environ, T2HX_LOCAL_NODES=",".join(map(str, ranks)),
               T2HX_CAMPAIGN=campaign, T2HX_LOG_ROOT=str(logs), **MONITORING)
    reframe = Path(cli()).with_name("reframe")
    cmd = [str(reframe), "-C", str(ROOT / "conf" / "reframe.py"), "-c", str(ROOT / "checks"),
           "-r", "--system", "local", "--keep-stage-files", "--exec-policy=serial",
           "-n", f"^{bench.check}"]   # ReFrame reads " %…" in -n as a parameter filter
    done = subprocess.run(cmd, cwd=ROOT, env=env, text=True,
                          stdout=subprocess.DEVNULL if quiet else None)
    if done.returncode not in (0, 1):      # 1: some case failed; the records say which
        raise CalibrationError(f"reframe exited with {done.returncode}", field=bench.key,
                               fix="see the ReFrame output above")


def _records(logs: Path, campaign: str) -> list[dict]:
    from t2hx.post.perflog import read_perflog

    rows = []
    for path in sorted((logs / campaign / "perflogs").rglob("*.log")):
        for frame in read_perflog(path).frames:
            rows += frame[frame["result"] == "pass"].to_dict("records")
    return rows


def _stage_of(stage_root: Path, row: dict) -> Path:
    """The kept stage dir of a perflog record: ReFrame names it <check>_<hash>, and the
    record's ``info`` ends with ``/<hash>``."""
    found = re.search(r" /([0-9a-f]{8})\b", row["info"])
    name = f"{row['info'].split()[0]}_{found.group(1) if found else '?'}"
    hits = list(stage_root.glob(f"*/*/*/{name}"))
    if len(hits) != 1:
        raise CalibrationError(f"{len(hits)} stage dirs named {name}", file=stage_root,
                               fix="remove the calibration work dir and rerun")
    return hits[0]


def provenance(bench: benchmarks.Benchmark) -> dict:
    lock = ROOT / "spack-env" / "spack.lock"
    spec, source = None, {}
    if lock.exists():
        data = json.loads(lock.read_text())
        name = bench.spack_spec.split("@")[0].split()[0] if bench.spack_spec else ""
        root = next((r for r in data.get("roots", []) if r["spec"].split("@")[0] == name), None)
        if root:
            spec = f"{root['spec']} /{root['hash'][:7]}"
            params = data["concrete_specs"][root["hash"]].get("parameters", {})
            source = {k: params[k] for k in ("commit", "patches") if k in params}
    mpi = subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout
    from t2hx.study import load_study

    study = load_study().name       # whose local.input the runs took ($T2HX_STUDY)
    return {
        "spack_spec": bench.spack_spec, "locked_spec": spec, "source": source,
        "binary": f"{bench.local_binary} from the Spack view (T2HX_SPACK_VIEW)",
        "open_mpi": (mpi.splitlines() or ["?"])[0],
        "cpu": _cpu_model(), "cores": os.cpu_count(), "machine": platform.machine(),
        "loadavg_1m_before": os.getloadavg()[0],
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "monitoring": MONITORING,
        "study": study, "command": f"T2HX_STUDY={study} t2hx calibrate {bench.key}"}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def calibrate(name: str, ranks: list[int], quiet: bool = False,
              out_dir: Path = CALIBRATION_DIR) -> Path:
    """Run one code at ``ranks`` and write ``<out_dir>/<key>.json``; returns its path."""
    bench, _ = benchmarks.resolve(name, field="APP")
    if not bench.local_binary or not (spack_view() / "bin" / bench.local_binary).exists():
        raise CalibrationError(f"the Spack view {spack_view()} has no bin/{bench.local_binary}",
                               field="T2HX_SPACK_VIEW",
                               fix="build spack-env or point T2HX_SPACK_VIEW at its view")
    from t2hx.study import load_study

    local = load_study().local["input"].get(bench.key)
    if local is None:
        raise CalibrationError(f"no small input for {bench.key}", field="local.input",
                               fix=f"add local.input.{bench.key} to conf/studies/<study>.yaml")
    prov = provenance(bench)
    campaign = f"calibrate-{bench.key}"
    work = work_root() / "calibration" / bench.key
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(work_root() / "reframe" / campaign, ignore_errors=True)
    _reframe_run(bench, ranks, campaign, work / "log", quiet)
    stage_root = work_root() / "reframe" / campaign / "stage"
    runs = []
    # One record per rank count: ReFrame can log a case's record twice (mVMC does).
    rows = list({int(r["num_nodes"]): r for r in _records(work / "log", campaign)
                 if r["benchmark"] == bench.key}.values())
    for row in sorted(rows, key=lambda r: int(r["num_nodes"])):
        n = int(row["num_nodes"])
        stage = _stage_of(stage_root, row)
        run = {"ranks": n, "metric": row["perf_var"], "value": float(row["perf_value"]),
               "unit": row["perf_unit"], "traffic": read_traffic(stage, n).__dict__}
        if phases := read_phases(bench.key, stage):
            run["phases"] = phases
        runs.append(run)
    missing = sorted(set(ranks) - {r["ranks"] for r in runs})
    if missing:
        raise CalibrationError(f"no passing run of {bench.key} at {missing} ranks",
                               field=bench.key,
                               fix=f"see {work_root() / 'reframe' / campaign}/reframe.log")
    data = {"benchmark": bench.key, "input": local, "provenance": prov, "runs": runs}
    path = out_dir / f"{bench.key}.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1) + "\n")
    if not quiet:
        for r in runs:
            print(f"{bench.key} {r['ranks']:>2} ranks: {r['metric']} {r['value']:.4g} "
                  f"{r['unit']}; per rank p2p {mean_per_rank(r['traffic'], 'p2p'):.4g} B, "
                  f"coll {mean_per_rank(r['traffic'], 'coll'):.4g} B", file=sys.stderr)
    return path


def load(name: str, directory: Path = CALIBRATION_DIR) -> dict:
    path = directory / f"{name}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise CalibrationError(f"cannot read calibration ({err})", file=path,
                               fix=f"run `t2hx calibrate {name}`") from None


MACHINE = "machine"      # machine.json: this machine's rates (t2hx/machine.py), not a code


def codes(directory: Path = CALIBRATION_DIR) -> list[str]:
    """The calibrated codes (``<code>.json``)."""
    return sorted(p.stem for p in directory.glob("*.json") if p.stem != MACHINE)


def table(directory: Path = CALIBRATION_DIR) -> str:
    """One Markdown row per (code, rank count): metric, and what one rank sent on average."""
    rows = ["| code | ranks | metric | p2p B/rank | p2p msgs/rank | coll B/rank | peers (p2p) |",
            "|---|---|---|---|---|---|---|"]
    for path in (directory / f"{code}.json" for code in codes(directory)):
        data = load(path.stem, directory)
        for r in data["runs"]:
            t = r["traffic"]
            rows.append(f"| {data['benchmark']} | {r['ranks']} | {r['metric']} {r['value']:.4g} "
                        f"{r['unit']} | {mean_per_rank(t, 'p2p'):.3g} | "
                        f"{mean_per_rank(t, 'p2p', 'msgs'):.3g} | "
                        f"{mean_per_rank(t, 'coll'):.3g} | {max(t['peers']['p2p'])} |")
    return "\n".join(rows)
