"""The order a simulated campaign's cases run in (t2hx/campaign/schedule.py): repetition 0 of
every case in a first ReFrame session, the other repetitions (run-cache hits) in a second, and
the check files the campaign's earlier sessions spent most time in loaded first."""

from __future__ import annotations

import json
import lzma
import re
import subprocess
import sys
from pathlib import Path

from t2hx import ROOT
from t2hx.campaign import schedule
from t2hx.post.perflog import read_perflog
from tests.test_reframe import env_for

T2HX = str(Path(sys.executable).parent / "t2hx")


def test_a_simulated_run_is_misses_then_repeats() -> None:
    args = ["-n", "MpiGraph"]
    first, second = schedule.sessions(args, simulated=True)
    assert first[-2:] == args and second[-2:] == args
    assert schedule.sessions(args, simulated=False) == [args]
    # the caller's own selection of repetitions stays one session
    assert schedule.sessions(["-P", "repetition=0"], simulated=True) == [["-P", "repetition=0"]]


def test_every_case_runs_in_exactly_one_session() -> None:
    """ReFrame drops a case when an -x regex is found in its display name without blanks
    (reframe/frontend/filters.py, have_not_name)."""
    first, second = schedule.sessions([], simulated=True)
    runs_in = {"MpiGraph%combo=hx%num_nodes=7%repetition=0": 0,
               "MpiGraph%combo=hx%num_nodes=7%repetition=1": 1,
               "History%combo=hx%repetition=10%day=x": 1,       # a two-digit repetition
               "IMBCollective%collective=Alltoall%combo=hx%num_nodes=7%repetition=20": 1,
               "NetworkAnalysis%kind=dragonfly%switches=64": 0}  # no repetition parameter
    for name, session in runs_in.items():
        kept = [not re.search(args[args.index("-x") + 1], name) for args in (first, second)]
        assert kept == [session == 0, session == 1], (name, kept)


def test_named_check_files_are_the_callers() -> None:
    for given in (["-c", "checks/imb.py"], ["-cchecks/imb.py"], ["--checkpath=checks"]):
        assert schedule.names_checks(given), given
    assert not schedule.names_checks(["-C", "conf.py", "-n", "IMB"])


def report(cases: list[tuple[str, str, float]]) -> str:
    """A ReFrame session report holding ``(check file, result, run seconds)`` cases."""
    return json.dumps({"session_info": {}, "runs": [{"testcases": [
        {"filename": str(ROOT / "checks" / f), "result": r, "time_run": s}
        for f, r, s in cases]}]})


def test_costliest_check_files_load_first(tmp_path: Path) -> None:
    logdir = tmp_path / "log" / "c"
    (logdir / "reframe").mkdir(parents=True)
    # the longest case decides (a long one started last leaves a core idle), then the total
    (logdir / "reframe" / "report-0.json").write_text(report(
        [("imb.py", "pass", 40.0), ("netgauge.py", "pass", 30.0), ("netgauge.py", "pass", 30.0),
         ("capacity.py", "pass", 50.0), ("apps.py", "pass", 5.0), ("apps.py", "skip", 500.0),
         ("x500.py", "fail", 900.0), ("ring_allreduce.py", "pass", 5.0)]))
    with lzma.open(logdir / "reframe" / "report-1.json.xz", "wt") as out:
        out.write(report([("mpigraph.py", "pass", 1.0), ("ring_allreduce.py", "pass", 5.0)]))
    (logdir / "reframe" / "report-2.json").write_text("{cut short")   # an interrupted one
    files = [f.name for f in schedule.check_files([logdir, tmp_path / "absent"])]
    assert sorted(files) == sorted(f.name for f in (ROOT / "checks").glob("*.py"))
    order = ["capacity.py", "imb.py", "netgauge.py", "ring_allreduce.py", "apps.py",
             "mpigraph.py"]
    timed = [f for f in files if f in order]
    assert timed == order
    # files without a passing case in the reports (unknown cost) come first, by name
    unknown = sorted(set(files) - set(timed))
    assert files[:len(unknown)] == unknown
    assert [f.name for f in schedule.check_files([])] == \
        sorted(f.name for f in (ROOT / "checks").glob("*.py"))


def test_a_campaign_runs_misses_then_repeats_each_case_once(tmp_path: Path) -> None:
    env = env_for(tmp_path, "s", T2HX_HOSTFILES=str(tmp_path / "hostfiles"))
    made = subprocess.run([T2HX, "-q", "hostfiles", "--system", "mini", "--placements",
                           "linear", "--out", str(tmp_path / "hostfiles")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    done = subprocess.run([T2HX, "-q", "campaign", "run", "--system", "sim:mini", "--profile",
                           "quick", "--campaign", "s", "--no-report", "--", "-n", "MpiGraph",
                           "-P", "num_nodes=7", "-P", "combo=hx-dfsssp-linear"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reports = sorted((tmp_path / "log" / "s" / "reframe").glob("report-*.json"),
                     key=lambda p: json.loads(p.read_text())["session_info"]["time_start"])
    reps = [{c["repetition"] for r in json.loads(p.read_text())["runs"] for c in r["testcases"]}
            for p in reports]
    assert len(reps) == 2 and reps[0] == {0} and reps[1] and 0 not in reps[1], reps
    records = [int(x) for path in (tmp_path / "log" / "s" / "perflogs").rglob("*.log")
               for frame in read_perflog(path).frames for x in frame["repetition"]]
    assert sorted(records) == sorted({*records}) == [0, *sorted(reps[1])]
