"""No silent acceptance: inputs that once ran a silently different campaign (or
crashed late) are refused in one line naming file, field and fix, or run with a line that
says what was assumed. Config-file cases of the same kind live in test_conf.py (BAD) and
test_study.py (test_bad_study_names_field); here are those that need the CLI, the
environment, a real dump and OpenSM, or a campaign log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from t2hx import wire
from t2hx.post import report
from t2hx.routing.reroute import (DEMAND_KEY, DERIVED, NO_DEMAND, RECORDED, JobSpec,
                                  demand_line, demand_meta, demand_note, demand_sources,
                                  job_input, no_demand_note)
from tests.conftest import MINI

CLI = Path(sys.executable).parent / "t2hx"

#: A bring-up fabric as ibnetdiscover prints it: two switches, one host, and port 5 of the
#: first switch cabled to its own port 6 (a loop-back plug), as in the Quantum dump of
#: tests/data/ibnetdiscover/quantum-bringup-2019.txt, cut down to what the case needs.
ONE_HOST_DUMP = """\
#
# Topology file: hand-written for t2hx's tests (one host, one switch self-loop)
#

vendid=0x2c9
devid=0xd2f0
sysimgguid=0x98039b030096aa24
switchguid=0x98039b030096aa24(98039b030096aa24)
Switch\t8 "S-98039b030096aa24"\t\t# "Quantum Mellanox Technologies" base port 0 lid 10 lmc 0
[1]\t"H-98039b030067261c"[1](98039b030067261c) \t\t# "fit101 HCA-1" lid 7 4xHDR
[5]\t"S-98039b030096aa24"[6]\t\t# "Quantum Mellanox Technologies" lid 10 4xHDR
[6]\t"S-98039b030096aa24"[5]\t\t# "Quantum Mellanox Technologies" lid 10 4xHDR
[7]\t"S-98039b030096a924"[7]\t\t# "Quantum Mellanox Technologies" lid 9 4xHDR

vendid=0x2c9
devid=0xd2f0
sysimgguid=0x98039b030096a924
switchguid=0x98039b030096a924(98039b030096a924)
Switch\t8 "S-98039b030096a924"\t\t# "Quantum Mellanox Technologies" base port 0 lid 9 lmc 0
[7]\t"S-98039b030096aa24"[7]\t\t# "Quantum Mellanox Technologies" lid 10 4xHDR

