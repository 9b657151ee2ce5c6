"""``t2hx sar watch`` as an operator runs it, and the job history its jobs leave in Slurm's
accounting read back as a trace. The watch runs: on the SM host of a test cluster (tests/cluster.py:
Slurm over network namespaces, the fat-tree plane's real OpenSM under ibsim), polling the real
squeue while jobs are submitted and cancelled; it must re-route (and OpenSM's forwarding
tables change) exactly when the set of multi-switch jobs changes. The cluster keeps accounts
in a real slurmdbd and MariaDB (tests/accounting.py), so ``sacct`` then prints those jobs as a
site's trace."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx.conf import load_system
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from tests.cluster import SM_HOST, T2HX, TestCluster
from tests.test_cluster import EXAMPLE, cluster_conf

pytestmark = [pytest.mark.slurm, pytest.mark.cluster]
# Two leaves of the fat-tree (8 nodes each): cn001, cn002 on the first, cn009, cn010 on the
# second, so a job can span switches.
NODES = ["cn001", "cn002", "cn009", "cn010"]


def sar_cluster(tmp: Path, accounting: bool = False) -> TestCluster:
    """The example conf's fat-tree plane alone, routed with ftree or sar, NODES up."""
    data = cluster_conf(EXAMPLE, tmp / "c")
    data["nodes"]["down"] = [h for h in (f"cn{i:03d}" for i in range(1, 65)) if h not in NODES]
    data["planes"] = {"fattree": data["planes"]["fattree"]}
    data["planes"]["fattree"]["opensm"]["routing"] = ["ftree", "sar"]
    data["launcher"].pop("planes", None)
    conf = tmp / "cluster64.yaml"
    conf.write_text(yaml.safe_dump(data))
    (tmp / "c").mkdir()
    return TestCluster(load_system(conf), tmp / "c", NODES, accounting)


def watch_command(cluster: TestCluster, log: Path, *options: str) -> list[str]:
    """``t2hx sar watch`` of the fat-tree plane as a process of the SM host."""
    return cluster.in_node(SM_HOST, [
        T2HX, "sar", "watch", "--system", str(cluster.system.path), "--plane", "fattree",
        "--interval", "1", "--log", str(log), *options], [(cluster.root / "hosts", "/etc/hosts")])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sarwatch")
    cluster = sar_cluster(tmp, accounting=True)
    try:
        yield cluster.start(), tmp
    finally:
        cluster.stop()


def polls(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_poll(cluster: TestCluster, log: Path, after: int, want, what: str,
              timeout: float = 240) -> list[dict]:
    """Polls from index ``after`` on, once one of them satisfies ``want``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        seen = polls(log)[after:]
        if any(want(p) for p in seen):
            return seen
        time.sleep(0.5)
    raise AssertionError(f"no poll {what}: {polls(log)[after:]}\n{cluster.logs()}")


def tables(cluster: TestCluster, tmp: Path) -> np.ndarray:
    """The plane's forwarding tables as OpenSM last wrote them (LFT dump, guid2lid cache)."""
    opensm = cluster.system.plane("fattree").opensm
    here = tmp / "tables"
    here.mkdir(exist_ok=True)
    shutil.copy(Path(opensm["dump_dir"]) / "opensm-lfts.dump", here)
    shutil.copy(Path(opensm["sm"]["cache_dir"]) / "guid2lid", here)
    return load_tables(build_plane(cluster.system, "fattree"), here).lft.copy()


def sbatch(cluster: TestCluster, nodes: str) -> str:
    out = cluster.run("sbatch", "--parsable", "-N", str(len(nodes.split(","))), "-n",
                      str(len(nodes.split(","))), "-w", nodes, "--output=/dev/null",
                      "--wrap", "sleep 900")
    job = out.strip().split(";")[0]
    end = time.monotonic() + 120
    while cluster.run("squeue", "-h", "-j", job, "-o", "%t").strip() != "R":
        assert time.monotonic() < end, f"job {job} never ran\n{cluster.logs()}"
        time.sleep(0.5)
    return job


def test_sar_watch_reroutes_when_and_only_when_the_multi_switch_jobs_change(cluster):
    cluster, tmp = cluster
    log = tmp / "watch.jsonl"
    cluster._spawn("sar-watch", watch_command(cluster, log))
    try:
        # First poll: no job runs; SAR is installed (a restart from ftree) with no jobs.
        seen = wait_poll(cluster, log, 0, lambda p: p["rerouted"], "installing SAR")
        assert seen[0]["running"] == 0 and seen[0]["multi_switch"] == 0
        empty = tables(cluster, tmp)
        jobs_file = Path(cluster.system.plane("fattree").opensm["sm"]["jobs_file"])

        # A job over two leaves: one re-route, the job file names its nodes, tables change.
        n = len(polls(log))
        wide = sbatch(cluster, "cn001,cn009")
        seen = wait_poll(cluster, log, n, lambda p: p["multi_switch"] == 1, "seeing the job")
        assert [p["rerouted"] for p in seen if p["changed"]] == [True]
        assert sorted(jobs_file.read_text().split()[-4:]) == ["cn001", "cn009", "j0", "j0"]
        routed = tables(cluster, tmp)
        assert (routed != empty).any()

        # A job on one leaf does not use the network: polls see it, nothing re-routes.
        n = len(polls(log))
        sbatch(cluster, "cn002")
        seen = wait_poll(cluster, log, n, lambda p: p["running"] == 2, "seeing both jobs")
        time.sleep(3)
        seen = polls(log)[n:]
        assert not any(p["changed"] or p["rerouted"] for p in seen), seen
        assert (tables(cluster, tmp) == routed).all()

        # The wide job ends: back to the empty set, re-routed to the same tables as before.
        n = len(polls(log))
        cluster.run("scancel", wide)
        seen = wait_poll(cluster, log, n, lambda p: p["rerouted"], "re-routing after scancel")
        assert [p["multi_switch"] for p in seen if p["rerouted"]] == [0]
        assert (tables(cluster, tmp) == empty).all()
        assert all(p["error"] is None for p in polls(log))
        assert all(p["poll_s"] < 30 for p in polls(log))
    finally:
        cluster.stop_process("sar-watch")
        cluster.run("scancel", "--user", "root", check=False)


def test_sacct_of_the_test_cluster_is_a_trace_history_reads(cluster):
    """What sacct printed for the jobs of the watch test (run first, module order): the
    wide job on two leaves, the narrow one on cn002; placed on the cluster's own nodes."""
    from t2hx.history.trace import SACCT_FORMAT, read_trace

    cluster, tmp = cluster
    trace = tmp / "sacct.txt"
    out = cluster.run("sacct", "--parsable2", "--allocations", "--allusers",
                      f"--format={SACCT_FORMAT}", "--starttime=now-1hour")
    trace.write_text(out)
    (tmp / "sacct-copy.txt").write_text(out)      # what tests/data/history/ keeps a copy of
    jobs = read_trace(trace, hosts=cluster.system.hostnames()).jobs
    assert sorted(j.hosts for j in jobs) == [("cn001", "cn009"), ("cn002",)]
    assert all(j.end > j.start >= 0 for j in jobs)
    samples = tmp / "samples.json"
    done = subprocess.run([T2HX, "history", "sample", str(trace), "--system",
                           str(cluster.system.path), "--out", str(samples), "--interval", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(samples.read_text())
    assert sorted(j["hosts"] for j in doc["jobs"]) == ["cn002", "cn[001,009]"]
    assert max(len(s["jobs"]) for s in doc["samples"]) == 2
