"""The cluster path on a real Slurm (munged, slurmctld, slurmd from Debian, started by the
``slurm`` fixture from mini.yaml): the generated configuration, HPL submitted by ReFrame with
sbatch on ``local:slurm``, and a simulated campaign spread over Slurm jobs that records
exactly what the local scheduler records."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT
from tests.conftest import MINI
from tests.test_reframe import env_for, perf_rows, reframe

pytestmark = pytest.mark.slurm
T2HX = str(Path(sys.executable).parent / "t2hx")


def test_conf_from_system_and_a_job_runs(slurm, mini, tmp_path):
    """Partitions are the planes, the node is named after the system's first host, and a
    batch job runs on it."""
    parts = slurm.run("sinfo", "-h", "-o", "%R %N").split()
    assert parts == ["fattree", "m1n01", "hyperx", "m1n01"]
    out = tmp_path / "job.out"
    slurm.run("sbatch", "--wait", "-p", "hyperx", "-o", str(out), "--wrap",
              "echo $SLURM_JOB_PARTITION $SLURMD_NODENAME")
    assert out.read_text().split() == ["hyperx", "m1n01"]


def test_hpl_submitted_with_sbatch(slurm, tmp_path):
    """local:slurm: ReFrame writes an sbatch script, Slurm runs HPL (mpirun inside the
    allocation), the Gflop/s reach the perflog."""
    env = env_for(tmp_path, T2HX_LOCAL_SLURM="fattree", SLURM_CONF=str(slurm.layout.conf))
    out = reframe(env, "-c", "checks/x500.py", "-n", "HPL", "-r", "--system", "local:slurm")
    assert out.returncode == 0, out.stdout[-3000:] + slurm.logs()
    rows = perf_rows(tmp_path / "log" / "test" / "perflogs" / "local")
    assert [(r["benchmark"], r["perf_var"], r["result"]) for r in rows] == \
        [("hpl", "gflops", "pass")]
    assert float(rows[0]["perf_value"]) > 0
    scripts = list((tmp_path / "work").rglob("*.sh"))
    text = "\n".join(s.read_text() for s in scripts)
    assert "#SBATCH --partition=fattree" in text and "#SBATCH --time=" in text
    assert "timeout --signal=TERM" in text                 # the walltime on the launcher too
