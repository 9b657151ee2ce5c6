"""The `local` system on the Spack view: the site config takes the view from
T2HX_SPACK_VIEW, ReFrame selects exactly the benchmarks whose binaries the view holds (the
others left out with a reason), the committed log/local-reference replays into a report of
measured values, and routing takes its opensm and PARX plugin from T2HX_OPENSM/T2HX_PARX_LIB."""

from __future__ import annotations

import math
import os
import re
import runpy
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from t2hx import ROOT, benchmarks
from t2hx.conf import load_system
from t2hx.errors import RoutingError
from t2hx.fabric.build import build_plane
from t2hx.post.perflog import read_perflog
from t2hx.post.replay import replay
from t2hx.routing.opensm import plugin_setup, route
from t2hx.routing.engines import route_args
from tests.conftest import MINI
from tests.test_reframe import CONFIG, REFRAME, env_for

LOCAL_REFERENCE = ROOT / "log" / "local-reference"
HPCC = Path("/usr/bin/hpcc")          # checks/x500.py: HPL's fallback without the view's xhpl
# A subset of the checks keeps the listing fast: the rule is the same for every check.
LISTED = ("checks/mpigraph.py", "checks/netgauge.py", "checks/x500.py")
LISTED_BENCHMARKS = {"mpigraph", "ebb", "hpl", "hpcg", "graph500"}


def local_partition(cfg: dict) -> dict:
    return next(s for s in cfg["systems"] if s["name"] == "local")["partitions"][0]


def test_local_system_runs_the_view_from_the_environment(tmp_path, monkeypatch):
    for key, value in env_for(tmp_path).items():
        monkeypatch.setenv(key, value)
    view = tmp_path / "view"
    monkeypatch.setenv("T2HX_SPACK_VIEW", str(view))
    part = local_partition(runpy.run_path(CONFIG)["site_configuration"])
    env = dict(map(tuple, part["env_vars"]))
    assert env["PATH"].startswith(f"{view}/bin:")
    assert env["LD_LIBRARY_PATH"].startswith(f"{view}/lib:")
    assert part["extras"]["spack_view"] == str(view)
    assert {"--oversubscribe", "self,vader"} <= set(part["extras"]["launcher_options"])
    monkeypatch.delenv("T2HX_SPACK_VIEW")
    part = local_partition(runpy.run_path(CONFIG)["site_configuration"])
    assert part["extras"]["spack_view"] == str(ROOT / "spack-env" / "view")


def _listing(tmp: Path, view: Path) -> tuple[set[str], str]:
    env = env_for(tmp, T2HX_SPACK_VIEW=str(view))
    cmd = [REFRAME, "-C", CONFIG, *[a for f in LISTED for a in ("-c", f)], "-l",
           "--system", "local"]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    names = set(re.findall(r"^- (\w+) .*%combo=local", out.stdout, re.M))
    return names, out.stdout + out.stderr


def test_listing_selects_what_the_view_holds(tmp_path):
    """A view of symlinks to the real Spack binaries (only mpiGraph and xhpcg of them) when
    T2HX_SPACK_VIEW names a built view, else an empty view: a benchmark is listed for `local`
    iff the view has its binary; each one left out is named with its reason."""
    view = tmp_path / "view"
    (view / "bin").mkdir(parents=True)
    real = os.environ.get("T2HX_SPACK_VIEW")
    if real:
        for name in ("mpiGraph", "xhpcg"):
            (view / "bin" / name).symlink_to(Path(real) / "bin" / name)
    present = {p.name for p in (view / "bin").iterdir() if os.access(p, os.X_OK)}
    classes = {b.key: b.check for b in benchmarks.REGISTRY}
    expected = {classes[k] for k in LISTED_BENCHMARKS
                if benchmarks.get(k).local_binary in present}
    if "hpl" not in {k for k in LISTED_BENCHMARKS if benchmarks.get(k).local_binary in present} \
            and HPCC.is_file():
        expected.add("HPL")
    names, text = _listing(tmp_path, view)
    assert names == expected
    for key in LISTED_BENCHMARKS:
        if classes[key] not in expected:
            binary = benchmarks.get(key).local_binary
            assert f"local: {key} not selected: the Spack view {view} has no bin/{binary}" \
                in text


