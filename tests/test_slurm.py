"""The cluster path on a real Slurm (munged, slurmctld, slurmd from Debian, started by the
``slurm`` fixture from mini.yaml): the generated configuration, HPL submitted by ReFrame with
sbatch on ``local:slurm``, and a simulated campaign spread over Slurm jobs that records
exactly what the local scheduler records."""

from __future__ import annotations

import os
import subprocess
import time
import sys
from pathlib import Path

import pytest

from t2hx import ROOT
from tests.conftest import MINI
from tests.test_reframe import env_for, perf_rows, reframe

pytestmark = pytest.mark.slurm
T2HX = str(Path(sys.executable).parent / "t2hx")


def test_simulate_section_picks_the_sim_scheduler(tmp_path, monkeypatch):
    """simulate: in a system conf → sim partitions on Slurm; a bad scheduler is one line
    naming file and field; local:slurm exists only with T2HX_LOCAL_SLURM."""
    from t2hx.conf import load_system
    from t2hx.errors import ConfError
    from t2hx.reframe_site import local_system, sim_system

    conf = tmp_path / "mini.yaml"
    conf.write_text(MINI.read_text() + "simulate: {scheduler: squeue, partition: batch, "
                    "account: proj, max_jobs: 8}\n")
    (tmp_path / "hostfiles" / "mini").mkdir(parents=True)
    monkeypatch.setenv("T2HX_HOSTFILES", str(tmp_path / "hostfiles"))
    monkeypatch.setenv("T2HX_SIM_SYSTEMS", "mini")          # what --system sim:mini sets
    parts = sim_system([load_system(conf)])["partitions"]
    assert [(p["name"], p["scheduler"], p["max_jobs"], p["access"]) for p in parts] == [
        (f"mini-{plane}", "squeue", 8, ["--partition=batch", "--account=proj"])
        for plane in ("fattree", "hyperx")]
    plain = sim_system([load_system(MINI)])["partitions"]
    assert {(p["scheduler"], p["max_jobs"]) for p in plain} == {("local", os.cpu_count())}
    conf.write_text(MINI.read_text() + "simulate: {scheduler: pbs}\n")
    with pytest.raises(ConfError, match="simulate.scheduler"):
        load_system(conf)
    monkeypatch.delenv("T2HX_LOCAL_SLURM", raising=False)
    assert [p["name"] for p in local_system()["partitions"]] == ["default"]
    monkeypatch.setenv("T2HX_LOCAL_SLURM", "batch")
    default, slurm_part = local_system()["partitions"]
    assert slurm_part["scheduler"] == "squeue" and slurm_part["access"] == ["--partition=batch"]
    assert slurm_part["extras"] == default["extras"]        # the same cases, the same binaries


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


SIM_CASES = ("-c", "checks/mpigraph.py", "-n", "MpiGraph", "-P", "repetition=0",
             "-P", "num_nodes=7")


@pytest.fixture(scope="module")
def sim_setup(tmp_path_factory):
    """mini.yaml twice (as is, and with ``simulate:`` on the test's Slurm with 2 concurrent
    jobs), its hostfiles, and the local-scheduler campaign's records as the reference."""
    tmp = tmp_path_factory.mktemp("simslurm")
    local, slurm_conf = tmp / "conf-local", tmp / "conf-slurm"
    for d in (local, slurm_conf):
        d.mkdir()
    text = MINI.read_text()
    (local / "mini.yaml").write_text(text)
    (slurm_conf / "mini.yaml").write_text(
        text + "simulate: {scheduler: squeue, partition: hyperx, max_jobs: 2}\n")
    hosts = tmp / "hostfiles"
    made = subprocess.run([T2HX, "hostfiles", "--system", str(local / "mini.yaml"), "--out",
                           str(hosts)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert made.returncode == 0, made.stderr
    ref = campaign(tmp, local, "local")
    assert ref.returncode == 0, ref.stdout[-3000:] + ref.stderr[-2000:]
    return tmp, slurm_conf, records(tmp, "local")


def campaign(tmp: Path, confdir: Path, name: str, extra_env: dict | None = None,
             wait: bool = True):
    env = env_for(tmp, campaign=name, T2HX_CONF_SYSTEMS=str(confdir),
                  T2HX_HOSTFILES=str(tmp / "hostfiles"), **(extra_env or {}))
    cmd = [T2HX, "campaign", "run", "--system", "sim:mini", "--campaign", name, "--profile",
           "quick", "--", *SIM_CASES]
    if not wait:
        return subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)


def records(tmp: Path, name: str) -> list[tuple]:
    """(case key, perf_var, perf_value) of every record, sorted: duplicates stay visible."""
    rows = perf_rows(tmp / "log" / name / "perflogs")
    return sorted((r["benchmark"], r["combo"], r["num_nodes"], r["repetition"], r["perf_var"],
                   r["perf_value"]) for r in rows if r["result"] == "pass")


def test_sim_campaign_through_slurm_equals_local(slurm, sim_setup):
    tmp, confdir, reference = sim_setup
    assert len(reference) == 5                   # one MpiGraph case per combo
    out = campaign(tmp, confdir, "slurm", {"SLURM_CONF": str(slurm.layout.conf)})
    assert out.returncode == 0, out.stdout[-3000:] + slurm.logs()
    assert records(tmp, "slurm") == reference
    scripts = "\n".join(p.read_text() for p in (tmp / "work").rglob("rfm_job.sh")
                        if "/slurm/" in str(p))
    assert "#SBATCH --partition=hyperx" in scripts and "#SBATCH --time=" in scripts
    assert f"\n{T2HX} simulate " in scripts and "run/setup" not in scripts   # no setup per case


def test_scancel_and_slurmd_crash_then_resume(slurm, sim_setup):
    """Mid-campaign one job is cancelled and slurmd dies (SIGKILL), then comes back: the
    rerun of the campaign fills in what is missing, nothing is lost or recorded twice."""
    tmp, confdir, reference = sim_setup
    env = {"SLURM_CONF": str(slurm.layout.conf)}
    proc = campaign(tmp, confdir, "fault", env, wait=False)
    try:
        job = ""
        for _ in range(600):
            job = slurm.run("squeue", "-h", "-o", "%i").split()
            if job or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert job, "no job was ever queued: " + (proc.stdout.read() if proc.stdout else "")
        slurm.run("scancel", job[0])
        slurm.kill_slurmd()
        time.sleep(2)
        slurm.start_slurmd()
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    first = records(tmp, "fault")
    assert len(first) < len(reference)                    # the cancelled case is missing
    again = campaign(tmp, confdir, "fault", env)
    assert again.returncode == 0, again.stdout[-3000:] + slurm.logs()
    assert records(tmp, "fault") == reference             # resumed: none lost, none twice
