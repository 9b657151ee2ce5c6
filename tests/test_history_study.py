"""Seed 004's study machinery end to end on a small fabric: a study with ``histories:``
(checks/history.py) run by ``t2hx campaign run`` through ReFrame, the real sacct trace of the
test cluster (tests/data/history/) replayed on the fat-tree plane of the cluster64 example
under updn, ftree, dfsssp and SAR (real OpenSM under ibsim), the rows kept, Table 1 and the
Fig 7 lines drawn, and a rerun resuming with nothing left to do. Beside the replay, Fig 8's
shape: an Alltoall on nodes spread over leaves (placement spread) under ftree and SAR on the
packet engine with its flow companion, drawn as bars with the Alltoall's peak line."""

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
    system = {"name": "hist64", "nodes": conf["nodes"], "planes": {"fattree": plane},
              "model": {"packet": {"hca": {"interface": "pcie", "pcie_gen": 3, "lanes": 8}}}}
    (tmp / "systems").mkdir()
    (tmp / "systems" / "hist64.yaml").write_text(yaml.safe_dump(system))
    fig8 = {"ladder": "f8", "variants": ["Alltoall"], "model": "packet",
            "input": {"msglog": "20:20"}, "combos": ["ft-ftree-spread", "ft-sar-spread"]}
    study = {"name": "hist-test", "system": "hist64", "baseline": "ft-sar",
             "figures": "histories", "ladders": {"f8": [8]}, "benchmarks": {"imb": fig8},
             "repetitions": 1,
             "combos": [{"name": "ft-sar", "system": "hist64", "plane": "fattree",
                         "routing": "sar", "placement": "linear"},
                        *[{"name": f"ft-{r}-spread", "system": "hist64", "plane": "fattree",
                           "routing": r, "placement": "spread"} for r in ("ftree", "sar")]],
             "histories": {"combos": ["ft-sar"], "trace": str(TRACE), "interval": "1s",
                           "days": 1}}
    path = tmp / "hist-test.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def test_a_history_study_runs_replays_and_resumes(tmp_path: Path) -> None:
    study = setup_study(tmp_path)
    env = env_for(tmp_path, T2HX_CONF_SYSTEMS=str(tmp_path / "systems"),
                  T2HX_HOSTFILES=str(tmp_path / "hostfiles"), T2HX_STUDY=str(study))
    made = subprocess.run([T2HX, "-q", "hostfiles", "--system", "hist64", "--placements",
                           "spread", "--switches", "4"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    spread = (tmp_path / "hostfiles" / "hist64" / "spread" / "8.txt").read_text().split()
    assert spread == ["cn001", "cn002", "cn009", "cn010", "cn017", "cn018", "cn025", "cn026"]
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
    bars = (figures / "routings-imb-alltoall-8.dat").read_text().splitlines()[2:]
    assert sorted(b.split("\t")[0] for b in bars) == [
        "ftree (flow)", "ftree (packet)", "sar (flow)", "sar (packet)"]
    peak_ms = 7 * 2**20 / (100e9 / 8) * 1e3         # 7 peers' MiB through a 100 Gb/s link
    assert all(float(b.split("\t")[1]) >= peak_ms * 0.999 for b in bars)
    assert (figures / "routings-imb-alltoall-8.png").stat().st_size > 0
    # Packed as a large campaign is committed: the rows move into histories.tar.xz, replay
    # draws the same Table 1 from it, and the resumed campaign unpacks it first.
    packed = subprocess.run([T2HX, "-q", "replay", str(log), "--pack"], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert packed.returncode == 0, packed.stderr[-2000:]
    assert (log / "histories.tar.xz").is_file() and not (log / "histories").exists()
    assert (figures / "history-table1-ft-sar.dat").read_text() == table
    again = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert (log / "histories").is_dir() and not (log / "histories.tar.xz").exists()
    assert again.returncode == 0, again.stderr[-2000:]
    assert len([r for r in perf_rows(log / "perflogs") if r["benchmark"] == "history"]) == \
        len(rows)
