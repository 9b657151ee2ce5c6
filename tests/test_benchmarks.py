"""The benchmark registry (t2hx/benchmarks/) is complete and consistent: every study and
capacity benchmark has a module; every module's parser reads the real fixtures, its workload
renders on the mini system (real OpenSM routing) and parses back to its metric and markers;
every check class in checks/ takes its identity from a module."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT, benchmarks, wire
from t2hx.benchmarks.proxyapp import Walltime
from t2hx.cli import main
from t2hx.errors import WorkloadError
from t2hx.post import parsers
from t2hx.post.parsers import parse_file, parse_text
from t2hx.study import load_study

from tests.conftest import MINI, study_input_args

FIX = Path(__file__).parent / "data" / "post" / "fixtures"
STUDY = load_study(profile="full")


def test_importing_the_registry_loads_no_flow_model() -> None:
    code = ("import sys, t2hx.benchmarks; print('numpy' in sys.modules); "
            "import t2hx.commands.simulate; print([m for m in sys.modules if 'flowsim' in m])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.split() == ["False", "[]"]


def test_the_flow_model_imports_no_post_commands_or_benchmark() -> None:
    """The simulator below the registry: t2hx/flowsim/ (function-level imports included)
    imports nothing from post/, commands/ or the benchmark modules, which call it."""
    import ast

    bad = []
    for path in sorted((ROOT / "t2hx" / "flowsim").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module}.{a.name}" for a in node.names] \
                if isinstance(node, ast.ImportFrom) and node.module else []
            bad += [f"{path.name}:{node.lineno}: {n}" for n in names
                    if n.startswith(("t2hx.post", "t2hx.commands", "t2hx.benchmarks",
                                     "t2hx.simulation"))]
    assert not bad, bad


def test_study_and_capacity_benchmarks_have_entries() -> None:
    for key in STUDY.catalog:
        assert benchmarks.get(key).key == key
        assert {v for v in STUDY.variants(key) if v} <= set(benchmarks.get(key).variants)
    for app in STUDY.capacity["apps"]:
        entry = benchmarks.get(app)
        assert entry.key == app
        assert entry.workload.fluid_job is not None, app


def test_names_resolve_through_keys_aliases_and_variants() -> None:
    imb = benchmarks.get("imb")
    assert benchmarks.resolve("imb-bcast") == (imb, "Bcast")
    assert benchmarks.resolve("ALLREDUCE") == (imb, "Allreduce")
    assert benchmarks.get("qb@ll").key == benchmarks.get("qbox").key == "qball"
    for alias in ("baidu", "ring_allreduce", "allreduce-ring"):
        assert benchmarks.get(alias).key == "ring-allreduce"
    assert imb.name("Bcast") == "imb-bcast"
    assert imb.metric_benchmark("Bcast") == "imb-bcast"
    assert imb.is_sized("Bcast") and not imb.is_sized("Barrier")
    with pytest.raises(WorkloadError) as err:
        benchmarks.get("nosuch", field="--benchmark")
    line = str(err.value)
    assert "\n" not in line and line.startswith("--benchmark: unknown benchmark 'nosuch'")
    assert all(key in line for key in benchmarks.BY_KEY)


@pytest.mark.parametrize("entry", benchmarks.REGISTRY, ids=lambda b: b.key)
def test_entry_binds_existing_parser_workload_and_skeleton(entry) -> None:
    for name in (entry.key, *entry.aliases, *(entry.name(v) for v in entry.variants)):
        assert parsers.family(name) == entry.parser
        assert parsers.module(name).__name__ == f"t2hx.post.parsers.{entry.parser}"
    work = entry.workload
    assert dataclasses.is_dataclass(work.result)
    assert all(callable(f) for f in (work.run, work.render, work.perturb, work.header))
    # Apps and x500 codes run the model of their code; network benchmarks do not.
    assert (entry.app is not None) == (entry.group != "network")
    if entry.app:
        assert entry.app.key == entry.key and benchmarks.app(entry.key) is entry.app
        assert entry.app.skeleton.iterations > 0 and work.from_app is not None
    assert entry.markers and entry.spack_spec and entry.title
    assert entry.group in ("network", "app", "x500")
    # Proxy apps print the agreed walltime line; apps with their own report (NPB) and the
    # x500 codes print theirs.
    assert work.result is not Walltime or entry.group == "app"
    assert (entry.group == "app" and work.result is not Walltime) == (entry.parser == "npb")
    assert entry.module == f"t2hx.benchmarks.{entry.key.replace('-', '_')}"


def _fixture_dirs() -> list[tuple[benchmarks.Benchmark, Path]]:
    out = []
    for folder in sorted(p for p in FIX.iterdir() if p.is_dir()):
        hit = benchmarks.find(folder.name)
        if hit is not None:
            out.append((hit[0], folder))
    return out


def test_every_fixture_folder_belongs_to_an_entry() -> None:
    assert {f.name for _, f in _fixture_dirs()} == {p.name for p in FIX.iterdir() if p.is_dir()}


@pytest.mark.parametrize("entry,folder", _fixture_dirs(),
                         ids=[folder.name for _, folder in _fixture_dirs()])
def test_entry_parses_its_real_fixtures(entry, folder) -> None:
    recs = []
    for path in sorted(folder.iterdir()):
        try:
            recs += parse_file(entry.key, path)
        except parsers.ParseError:
            continue        # logs and stderr next to the output hold no result
    assert recs, folder
    # Unpatched upstream runs print no solver line: apps' metric is only in patched runs.
    if wire.WALLTIME_MARKER not in entry.markers:
        assert any(r["metric"] == entry.metric and r["unit"] == entry.unit for r in recs)


@pytest.fixture(scope="module")
def sim_common(mini, routed, tmp_path_factory) -> list[str]:
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    hostfile = tmp_path_factory.mktemp("hf") / "8.txt"
    hostfile.write_text("".join(h + "\n" for h in mini.hostnames()[:8]))
    return ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
            "dfsssp", "--routing-dir", str(hx), "--hostfile", str(hostfile),
            # EmDL's 0.1 s sleeps would exceed IMB's time limit at 1000 repetitions
            "--msglog", "0:4", "--imb-iter", "5",
            "--times", "2", "--window", "2", "--rounds", "3", "--reps", "2",
            "--elements", "0,1024,65536", "--iterations", "2", "--compute-scale", "10"]


def test_the_study_input_is_resolved_before_the_cache_key(sim_common, tmp_path) -> None:
    """Without --input a code runs the study's input at the hostfile's rank count, resolved
    by the command (the simulator never reads the study file), and the run cache keys on
    that input: the same case given that input explicitly is served from the cache."""
    work = ["--work", str(tmp_path / "work")]
    implicit, explicit = tmp_path / "implicit.txt", tmp_path / "explicit.txt"
    assert main(sim_common + ["--benchmark", "hpl", "-o", str(implicit), *work]) == 0
    given = json.dumps(load_study().input("hpl", 8))
    assert main(sim_common + ["--benchmark", "hpl", "-o", str(explicit), *work,
                              "--input", given, "--repetition", "1"]) == 0
    first = implicit.read_text().splitlines()[0]
    assert "cache=miss" in first
    assert "cache=hit" in explicit.read_text().splitlines()[0]
    other = json.dumps({**json.loads(given), "nb": 96})
    assert main(sim_common + ["--benchmark", "hpl", "-o", str(explicit), *work,
                              "--input", other]) == 0
    assert "cache=miss" in explicit.read_text().splitlines()[0]


def _sim_names() -> list[str]:
    return [b.name(v) for b in benchmarks.REGISTRY for v in (b.variants or (None,))]


@pytest.mark.parametrize("name", _sim_names())
def test_workload_renders_and_parses_back_to_the_metric(name, sim_common, tmp_path) -> None:
    entry, variant = benchmarks.resolve(name)
    out = tmp_path / "out.txt"
    assert main(sim_common + ["--benchmark", name, "-o", str(out), *study_input_args(entry.key)]) == 0
    text = out.read_text()
    recs = [r for r in parse_text(name, text) if r["metric"] == entry.metric
            and entry.metric_benchmark(variant) in (None, r["benchmark"])]
    assert recs and all(r["simulated"] and r["unit"] == entry.unit for r in recs)
    assert all(r["value"] > 0 for r in recs if r.get("msg_size") != 0)
    if entry.is_sized(variant):
        assert len({r["msg_size"] for r in recs}) > 1
    body = text.split("\n", 1)[1]
    markers = entry.markers if entry.sim_markers is None else entry.sim_markers
    for marker in markers:
        assert re.search(marker, body, re.M), (name, marker)


def test_capacity_model_runs_every_capacity_app(mini, routed, tmp_path, capsys) -> None:
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    hosts, jobs = mini.hostnames(), {}
    for i, app in enumerate(STUDY.capacity["apps"]):
        path = tmp_path / f"{app}.hosts"
        path.write_text("".join(h + "\n" for h in hosts[4 * i:4 * i + 4]))
        jobs[app] = {"hostfile": str(path), "nodes": 4, "benchmark": app}
    spec = tmp_path / "capacity.json"
    spec.write_text(json.dumps(jobs))
    cmd = ["-q", "campaign", "simulate-capacity", "--system", str(MINI), "--plane", "hyperx",
           "--routing", "dfsssp", "--routing-dir", str(hx), "--capacity", str(spec),
           "--window", "3"]
    assert main(cmd) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("T2HX capacity window closed")
    done = re.findall(r"^T2HX capacity finished: app=(\S+) run=(\d+) ", out, re.M)
    # An EmDL run is a whole IMB sweep (minutes of 0.1 s sleeps): none ends in 3 s; runs of
    # quicker apps do, launch and set-up included (tests/test_capacity.py checks the counts).
    assert done and "emdl" not in {a for a, _ in done}, done
    spec.write_text(json.dumps({"nosuch": jobs["emdl"]}))
    assert main(cmd) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown benchmark 'nosuch'" in err[0]
    assert main(cmd + ["--seed", "3"]) == 2                          # --seed is gone
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--seed" in err[0], err


CHECKS_PROBE = """
import json, sys
sys.path.insert(0, "checks")
import reframe.core.config as config, reframe.core.runtime as rt
cfg = config.load_config("conf/reframe.py"); cfg.select_subconfig("sim"); rt.init_runtime(cfg)
import importlib
from t2hx.checks.base import STUDY, T2hxCheck
mods = [importlib.import_module(p.stem) for p in sorted(__import__("pathlib").Path("checks")
        .glob("*.py"))]
