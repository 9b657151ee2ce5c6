"""Ports with nothing but a conf file: `--system sim` simulates only what
was asked, combos a plane cannot route are left out (said once), capacity fits any size,
status counts the campaign's own cases, and a port's report names it and scores only the
portable claims. End to end on a small port through the real `t2hx campaign` and ReFrame."""

from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.study import load_study
from tests.test_reframe import CONFIG, env_for, perf_rows

T2HX = str(Path(sys.executable).parent / "t2hx")

# 96 nodes, one down: 95 usable, which no rung of the ladders is. The study's capacity mix
# scales to 92 nodes while the largest rung that fits is 64 (the 512-node port's 458 vs 448
# in small). 1-based host names; a 2:1 tapered fat-tree; a HyperX routed by DFSSSP only.
PORT = """
name: port96
description: a 96-node port written by tests/test_ports.py
nodes: {hostname: "cn{index:03d}", index_base: 1, racks: 6, per_rack: 16, cores: 4,
        down: [cn040]}
model: {packet: {hca: {interface: pcie, pcie_gen: 2, lanes: 8}}}
planes:
  fattree:
    hca: mlx5_0
    topology: {kind: xgft, m: [12, 8], w: [1, 6], switch_ports: 18}
    opensm: {routing: [ftree, sssp]}
  hyperx:
    hca: mlx5_1
    topology: {kind: hyperx, dims: [4, 4], nodes_per_switch: 6, switch_ports: 16}
    opensm: {routing: [dfsssp]}
"""
PARX = ["hx-parx-clustered", "hx-parx-linear"]


