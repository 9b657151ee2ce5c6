"""Shared fixtures: systems, routed planes (routed once per session), a real Slurm,
stray-process guard."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.fabric.build import build_plane
from t2hx.routing.lft import load_tables
from t2hx.routing.opensm import route

MINI = ROOT / "conf" / "systems" / "mini.yaml"
T2HX = ROOT / "conf" / "systems" / "t2hx.yaml"


@pytest.fixture(scope="session")
def mini():
    return load_system(MINI)


@pytest.fixture(scope="session")
def mini_hyperx_dir(mini, routed):
    """The mini HyperX routed by real OpenSM's DFSSSP under ibsim (its dump directory)."""
    return routed(mini, "hyperx", "dfsssp").run.out_dir


@pytest.fixture(scope="session")
def mini_hx16(mini, mini_hyperx_dir):
    """The flow model's network of the first 16 mini hosts (two switches of the HyperX)."""
    from t2hx.flowsim.network import open_network

    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:16],
                        dumps=mini_hyperx_dir)


@pytest.fixture(scope="session", params=["flow", "packet"])
def mini_hx16_engine(request, mini_hx16):
    """That network in each engine."""
    from t2hx.flowsim.packet import open_packet

    return mini_hx16 if request.param == "flow" else open_packet(mini_hx16)


@pytest.fixture
def net(mini_hx16):
    """A test's network unless its file names another: the 16-host mini HyperX."""
    return mini_hx16


@pytest.fixture
def engine(mini_hx16_engine):
    """A test's engine unless its file names another: that network in each engine."""
    return mini_hx16_engine


@pytest.fixture(scope="session")
def mini_hyperx(mini, mini_hyperx_dir):
    """The flow model's network of every mini host on that routing."""
    from t2hx.flowsim.network import open_network

    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(),
                        dumps=mini_hyperx_dir)


@pytest.fixture(scope="session")
def t2hx_system():
    return load_system(T2HX)


class Routed:
    """A routed plane: fabric, routing run and tables."""

    def __init__(self, system, plane: str, engine: str, lmc: int, out: Path) -> None:
        self.fabric = build_plane(system, plane)
        self.run = route(self.fabric, out, engine, lmc)
        self.tables = load_tables(self.fabric, out)


@pytest.fixture(scope="session")
def routed(tmp_path_factory):
    """routed(system, plane, engine, lmc) → Routed, cached for the session."""
    cache: dict[tuple, Routed] = {}

    def get(system, plane: str, engine: str, lmc: int = 0) -> Routed:
        key = (system.name, plane, engine, lmc)
        if key not in cache:
            out = tmp_path_factory.mktemp(f"{system.name}-{plane}-{engine}-{lmc}")
            cache[key] = Routed(system, plane, engine, lmc, out)
        return cache[key]

    return get


@pytest.fixture
def mini_simulate(mini, routed, tmp_path) -> list[str]:
    """``t2hx simulate`` on 8 ranks of the mini HyperX (DFSSSP, routed once per session), no
    run cache: add ``--benchmark`` and its options."""
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    hosts = tmp_path / "h.txt"
    hosts.write_text("".join(f"{h}\n" for h in mini.hostnames()[:8]))
    return ["simulate", "--system", str(mini.path), "--plane", "hyperx", "--routing",
            "dfsssp", "--hostfile", str(hosts), "--routing-dir", str(hx), "--work",
            str(tmp_path), "--no-cache"]


@pytest.fixture(scope="session")
def slurm(tmp_path_factory, mini):
    """A running single-host Slurm generated from mini.yaml (tests/slurm_cluster.py); its
    daemons stop when the session ends, whatever the tests did."""
    from tests.slurm_cluster import SlurmCluster

    cluster = SlurmCluster(mini, tmp_path_factory.mktemp("slurm"))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


# Daemons our tests start; each runs from (or is configured in) a pytest temp dir.
GUARDED = ("ibsim", "opensm", "munged", "slurmctld", "slurmd", "slurmstepd", "sshd")
# t2hx's own daemons of the test cluster's SM host (Python: matched by their arguments).
GUARDED_T2HX = (" sm opensm ", " sm serve ")


def one_line(code: int, err: str, *words: str) -> str:
    """Exit 2 and exactly one error line holding every word and a fix."""
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1, (code, err)
    line = lines[0]
    assert line.startswith("t2hx: error: ") and "(fix: " in line, line
    for word in words:
        assert word in line, (word, line)
    return line


def leftovers(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-a", "-f", marker], capture_output=True, text=True)
    return [line for line in out.stdout.splitlines()
            if line.split()[1].rsplit("/", 1)[-1] in GUARDED
            or any(t in line for t in GUARDED_T2HX)]


def stray_namespaces(basetemp: Path) -> list[str]:
    """Network namespaces that a test cluster under ``basetemp`` made (tests/cluster.py
    lists them in its folder) and that still exist."""
    from tests.cluster import NETNS_RECORD

    made = {ns for record in basetemp.rglob(NETNS_RECORD) for ns in record.read_text().split()}
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in out.stdout.splitlines()
            if line.split() and line.split()[0] in made]


def pytest_sessionfinish(session, exitstatus):
    """The suite fails if any daemon started from this session's temp dirs is still alive, or
    a namespace of its test clusters is left behind. Another test run on the machine (its
    temp dirs are not ours) does not count."""
    if hasattr(session.config, "workerinput"):
        return  # xdist worker: the controller checks once everything has finished
    # xdist workers' temp dirs are folders of the controller's
    basetemp = session.config._tmp_path_factory.getbasetemp()
    stray = leftovers(f"{basetemp}/") + stray_namespaces(basetemp)
    if stray:
        session.exitstatus = 1
        print("\nstray daemons or namespaces after the test suite:\n" + "\n".join(stray))


def study_input_args(key: str) -> list[str]:
    """``--input`` for ``t2hx simulate`` of a code the default study does not run (seed
    001's NPB kernels): its input in the first study that runs it, else its local input there;
    nothing for the default study's own codes and for benchmarks without one."""
    import json

    from t2hx import benchmarks
    from t2hx.study import load_study, study_names

    entry = benchmarks.get(key)
    if entry.app is None or key in load_study(profile="full").catalog:
        return []
    for name in study_names():
        study = load_study(name, profile="full")
        if key in study.catalog:
            return ["--input", json.dumps(study.input(key, 8))]
        if key in study.local["input"]:
            return ["--input", json.dumps(study.local["input"][key])]
    raise AssertionError(f"no study runs {key}")