vendid=0x2c9
devid=0x1017
sysimgguid=0x98039b030067261c
caguid=0x98039b030067261c
Ca\t1 "H-98039b030067261c"\t\t# "fit101 HCA-1"
[1](98039b030067261c) \t"S-98039b030096aa24"[1]\t\t# lid 7 lmc 0 "Quantum" lid 10 4xHDR
"""


def t2hx(*argv: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *argv], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **env}, timeout=300)


def one_line_error(run: subprocess.CompletedProcess, *words: str) -> str:
    assert run.returncode == 2, (run.stdout, run.stderr)
    line = run.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, line
    assert all(w in line for w in words), line
    return line


def test_one_host_dump_with_a_self_loop_routes_and_says_what_it_cannot_measure(tmp_path):
    """Once a ValueError in the analysis (`max() arg is an empty sequence`): now the route
    succeeds, the loop-back cable is reported as left out, and the summary says there is
    no host pair to measure."""
    (tmp_path / "bringup.txt").write_text(ONE_HOST_DUMP)
    conf = {"name": "bringup", "nodes": {"from_dump": "fabric", "racks": 1, "per_rack": 1},
            "planes": {"fabric": {"hca": "mlx5_0", "gbps": 100,
                                  "topology": {"kind": "ibnetdiscover", "file": "bringup.txt",
                                               "devices": ["HCA-1"]},
                                  "opensm": {"routing": ["minhop"]}}}}
    path = tmp_path / "bringup.yaml"
    path.write_text(yaml.safe_dump(conf))
    run = t2hx("fabric", "route", "--system", str(path), "--plane", "fabric", "--routing",
               "minhop", "--out", str(tmp_path / "routed"), "-q")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "kept 1 hosts" in run.stdout and "left out: 1 loop-back cables" in run.stdout
    assert "1 host(s): no host pair to route between" in run.stdout
    summary = json.loads((tmp_path / "routed" / "routing-summary.json").read_text())
    assert summary["hca_count"] == 1 and summary["max_switch_hops"] is None
    assert summary["hop_histogram"] == {} and "no host pair" in summary["note"]


def test_kary_rails_refused_by_the_cli_in_one_line(tmp_path):
    """`rails: 2` split the tree into two subnets, and routing failed later with a
    'dump has N switches ... re-route' that no re-route fixes."""
    conf = yaml.safe_load(MINI.read_text())
    conf["planes"]["fattree"]["topology"] = {"kind": "kary", "k": 8, "n": 2, "rails": 2}
    path = tmp_path / "rails.yaml"
    path.write_text(yaml.safe_dump(conf))
    run = t2hx("fabric", "build", "--system", str(path), "--plane", "hyperx",
               "--out", str(tmp_path / "out"))
    one_line_error(run, str(path), "planes.fattree.topology", "2 switch networks",
                   "fix: drop rails")
    assert not (tmp_path / "out").exists()


def test_fabric_build_honours_the_work_root(tmp_path):
    root = tmp_path / "elsewhere"
    run = t2hx("fabric", "build", "--system", str(MINI), "--plane", "hyperx", cwd=tmp_path,
               T2HX_WORK_ROOT=str(root))
    assert run.returncode == 0, run.stderr
    assert (root / "mini" / "hyperx" / "fabric.net").is_file()
    assert not (tmp_path / "work").exists()


def test_hostfiles_refuses_an_unknown_study_profile(tmp_path):
    run = t2hx("hostfiles", "--system", str(MINI), "--out", str(tmp_path / "hf"),
               "--placements", "linear", T2HX_STUDY_PROFILE="quik")
    one_line_error(run, "T2HX_STUDY_PROFILE='quik' is not a profile", "quick")
    assert not (tmp_path / "hf").exists()


def test_parx_without_any_demand_is_noted_counted_and_reported(tmp_path, monkeypatch, capsys):
    """PARX keeps its demand-free routing for a job with neither a communication profile nor
    a pattern that moves bytes (IMB Barrier): the routing step says so, notes it beside the
    routing directory (whose presence would mean 'simulate on these dumps'), the run's
    metadata carries it, and the report states it beside the jobs routed with a demand."""
    monkeypatch.setenv("T2HX_PROFILES", str(tmp_path / "no-profiles"))
    hosts = tmp_path / "job.hosts"
    hosts.write_text("m1n01\nm1n02\n")
    from t2hx.conf import load_system

    out = tmp_path / "stage" / "routing"
    from t2hx.traffic import derived_traffic

    assert job_input(load_system(MINI), "hyperx", "parx",
                     [JobSpec("job0", "imb-barrier", hosts)], out, derived_traffic) is None
    assert "no demand for imb-barrier" in capsys.readouterr().err
    assert demand_meta(out) == {DEMAND_KEY: NO_DEMAND}
    assert not any(out.iterdir())           # nothing in the routing directory itself

    log = tmp_path / "log"
    for case, meta in (("a", {DEMAND_KEY: NO_DEMAND}), ("b", {DEMAND_KEY: NO_DEMAND}),
                       ("c", {DEMAND_KEY: DERIVED}), ("d", {})):
        run = log / "runs" / "sys" / "part" / case
        run.mkdir(parents=True)
        (run / wire.RUN_META).write_text(wire.run_meta_text({"benchmark": "hpcg", **meta}))
    capacity = log / "capacity" / "sys" / "part"
    for name, note in (("old", {"jobs": ["amg", "milc", "hpl"]}),    # a log of before
                       ("new", {"jobs": [{"job": "amg", "source": RECORDED},
                                         {"job": "milc", "source": DERIVED}]})):
        (capacity / name).mkdir(parents=True)
        target = no_demand_note(out) if name == "old" else demand_note(out)
        (capacity / name / target.name).write_text(json.dumps(note))
    sources = demand_sources(log)
    assert sources == {RECORDED: 1, DERIVED: 2, NO_DEMAND: 5}

    summary = {"skipped": [], "ignored": [], "parx_demand": sources}
    text = report.to_markdown(report.blocks(report.ReportInputs(
        "c", {}, summary, None, [], True, None, tmp_path)))
    assert demand_line(sources) in text
    assert "PARX jobs routed: 1 with a recorded profile, 2 with a demand derived" in text
    assert "5 without demand" in text and "not a measurement" in text


def test_route_refuses_an_lmc_its_engine_ignores(tmp_path):
    """`--lmc 3` for PARX was routed at LMC 2 without a word."""
    run = t2hx("fabric", "route", "--system", str(MINI), "--plane", "hyperx", "--routing",
               "parx", "--lmc", "3", "--out", str(tmp_path / "parx"))
    one_line_error(run, "--lmc", "parx always routes at LMC 2", "fix: drop --lmc")
    assert not (tmp_path / "parx").exists()
