"""Seed 004's study machinery end to end on a small fabric: a study with ``histories:``
(checks/history.py) run by ``t2hx campaign run`` through ReFrame, the real sacct trace of the
test cluster (tests/data/history/) replayed on the fat-tree plane of the cluster64 example
under updn, ftree, dfsssp and SAR (real OpenSM under ibsim), the rows kept, Table 1 and the
Fig 7 lines drawn, and a rerun resuming with nothing left to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from t2hx import ROOT
from tests.test_reframe import env_for, perf_rows

T2HX = str(Path(sys.executable).parent / "t2hx")
TRACE = ROOT / "tests" / "data" / "history" / "sacct-testcluster.txt"


def setup_study(tmp: Path) -> Path:
    conf = yaml.safe_load((ROOT / "docs" / "examples" / "cluster64.yaml").read_text())
    plane = conf["planes"]["fattree"]
    plane["opensm"] = {"routing": ["updn", "ftree", "dfsssp", "sar"], "lmc": 0}
    system = {"name": "hist64", "nodes": conf["nodes"], "planes": {"fattree": plane}}
    (tmp / "systems").mkdir()
    (tmp / "systems" / "hist64.yaml").write_text(yaml.safe_dump(system))
    study = {"name": "hist-test", "system": "hist64", "baseline": "ft-sar",
             "figures": "histories", "ladders": {}, "benchmarks": {},
             "combos": [{"name": "ft-sar", "system": "hist64", "plane": "fattree",
                         "routing": "sar", "placement": "linear"}],
             "histories": {"combos": ["ft-sar"], "trace": str(TRACE), "interval": "1s",
                           "days": 1}}
    path = tmp / "hist-test.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def test_a_history_study_runs_replays_and_resumes(tmp_path: Path) -> None:
    study = setup_study(tmp_path)
    env = env_for(tmp_path, T2HX_CONF_SYSTEMS=str(tmp_path / "systems"))
    cmd = [T2HX, "campaign", "run", "--study", str(study), "--campaign", "h1"]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    log = tmp_path / "log" / "h1"
    rows = [r for r in perf_rows(log / "perflogs") if r["benchmark"] == "history"]
    assert {r["perf_var"] for r in rows} == {f"{e}-{m}" for e in ("updn", "ftree", "dfsssp",
                                                                  "sar")
                                              for m in ("max_efi", "avg_job_max_efi",
                                                        "dark_fiber", "avg_job_links")}
    kept = list(log.glob("histories/*/*/history_ft-sar_d0/history.json"))
    assert len(kept) == 1
    samples = json.loads(kept[0].read_text())
    # The trace's two jobs (cn001+cn009 on two leaves, cn002 on one) for 6 s: 1-s samples.
    assert {r["engine"] for r in samples} == {"updn", "ftree", "dfsssp", "sar"}
    assert max(r["multi_switch_jobs"] for r in samples) == 1
    assert max(r["jobs"] for r in samples) == 2
    figures = log / "paper" / "figures"
    for metric in ("max-efi", "avg-job-max-efi", "dark-fiber", "avg-job-links"):
        assert (figures / f"history-ft-sar-{metric}.png").stat().st_size > 0
    jobs = json.loads((kept[0].parent / "jobs.json").read_text())
    assert sorted((j["switches"], j["runs"]) for j in jobs) == [(1, [[1, 1]]), (2, [[0, 0], [8, 8]])]
    assert (figures / "history-jobs-ft-sar.png").stat().st_size > 0       # Fig 1: one job
    assert "\t1\t1\t" not in (figures / "history-jobs-ft-sar.dat").read_text()
    table = (figures / "history-table1-ft-sar.dat").read_text()
    assert table.count("\n") >= 12 and "dark_fiber" in table
    again = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert len([r for r in perf_rows(log / "perflogs") if r["benchmark"] == "history"]) == \
        len(rows)