out = {}
for cls in {c for m in mods for c in vars(m).values()
            if isinstance(c, type) and issubclass(c, T2hxCheck) and c.__module__ == m.__name__
            and not c.__name__.startswith("_")
            and c.__name__ not in ("Capacity", "Workload", "HistoryReplay", "NetworkAnalysis")}:
    seen = {}
    for i in range(cls.num_variants):
        p = cls.get_variant_info(i)["params"]
        key = tuple(v for k, v in p.items() if k not in ("combo", "num_nodes", "repetition"))
        if key in seen:
            continue
        t = cls(variant_num=i)
        seen[key] = {k: getattr(t, k) for k in ("benchmark", "family", "metric", "unit",
                     "metric_benchmark", "sized", "markers", "sim_markers", "spack_spec",
                     "output_file", "local_binary")}
        # A case of a benchmark the study does not run has no input to build a command of.
        runs = t.study_name in STUDY.catalog or t.study_name in STUDY.local["input"]
        seen[key]["command"] = list(t.command(t.launch_spec())) if runs else None
    out[cls.__name__] = list(seen.values())
print(json.dumps(out))
"""


def _probe_checks(study: str, tmp_path: Path) -> dict[str, list[dict]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("T2HX_")}
    env.update(T2HX_LOG_ROOT=str(tmp_path / "log"), T2HX_WORK_ROOT=str(tmp_path / "work"),
               T2HX_STUDY=study)
    run = subprocess.run([sys.executable, "-c", CHECKS_PROBE], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_every_check_class_takes_its_identity_from_an_entry(tmp_path) -> None:
    # Seed 000's study runs every benchmark but seed 001's NPB kernels, which its study runs.
    found = _probe_checks("hyperx-vs-fattree-sc19", tmp_path)
    for cls, cases in _probe_checks("shortcut-topologies-thesis", tmp_path).items():
        if cls.startswith("NPB"):
            found[cls] = cases
    assert set(found) == {b.check for b in benchmarks.REGISTRY}
    assert all(any(c["command"] for c in cases) for cases in found.values())
    names = set()
    for cls, cases in found.items():
        for case in cases:
            entry, variant = benchmarks.resolve(case["benchmark"])
            assert entry.check == cls
            names.add(case["benchmark"])
            assert case["family"] == entry.parser and case["metric"] == entry.metric
            assert case["unit"] == entry.unit and case["spack_spec"] == entry.spack_spec
            assert case["metric_benchmark"] == entry.metric_benchmark(variant)
            assert case["sized"] == entry.is_sized(variant)
            assert case["markers"] == list(entry.markers)
            assert case["output_file"] == entry.output_file
            if case["command"] is None:
                continue
            assert case["command"][0] and isinstance(case["command"][1], list)
            # The binary `local` looks for in the Spack view is the one the check runs.
            assert case["command"][0] == entry.local_binary == case["local_binary"]
    # Perflog names stay what logs and resume already hold.
    assert {"imb-bcast", "imb-barrier", "hpl", "qball", "ring-allreduce"} <= names
    assert len(names) == len(_sim_names())


CAPACITY_PROBE = """
import json, sys
sys.path.insert(0, "checks")
import reframe.core.config as config, reframe.core.runtime as rt
cfg = config.load_config("conf/reframe.py"); cfg.select_subconfig("sim"); rt.init_runtime(cfg)
import capacity, x500
from t2hx.checks.base import STUDY
hpl = x500.HPL(variant_num=[i for i in range(x500.HPL.num_variants)
               if x500.HPL.get_variant_info(i)["params"]["num_nodes"] == 56
               and x500.HPL.get_variant_info(i)["params"]["combo"] != "local"][0])
