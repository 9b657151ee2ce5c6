#!/usr/bin/env python3
"""Wall time of the paper-scale campaign (``run/reproduce --profile paper``, committed as
log/paper-scale/) on this machine, from its own ReFrame reports, and the same campaign on a
Slurm partition estimated from the measured Slurm throughput of bench/campaign.py. Adds
``paper_scale`` to bench/results/campaign.json (other keys kept); ``LOGDIR --key NAME`` does
the same for another resumed campaign (seed 004's full replay: ``log/sar-full --key
sar_full``).

A campaign may run in several ReFrame sessions (resumed, or capability and capacity apart):
its wall time is the sum of the sessions' elapsed times; cases are what the sessions ran
(neither skipped as recorded before nor aborted).
The Slurm figure is an estimate, not a run: the paper profile's cases at the per-case
overhead measured through Slurm (bench/campaign.py, 2 concurrent jobs on 2 cores) plus the
simulation time this machine spent (the same on a Slurm node of the same speed), a lower
bound for a partition of that size.

What dominates (#46): ``dominant``, the checks whose jobs held the slots longest. Against
#46's goal (``GOAL_H``): ``goal_h``, ``over_goal_h`` (how much longer the campaign took, 0
within it), ``one_run`` (every session in one ``run/reproduce``: provenance records one
run) and the commits the runs were made at.

Packing (#46): per session with a report, how full the machine's job slots were: the time
integral of min(running jobs, cores) over cores x the session's elapsed time, from each
case's job submission to its completion (ReFrame's ``job_submit_time`` and
``job_completion_time_unix``); and the seconds with fewer jobs running than cores. A
campaign's first session runs only the cases that simulate (the others hit the run cache
in a later session, t2hx/campaign/schedule.py), so there a running job is a simulating one.

``--smoke DIR``: the same on a copy of log/paper-scale in DIR that keeps one of its ReFrame
reports (the others become sessions without a report), the record in DIR/paper_scale.json
(tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import lzma
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

RESULT = ROOT / "bench" / "results" / "campaign.json"


CORES = 2
#: #46's wall-time goals per record (hours, one uninterrupted run on this 2-core machine).
GOAL_H = {"paper_scale": 1.0, "sar_full": 1.5}


def packing(report: dict, cores: int = CORES) -> dict:
    """How full ``cores`` job slots were over a session (see the module's docstring)."""
    info = report["session_info"]
    t0, t1 = float(info["time_start_unix"]), float(info["time_end_unix"])
    events = []
    for run in report["runs"]:
        for case in run["testcases"]:
            start, end = case.get("job_submit_time"), case.get("job_completion_time_unix")
            if start is None or end is None or case.get("result") != "pass":
                continue
            events += [(max(t0, float(start)), 1), (min(t1, float(end)), -1)]
    events.sort()
    full = under = 0.0
    running, last = 0, t0
    for when, step in events:
        span = max(0.0, when - last)
        full += span * min(running, cores)
        under += span if running < cores else 0.0
        running, last = running + step, max(last, when)
    under += max(0.0, t1 - last)
    elapsed = max(t1 - t0, 1e-9)
    return {"cores": cores, "efficiency": round(full / (cores * elapsed), 3),
            "under_cores_s": round(under, 1), "jobs": len(events) // 2}


def _reports(logdir: Path) -> list[tuple[Path, dict]]:
    # ReFrame's report of a paper-scale session is tens of MB of JSON: committed xz'd.
    out = []
    for path in sorted((logdir / "reframe").glob("report-*.json*")):
        text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
        out.append((path, json.loads(text)))
    return out


def dominant(logdir: Path, top: int = 8) -> list[dict]:
    """What the job slots held longest, by check (e.g. NetgaugeEBB, IMBCollective): each
    check's passing cases, their job seconds (submission to completion) and share of all
    the sessions' job seconds, the largest first."""
    held: dict[str, list[float]] = {}
    for _, report in _reports(logdir):
        for run in report["runs"]:
            for case in run["testcases"]:
                start, end = case.get("job_submit_time"), case.get("job_completion_time_unix")
                if start is None or end is None or case.get("result") != "pass":
                    continue
                held.setdefault(case["name"].split()[0], []).append(float(end) - float(start))
    total = max(1e-9, sum(sum(v) for v in held.values()))
    rows = sorted(held.items(), key=lambda kv: -sum(kv[1]))[:top]
    return [{"check": name, "jobs": len(v), "job_s": round(sum(v), 1),
             "share": round(sum(v) / total, 3), "longest_s": round(max(v), 1)}
            for name, v in rows]


def sessions(logdir: Path) -> list[dict]:
    out = []
    for path, report in _reports(logdir):
        info = report["session_info"]
        out.append({"report": path.name, "start": info["time_start"], "end": info["time_end"],
                    "elapsed_s": round(float(info["time_elapsed"]), 1),
                    # A resumed session lists every case: those it skipped (recorded before)
                    # or aborted (interrupted) did not run in it.
                    "cases": int(info["num_cases"]) - int(info.get("num_skipped", 0))
                    - int(info.get("num_aborted", 0)),
                    "failures": int(info["num_failures"]),
                    "packing": packing(report)})
    if not out:
        raise SystemExit(f"{logdir}: no ReFrame reports in reframe/ (run the campaign first)")
    return out


def _when(text: str) -> datetime:
    stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def unreported(logdir: Path, reported: list[dict]) -> list[dict]:
    """Sessions that left no ReFrame report (interrupted before ReFrame wrote one): each
    provenance run with no report starting before the next run, from its start to the last
    case its perflogs record before the next run; cases are the passing records in between
    (one per case: a history case logs several metrics)."""
    from t2hx.post.perflog import read_perflog

    starts = [_when(r["date"]) for r in
              json.loads((logdir / "provenance.json").read_text())["runs"]]
    have = [_when(r["start"]) for r in reported]
    done: list[tuple[datetime, str]] = []
    for path in sorted((logdir / "perflogs").rglob("*.log")):
        for frame in read_perflog(path).frames:
            ok = frame[frame["result"] == "pass"]
            done += [(_when(str(t)), str(i).split(" @")[0])
                     for t, i in zip(ok["job_completion_time"], ok["info"])]
    out = []
    for k, start in enumerate(starts):
        stop = starts[k + 1] if k + 1 < len(starts) else datetime.max.replace(tzinfo=UTC)
        # a run's ReFrame sessions start after its routing analysis (a run may hold several:
        # misses, then cache hits): any report inside the run means it reported
        if any(start <= h < stop for h in have):
            continue
        cases = {(t, c) for t, c in done if start <= t < stop}
        if not cases:
            continue
        end = max(t for t, _ in cases)
        out.append({"report": None, "start": start.isoformat(), "end": end.isoformat(),
                    "elapsed_s": round((end - start).total_seconds(), 1),
                    "cases": len({c for _, c in cases}), "failures": None,
                    "source": "perflogs: no ReFrame report (the session was interrupted); "
                    "its start to its last recorded case"})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logdir", nargs="?", default=str(ROOT / "log" / "paper-scale"))
    ap.add_argument("--key", default="paper_scale", help="key in campaign.json")
    ap.add_argument("--out", type=Path, default=RESULT, help="where campaign.json goes")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: one ReFrame report of the log; result in DIR")
    args = ap.parse_args()
    if args.smoke:
        args.logdir, args.out = smoke_log(Path(args.logdir), args.smoke), \
            args.smoke / "paper_scale.json"
    logdir = Path(args.logdir)
    runs = sessions(logdir)
    runs = sorted(runs + unreported(logdir, runs), key=lambda r: _when(r["start"]))
    prov = json.loads((logdir / "provenance.json").read_text())
    result = json.loads(RESULT.read_text()) if RESULT.is_file() else {}
    wall = sum(r["elapsed_s"] for r in runs)
    cases = sum(r["cases"] for r in runs)
    packed = [r for r in runs if r.get("packing")]
    # the sessions' full slot-seconds over their slot-seconds
    slots = (sum(r["packing"]["efficiency"] * r["elapsed_s"] for r in packed)
             / max(1e-9, sum(r["elapsed_s"] for r in packed))) if packed else None
    # what the cores did: busy CPU-seconds over cores x wall of the runs that recorded them
    cpu = [r["cpu"] for r in prov.get("runs", []) if r.get("cpu")]
    busy = (sum(c["busy_s"] for c in cpu) / max(1e-9, sum(c["cores"] * c["wall_s"] for c in cpu))
            if cpu else None)
    slurm_s_per_case = 60.0 / float(result["cases_per_min_slurm"])
    local_s_per_case = 60.0 / float(result["cases_per_min_local"])
    # The simulation work itself is what the local wall time holds beyond the per-case
    # overhead measured on cheap cases; on Slurm the overhead is Slurm's.
    simulate_s = max(0.0, wall - cases * local_s_per_case)
    result[args.key] = {
        "profile": prov.get("profile"), "system": prov.get("system"), "cores": 2,
        "sessions": runs, "cases": cases, "wall_s": round(wall, 1),
        "wall_h": round(wall / 3600, 2),
        **goal(args.key, wall, prov),
        "packing": {"slot_occupancy": None if slots is None else round(slots, 3),
                    "cpu_busy": None if busy is None else round(busy, 3),
                    "cpu_busy_runs": len(cpu), "goal": 0.9,
                    "note": "slot_occupancy: jobs running / cores over the sessions (a job "
                    "waiting on the run cache holds a slot); cpu_busy: the machine's busy "
                    "CPU-seconds over cores x wall while the campaign ran (provenance.json "
                    "runs[].cpu; t2hx's start-ups and ReFrame count as busy, other load on "
                    "the machine too)"},
        "dominant": dominant(logdir),
        "dominant_note": "job seconds per check over the sessions' passing cases (ReFrame's "
        "job submission to completion; on 2 cores the slots' seconds, not CPU seconds)",
        "slurm_estimate_h": round((cases * slurm_s_per_case + simulate_s) / 3600, 2),
        "slurm_estimate_basis": "estimate, not a run: cases x the Slurm per-case time "
        "measured by bench/campaign.py (2 concurrent jobs, 2 cores) + the simulation time "
        "measured here beyond the local per-case time",
    }
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result[args.key], indent=1))
    return 0


def goal(key: str, wall_s: float, prov: dict) -> dict:
    """The record against #46's goal: by how much it was missed, in how many runs."""
    runs = prov.get("runs", [])
    out: dict = {"one_run": len(runs) == 1,
                 "commits": sorted({str(r.get("git_hash", ""))[:9] for r in runs} - {""})}
    if key in GOAL_H:
        out |= {"goal_h": GOAL_H[key],
                "over_goal_h": round(max(0.0, wall_s / 3600 - GOAL_H[key]), 2)}
    return out


def smoke_log(logdir: Path, folder: Path) -> Path:
    """A copy of ``logdir``'s provenance and perflogs with its smallest ReFrame report."""
    copy = folder / logdir.name
    (copy / "reframe").mkdir(parents=True, exist_ok=True)
    shutil.copy(logdir / "provenance.json", copy)
    shutil.copytree(logdir / "perflogs", copy / "perflogs", dirs_exist_ok=True)
    report = min((logdir / "reframe").glob("report-*.json*"), key=lambda p: p.stat().st_size)
    shutil.copy(report, copy / "reframe")
    return copy


if __name__ == "__main__":
    sys.exit(main())
