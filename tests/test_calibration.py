"""Calibration data (conf/calibration/, t2hx/calibration.py): what pml_monitoring recorded in
real runs here, read back; the committed files are complete and say where they come from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT, benchmarks
from t2hx.calibration import (CALIBRATION_DIR, CalibrationError, codes, load, mean_per_rank,
                              read_phases, read_traffic)
from t2hx.study import load_study, study_names

DATA = Path(__file__).parent / "data" / "calibration"
APPS = [b.key for b in benchmarks.REGISTRY if b.app]
LOCAL = load_study().local["input"]


def local_input(app: str, prov: dict) -> dict:
    """The local input a calibration ran with: its study's (provenance ``study``; files from
    before studies were recorded are the default study's)."""
    study = load_study(prov["study"]) if "study" in prov else load_study()
    return study.local["input"][app]


def test_reads_a_real_two_rank_amg_profile():
    """Our own 2-rank AMG run: E lines to the peer only (the rank's sends to itself never
    reach a network), I lines apart."""
    text = (DATA / "amg-2" / "t2hx-mon.0.prof").read_text()
    to_peer = sum(int(line.split("\t")[3].split()[0]) for line in text.splitlines()
                  if line.startswith("E\t0\t1\t"))
    traffic = read_traffic(DATA / "amg-2", 2)
    assert traffic.bytes["p2p"][0] == to_peer > 0
    assert traffic.peers["p2p"] == [1, 1]
    assert traffic.bytes["coll"][0] > 0 and traffic.msgs["coll"][0] > 0


def test_missing_rank_files_is_a_one_line_error(tmp_path):
    (tmp_path / "t2hx-mon.0.prof").write_text((DATA / "amg-2" / "t2hx-mon.0.prof").read_text())
    with pytest.raises(CalibrationError, match="1 pml_monitoring files for 2 ranks"):
        read_traffic(tmp_path, 2)


def calibrated() -> list[str]:
    return codes(CALIBRATION_DIR)


def test_every_app_with_a_local_input_is_calibrated():
    runnable = {a for a in APPS for name in study_names() if a in load_study(name).local["input"]}
    assert runnable <= set(calibrated()), "fix: run `t2hx calibrate APP` for the missing ones"


@pytest.mark.parametrize("app", calibrated())
def test_calibration_file_is_real_and_complete(app):
    data = load(app)
    prov = data["provenance"]
    assert data["benchmark"] == app and data["input"] == local_input(app, prov)
    for field in ("locked_spec", "open_mpi", "cpu", "date", "monitoring", "command"):
        assert prov[field], field
    ranks = [r["ranks"] for r in data["runs"]]
    assert ranks == sorted(set(ranks)) and len(ranks) >= 2
    for run in data["runs"]:
        assert run["value"] > 0 and len(run["traffic"]["bytes"]["p2p"]) == run["ranks"]
        sent = mean_per_rank(run["traffic"], "total")
        # One rank sends nothing over a network; several always talk (every code here
        # exchanges halos, transposes or reduces).
        assert (sent == 0) if run["ranks"] == 1 else (sent > 0), run["ranks"]


def test_bad_local_nodes_override_names_the_variable(tmp_path):
    env = {"T2HX_LOCAL_NODES": "two", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", "from t2hx.study import load_study; "
                           "load_study()"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode != 0
    assert "T2HX_LOCAL_NODES" in done.stderr and "local.nodes" in done.stderr


def test_calibrate_refuses_an_app_without_a_binary(tmp_path):
    env = {"T2HX_SPACK_VIEW": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "t2hx.cli", "calibrate", "amg"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "T2HX_SPACK_VIEW" in done.stderr
    assert json.loads((CALIBRATION_DIR / "amg.json").read_text())   # left untouched


def test_reads_ntchem_phase_timers_from_a_real_run():
    """Our own one-rank c6h6 run's output (its timer, energy and process lines: the run
    prints 1.4 MB): both timer levels, the parts adding up to the driver's time."""
    phases = read_phases("ntchem", DATA / "ntchem-1")
    parts = phases["RIMP2_Tran3c1"] + phases["RIMP2_Tran3c2"] + phases["RIMP2_RMP2Energy"]
    assert parts == pytest.approx(phases["RIMP2_Driver"], abs=0.02)
    assert 0 < phases["4c Ints"] < phases["RIMP2_RMP2Energy"]
    assert read_phases("amg", DATA / "ntchem-1") == {}      # codes without timers