def t2hx(env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([T2HX, *args], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    """The port's conf directory (beside a copy of t2hx.yaml: the study's own system), its
    hostfiles, and a quick study whose capacity window is 1 simulated second."""
    tmp = tmp_path_factory.mktemp("port")
    confdir = tmp / "systems"
    confdir.mkdir()
    (confdir / "port96.yaml").write_text(PORT)
    (confdir / "t2hx.yaml").write_text((ROOT / "conf/systems/t2hx.yaml").read_text())
    text = (ROOT / "conf/studies/hyperx-vs-fattree-sc19.yaml").read_text()
    window = f"      window: {load_study(profile='quick').capacity['window']}\n"
    assert window in text
    study = tmp / "study.yaml"
    study.write_text(text.replace(window, "      window: 1s\n"))
    env = env_for(tmp, campaign="port96", T2HX_CONF_SYSTEMS=str(confdir),
                  T2HX_HOSTFILES=str(tmp / "hostfiles"), T2HX_STUDY=str(study))
    made = t2hx(env, "hostfiles", "--system", str(confdir / "port96.yaml"))
    assert made.returncode == 0, made.stderr
    return tmp, env, load_system(confdir / "port96.yaml"), load_study(study, "quick")


def test_dry_run_of_a_port_generates_its_own_cases_only(port):
    tmp, env, system, study = port
    assert sorted(study.left_out(system)) == PARX
    expected = study.cases_on(system)
    out = t2hx(env, "campaign", "dry-run", "--system", "sim:port96", "--profile", "quick",
               "--campaign", "dry", "--", "--exec-policy=serial")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    # Rungs above the 95 usable nodes are skipped as such (as on any small system).
    ran = re.search(r"Ran (\d+)/(\d+) test case\(s\) .*\(0 failure\(s\), 0 expected "
                    r"failure\(s\), (\d+) skipped", out.stdout)
    assert ran and int(ran.group(1)) == expected, out.stdout[-2000:]
    assert int(ran.group(3)) == int(ran.group(2)) - expected
    assert out.stdout.count("nodes > 95 of port96]") == int(ran.group(3))
    # Said once, not as failures: the combos the HyperX plane cannot route.
    said = [ln for ln in out.stderr.splitlines() if "not run" in ln]
    assert said == ["campaign: port96: not run: hx-parx-clustered, hx-parx-linear "
                    "(plane hyperx routes dfsssp (opensm.routing), not parx)"]
    scripts = list((tmp / "work").rglob("rfm_job.sh"))
    assert len(scripts) == expected
    texts = [p.read_text() for p in scripts]
    assert all("port96" in t and "t2hx.yaml" not in t for t in texts)   # nothing else ran
    assert not any("--routing parx" in t for t in texts)
    # Capacity: the mix scaled to 95 usable nodes (92) from the hostfile of every node.
    caps = [p.parent for p in scripts if p.parent.name.startswith("Capacity_")]
    assert len(caps) == len([c for c in study.combos if c.name not in PARX])
    hosts = (caps[0] / "capacity.hosts").read_text().split()
    assert len(hosts) == len(set(hosts)) == study.capacity_nodes(95) == 92
    assert max(n for ladder in study.ladders.values() for n in ladder if n <= 95) < 92


def test_a_port_campaign_runs_reports_and_counts_its_own_cases(port):
    tmp, env, system, study = port
    first = t2hx(env, "campaign", "run", "--system", "sim:port96", "--profile", "quick",
                 "--campaign", "port96", "--no-report", "--", "-n", "MpiGraph",
                 "-P", "repetition=0", "-P", "num_nodes=7")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    second = t2hx(env, "campaign", "run", "--system", "sim:port96", "--profile", "quick",
                  "--campaign", "port96", "--", "-n", "Capacity")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    rows = perf_rows(tmp / "log" / "port96" / "perflogs")
    combos = sorted(c.name for c in study.combos if c.name not in PARX)
    assert sorted(r["combo"] for r in rows if r["benchmark"] == "mpigraph") == combos
    assert {r["partition"] for r in rows} == {"port96-fattree", "port96-hyperx"}
    cap = [r for r in rows if r["benchmark"] == "capacity"]
    assert {r["num_nodes"] for r in cap} == {"92"} and len(cap) == 4 * len(study.capacity["apps"])
    assert all(r["result"] == "pass" for r in rows)
    # Resumed: the scaled mix's record (92 nodes, not the study's 664) is found, not rerun.
    again = t2hx(env, "campaign", "run", "--system", "sim:port96", "--profile", "quick",
                 "--campaign", "port96", "--no-report", "--", "-n", "Capacity")
    assert again.returncode == 0 and re.search(r"\b4 skipped", again.stdout), again.stdout
    assert perf_rows(tmp / "log" / "port96" / "perflogs") == rows
    prov = json.loads((tmp / "log" / "port96" / "provenance.json").read_text())
    assert prov["systems"] == ["port96"]
    assert [r["conf_systems"] for r in prov["runs"]] == [["port96"]] * 3
    # status: this campaign's study, profile (quick, from provenance) and system.
    status = t2hx(env, "campaign", "status", "--campaign", "port96")
    assert status.returncode == 0, status.stderr
    assert f"8 of {study.cases_on(system)} cases recorded" in status.stdout
    assert "(port96; profile quick)" in status.stdout
    # The report names the port, scores the seed's claims nowhere, its portable ones there.
    report = (tmp / "log" / "port96" / "paper" / "report.md").read_text()
    assert report.startswith("# t2hx report — campaign port96 on port96\n")
    assert ("| port96 | " in report and "| simulated | hx-parx-clustered, hx-parx-linear "
            "(plane hyperx routes dfsssp (opensm.routing), not parx) | no | the 3 portable "
            "claims only |" in report)
    assert prov["left_out"] == {"port96": study.left_out(system)}
    assert "Scorecard on port96: portable claims only" in report
    assert "Scorecard: the seed paper's statements beside ours" not in report
    assert "Seeds' reference numbers beside ours" not in report
    assert "fig1-" not in report                           # "28 nodes of one rack" is t2hx's
    # One campaign, one system: resuming it on another is refused in one line.
    other = t2hx(env, "campaign", "run", "--system", "sim", "--profile", "quick",
                 "--campaign", "port96")
    assert other.returncode == 2 and other.stderr.count("\n") == 1, other.stderr
    assert "ran on port96" in other.stderr and "--system sim:port96" in other.stderr


def test_sim_simulates_only_what_was_asked(tmp_path, monkeypatch):
    """The sim partitions: the study's own system by default, the named ones with
    $T2HX_SIM_SYSTEMS (what `--system sim:NAME` sets), never every conf with hostfiles; each
    partition has a feature per engine its plane routes with."""
    hosts = tmp_path / "hostfiles"
    for name in ("t2hx", "mini", "port512"):
        (hosts / name).mkdir(parents=True)
    for key, value in env_for(tmp_path, T2HX_HOSTFILES=str(hosts)).items():
        monkeypatch.setenv(key, value)

    def sim() -> dict[str, dict]:
        cfg = runpy.run_path(CONFIG)["site_configuration"]
        parts = next(s for s in cfg["systems"] if s["name"] == "sim")["partitions"]
        return {p["name"]: p for p in parts}

    assert set(sim()) == {"t2hx-fattree", "t2hx-hyperx"}
    monkeypatch.setenv("T2HX_SIM_SYSTEMS", "port512")
    parts = sim()
    assert set(parts) == {"port512-fattree", "port512-hyperx"}
    assert "routing_dfsssp" in parts["port512-hyperx"]["features"]
    assert "routing_parx" not in parts["port512-hyperx"]["features"]
    assert {"routing_ftree", "routing_sssp"} <= set(parts["port512-fattree"]["features"])
    monkeypatch.setenv("T2HX_SIM_SYSTEMS", "mini,t2hx")
    assert "routing_parx" in sim()["t2hx-hyperx"]["features"]
    parx = load_study().combo("hx-parx-clustered").partition
    assert parx.split() == ["%plane=hyperx", "+routing_parx"]


@pytest.mark.parametrize("args,words", [
    (["--system", "sim:nosuch"], ["no conf system 'nosuch'", "t2hx"]),
    (["--system", "sim:"], ["names no system"]),
    (["--system", "sim:mini"], ["no hostfiles", "hostfiles --system mini"]),
    (["--system", "sim:t2hx,mini"], ["one system", "sim:t2hx"]),
    (["--system", "sim:t2hx", "--study", "fattree-configs-sc17"],
     ["runs on its own systems", "not 't2hx'"]),
])
def test_selection_errors_are_one_line(tmp_path, monkeypatch, capsys, args, words):
    # `--study` sets $T2HX_STUDY in this process: monkeypatch restores it afterwards.
    monkeypatch.setenv("T2HX_STUDY", "hyperx-vs-fattree-sc19")
    monkeypatch.setenv("T2HX_LOG_ROOT", str(tmp_path / "log"))
    monkeypatch.setenv("T2HX_HOSTFILES", str(ROOT / "hostfiles"))
    monkeypatch.delenv("T2HX_SIM_SYSTEMS", raising=False)
    assert main(["campaign", "dry-run", "--campaign", "sel", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--system" in err, err
    for word in words:
        assert word in err, err


def test_status_counts_the_campaigns_own_cases(tmp_path, monkeypatch, capsys):
    """A complete quick campaign on t2hx is N of N (it was "727 of 5626": every system's
    full study); on a port, its own clipped ladders and routable combos."""
    monkeypatch.setenv("T2HX_LOG_ROOT", str(tmp_path))
    monkeypatch.setenv("T2HX_STUDY", "hyperx-vs-fattree-sc19")
    quick = load_study(profile="quick")
    t2hx_cases = quick.cases_on(load_system(ROOT / "conf/systems/t2hx.yaml"))
    port512 = load_system(ROOT / "conf/systems/port512.yaml")
    for name, system, conf in (("a", "sim", ["t2hx"]), ("b", "sim:port512", ["port512"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "provenance.json").write_text(json.dumps({
            "study": quick.name, "profile": "quick", "systems": conf,
            "runs": [{"system": system, "conf_systems": conf, "profile": "quick"}]}))
    assert main(["campaign", "status", "--campaign", "a"]) == 0
    assert f"0 of {t2hx_cases} cases" in capsys.readouterr().out
    assert t2hx_cases == quick.all_cases(672) == 727
    assert main(["campaign", "status", "--campaign", "b"]) == 0
    port_cases = quick.cases_on(port512)
    assert f"0 of {port_cases} cases" in capsys.readouterr().out
    # 4 of 5 grid combos (no PARX), no Fig 1 PARX extra, ladders clipped to 510 nodes.
    assert port_cases == sum(quick.cases(b, 510, quick.combos_on(port512))
                             for b in quick.benchmarks) + 4
    assert port_cases < t2hx_cases
    # The committed reference campaign (provenance from before systems were recorded).
    monkeypatch.setenv("T2HX_LOG_ROOT", str(ROOT / "log"))
    assert main(["campaign", "status", "--campaign", "reference"]) == 0
    assert re.search(r"\(t2hx; profile quick\): (\d+) of \1 cases", capsys.readouterr().out)