print(json.dumps({
    "check": hpl.input_files(hpl.launch_spec())["HPL.dat"],
    "capacity": x500.HPL.input_files(capacity.app_launch("hpl", 56))["HPL.dat"],
    "mupp": capacity.app_command("mupp", 56), "ranks": capacity.app_launch("amg", 56).ranks,
    "amg": capacity.app_command("amg", 56)}))
"""


def test_capacity_jobs_use_the_checks_commands_with_ranks_per_node(tmp_path) -> None:
    """With two ranks per node the capacity job's HPL.dat, IMB -npmin and AMG grid cover
    nodes x 2 ranks, the same input the HPL check writes for the same nodes."""
    study = tmp_path / "study.yaml"
    study.write_text((ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
                     .replace("ranks_per_node: 1 ", "ranks_per_node: 2 "))
    env = {k: v for k, v in os.environ.items() if not k.startswith("T2HX_")}
    env.update(T2HX_LOG_ROOT=str(tmp_path / "log"), T2HX_WORK_ROOT=str(tmp_path / "work"),
               T2HX_STUDY=str(study))
    run = subprocess.run([sys.executable, "-c", CAPACITY_PROBE], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.splitlines()[-1])
    assert got["ranks"] == 112
    body = [line for line in got["capacity"].splitlines() if not line.startswith("case ")]
    assert body == [line for line in got["check"].splitlines() if not line.startswith("case ")]
    grid = {line.split()[1]: int(line.split()[0]) for line in body if line.split()[1:2]
            in (["Ps"], ["Qs"])}
    assert grid["Ps"] * grid["Qs"] == 112 and grid["Ps"] <= grid["Qs"]
    assert got["mupp"][1][got["mupp"][1].index("-npmin") + 1] == "112"
    p = got["amg"][1][got["amg"][1].index("-P") + 1:]
    assert int(p[0]) * int(p[1]) * int(p[2]) == 112


PARSE_ONCE_PROBE = """
import json, shutil, sys
from pathlib import Path
sys.path.insert(0, "checks")
import reframe.core.config as config, reframe.core.runtime as rt
import reframe.utility.sanity as sn
cfg = config.load_config("conf/reframe.py"); cfg.select_subconfig("sim"); rt.init_runtime(cfg)
import imb
from t2hx.checks import base
calls = []
real = base.parsers.parse_text
base.parsers.parse_text = lambda *a: calls.append(a[0]) or real(*a)
cls = imb.IMBCollective
check = cls(variant_num=[i for i in range(cls.num_variants)
             if cls.get_variant_info(i)["params"]["collective"] == "Bcast"][0])
out = Path(sys.argv[1])
check.output_path = lambda: out
check.sized = True
ok = sn.evaluate(base._has_metric(check))
value = sn.evaluate(base._metric_value(check))
first = len(calls)
out.write_text(out.read_text() + "\\n")                 # a new output is parsed anew
sn.evaluate(base._has_metric(check))
print(json.dumps({"ok": ok, "value": value, "first": first, "after": len(calls),
                  "size": check.msg_size}))
"""


def test_a_check_parses_its_output_once(tmp_path) -> None:
    """Sanity and performance read one parse of the output; a changed file is parsed again."""
    out = tmp_path / "imb.out"
    shutil.copyfile(ROOT / "tests/data/post/fixtures/imb/imb-mpi1-np4-collectives-msglog0-16.out", out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("T2HX_")}
    env.update(T2HX_LOG_ROOT=str(tmp_path / "log"), T2HX_WORK_ROOT=str(tmp_path / "work"))
    run = subprocess.run([sys.executable, "-c", PARSE_ONCE_PROBE, str(out)], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.splitlines()[-1])
    assert found["ok"] and found["value"] > 0 and found["size"] == 65536
    assert (found["first"], found["after"]) == (1, 2)
