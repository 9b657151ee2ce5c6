"""The flow model's code version leaves out the packet engine (t2hx/flowsim/runcache.py
PACKET_ONLY): sound only if a flow-model case never imports it, which a real ``t2hx
simulate`` in a fresh interpreter shows here, while a packet case does (the check can
fail). A log of a study that runs no packet case then stays fresh across a change of the
packet engine; any other log does not (t2hx/post/freshness.py)."""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import pytest

from t2hx import ROOT
from t2hx.flowsim import runcache
from t2hx.imports import module_name
from t2hx.post import freshness as fresh

SYSTEM = ROOT / "conf" / "systems" / "mini.yaml"
PACKET_MODULES = {module_name(ROOT / p) for p in runcache.PACKET_ONLY if p.endswith(".py")}
PROBE = """
import sys
from t2hx.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES", " ".join(sorted(m for m in sys.modules if m.startswith("t2hx"))))
"""


def test_packet_only_files_are_model_code_of_the_packet_model_alone() -> None:
    every, flow = set(runcache.model_sources()), set(runcache.model_sources(runcache.FLOW))
    packet_only = {ROOT / p for p in runcache.PACKET_ONLY}
    assert all(p.is_file() for p in packet_only), "a PACKET_ONLY file moved: update the list"
    assert packet_only <= every and every - flow == packet_only
    assert runcache.code_version(runcache.FLOW) != runcache.code_version()


def loaded(args: list[str]) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, timeout=300)
    line = [x for x in done.stdout.splitlines() if x.startswith("MODULES ")]
    assert line and "# t2hx-simulated:" in done.stdout, done.stderr[-2000:]
    return set(line[-1].split()[1:])


@pytest.mark.parametrize("benchmark,options", [
    ("imb-allreduce", ["--msglog", "0:4"]), ("ebb", ["--rounds", "4"]),
    ("mpigraph", ["--size", "4096", "--window", "1"]),
    ("ring-allreduce", []), ("minife", [])])
def test_a_flow_case_never_imports_the_packet_engine(mini_simulate, benchmark, options) -> None:
    mods = loaded([*mini_simulate, "--model", "flow", "--benchmark", benchmark, *options])
    assert not mods & PACKET_MODULES, sorted(mods & PACKET_MODULES)


def test_a_packet_case_does(mini_simulate) -> None:
    mods = loaded([*mini_simulate, "--model", "packet", "--benchmark", "imb-allreduce",
                   "--msglog", "0:4"])
    assert {"t2hx.flowsim.packet", "t2hx.flowsim.packetk"} <= mods


@pytest.mark.parametrize("study,packet", [("fattree-configs-sc17", False),
                                          ("shortcut-topologies-thesis", False),
                                          ("hyperx-vs-fattree-sc19", True),
                                          ("scheduling-aware-routing-sc16", True)])
def test_a_packet_engine_change_stales_only_logs_that_ran_packet_cases(tmp_path, study,
                                                                       packet,
                                                                       monkeypatch) -> None:
    """An edit of a packet-only file, as every digest reads it (the model's versions and the
    code of the parts a study computes outside ``t2hx simulate``, seed 003's workloads)."""
    study_file = f"conf/studies/{study}.yaml"
    old = fresh.fingerprint([SYSTEM], ROOT / study_file)
    log = tmp_path / "camp"
    log.mkdir()
    (log / "provenance.json").write_text(json.dumps({
        "simulated": True, "systems": ["mini"], "study_file": study_file,
        "runs": [{"fingerprint": old}]}))
    edited, read = ROOT / runcache.PACKET_ONLY[0], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read(self) + (
        b"# an edit\n" if self == edited else b""))
    got = fresh.freshness(log)
    assert got.state == ("stale" if packet else "fresh"), got.line
    old = {**old, "outside_flow": None}           # recorded before the flow digest: all code
    (log / "provenance.json").write_text(json.dumps({
        "simulated": True, "systems": ["mini"], "study_file": study_file,
        "runs": [{"fingerprint": old}]}))
    assert fresh.freshness(log).state == ("stale" if packet or old["outside"] else "fresh")
    old["model_flow"] = "f" * 64                  # the flow model changed too
    (log / "provenance.json").write_text(json.dumps({
        "simulated": True, "systems": ["mini"], "study_file": study_file,
        "runs": [{"fingerprint": old}]}))
    assert fresh.freshness(log).state == "stale"