def _perflog_benchmarks(logdir: Path) -> set[str]:
    found = set()
    for path in (logdir / "perflogs").rglob("*.log"):
        for frame in read_perflog(path).frames:
            found |= set(frame.loc[frame["result"] == "pass", "benchmark"])
    return found


def _families(names: set[str]) -> set[str]:
    return {benchmarks.get(n).key for n in names}


def test_local_reference_replays_into_measured_values(tmp_path):
    """The committed campaign: real runs of at least 8 benchmarks, each with a parsed value
    in the replayed report; no comparison figures for its one combo."""
    recorded = _perflog_benchmarks(LOCAL_REFERENCE)
    assert len(_families(recorded)) >= 8, sorted(recorded)
    prov = yaml.safe_load((LOCAL_REFERENCE / "provenance.json").read_text())
    assert prov["runs"][-1]["system"] == "local" and not prov["simulated"]
    res = replay(LOCAL_REFERENCE, tmp_path / "paper", quiet=True)
    values = pd.read_csv(res.out / "data" / "results.csv")
    assert set(values["combo"]) == {"local"}
    report = (res.out / "report.md").read_text()
    section = report.split("## Measured values", 1)[1].split("\n## ", 1)[0]
    rows = [r.split("|")[1:-1] for r in section.splitlines() if r.startswith("| ")][1:]
    shown = {r[0].strip(): float(r[4]) for r in rows}
    assert set(shown) == recorded
    assert all(math.isfinite(v) and v > 0 for v in shown.values())
    assert all(f.kind == "mpigraph" for f in res.figures)
    assert "## Scorecard" not in report


def test_opensm_from_t2hx_opensm(tmp_path, monkeypatch):
    """Debian's opensm passed explicitly, with sbin/ off PATH: only the hook can find it."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    fabric = build_plane(load_system(MINI), "hyperx")
    with pytest.raises(RoutingError, match="opensm not found"):
        route(fabric, tmp_path / "plain", "minhop")
    monkeypatch.setenv("T2HX_OPENSM", shutil.which("opensm", path="/usr/sbin") or "")
    run = route(fabric, tmp_path / "hook", "minhop")
    assert run.summary["engine_used"] == "minhop"
    monkeypatch.setenv("T2HX_OPENSM", str(tmp_path / "no-opensm"))
    with pytest.raises(RoutingError, match=r"^T2HX_OPENSM: .*no-opensm is not an executable"):
        route(fabric, tmp_path / "bad", "minhop")


def test_parx_plugin_from_t2hx_parx_lib(tmp_path, monkeypatch):
    lib = tmp_path / "lib" / "libparx.so"
    lib.parent.mkdir()
    shutil.copyfile(ROOT / "parx" / "libparx.so", lib)
    monkeypatch.setenv("T2HX_PARX_LIB", str(lib))
    extra, env = plugin_setup("parx", {})
    assert env["LD_LIBRARY_PATH"].split(":")[0] == str(lib.parent)
    system = load_system(MINI)
    fabric = build_plane(system, "hyperx")
    args = route_args(fabric, "parx", system.plane("hyperx").opensm, system.path)
    run = route(fabric, tmp_path / "r", "parx", **args)
    assert run.summary["engine_used"] == "parx" and not run.summary["errors"]
    monkeypatch.setenv("T2HX_PARX_LIB", str(tmp_path / "parx.so"))
    with pytest.raises(RoutingError, match=r"^T2HX_PARX_LIB: .* is not a file named libparx"):
        plugin_setup("parx", {})
