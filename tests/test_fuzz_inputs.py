"""Property-based fuzzing of every input a user hands over.

Valid files of the repository (system confs, an ibnetdiscover fabric file, the study, a
hostfile, a demand file, a job file, pml_monitoring profiles, perflogs, run directories,
routing analyses) are mutated: wrong types, out-of-range
values, unknown, deleted, renamed and duplicated keys, bad hostname placeholders, non-UTF-8
bytes and other encodings, truncation, odd tokens. Each mutant goes through the library
loader in-process; the property: it loads, or it raises T2hxError whose one line names the
file. Any other exception is a traceback a user would see, and fails the test.

Fixed seed (``derandomize``), no example database, bounded ``max_examples`` per input kind
(their sum is checked to stay >= 1,000), no deadline. A few mutants also go through the real
CLI: exit status 2 and exactly one stderr line naming the file.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from t2hx import ROOT
from t2hx.campaign import preflight
from t2hx.conf import load_system
from t2hx.errors import T2hxError
from t2hx.fabric import netfile
from t2hx.fabric.build import build_plane
from t2hx.flowsim import network
from t2hx.post import parsers
from t2hx.post.ingest import Summary, ingest
from t2hx.post.perflog import read_perflog
from t2hx.post.routing import read_dark_fiber, read_efi
from t2hx.routing import demand as dm
from t2hx.study import load_study

MINI = ROOT / "conf" / "systems" / "mini.yaml"
T2HX = ROOT / "conf" / "systems" / "t2hx.yaml"
STUDY = ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml"
REF = ROOT / "log" / "reference"
FIXTURES = ROOT / "tests" / "data" / "post"
CLI = Path(sys.executable).parent / "t2hx"

# Examples per input kind; their sum is the run's total (>= 1,000, see test_enough_examples).
EXAMPLES = {"mini-conf": 250, "t2hx-conf": 50, "fabric-file": 60, "study": 220,
            "hostfile": 100, "routing-file": 75, "profile": 60, "perflog": 90,
            "run-output": 90, "analysis": 50, "cross-file": 60, "environment": 40}


# T2HX_FUZZ_SCALE=10 runs ten times the examples (a deeper search by hand; CI keeps 1).
SCALE = float(os.environ.get("T2HX_FUZZ_SCALE", "1"))


def fuzz(kind: str) -> settings:
    return settings(max_examples=round(EXAMPLES[kind] * SCALE), derandomize=True, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck))


# ---- mutations ---------------------------------------------------------------------------

ODD_VALUES = [None, -1, 0, 1, 2**40, 10**30, -(10**9), 0.5, 1e308, math.nan, math.inf, "",
              "x", "{rak}", "{0}", "{", "}", "{rack:>99999}", "{rack!x}", "{index[0]}",
              "{rack.real}", "a b", "é", "2019-13-45", [], [1, "x"], [[]], {}, {"k": 1},
              {1: 2}, {None: 1}, True, False, dt.date(2020, 1, 1)]
odd_values = st.one_of(st.sampled_from(ODD_VALUES), st.integers(), st.floats(),
                       st.text(max_size=12))
ODD_TOKENS = ["", "-1", "0", "256", "99999999999999999999", "9" * 5000, "nan", "inf", "x:y",
              ":", "::", "a:-5", "a:", ":7", "slots=0", "slots=99999999999",
              "slots=" + "9" * 5000, "max_slots=2", "{rak}", "|", "#", "null", "é", "\t",
              "\x00", "\ufeff", "m1n01:256", "hx-0-0", "m1n01", "1e999", "-0", "true"]
odd_tokens = st.one_of(st.sampled_from(ODD_TOKENS), st.text(max_size=10))
BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x00", b"\xed\xa0\x80", b"\x80abc",
             b"\xef\xbb\xbf", b"\r", b"\x1b[0m", b"\t\t"]
ENCODINGS = ["utf-16", "utf-32", "latin-1", "cp1252", "shift_jis"]
UNKNOWN_KEYS = ["bogus", "Racks", "per-rack", 7, None, True, "nodes", "kind"]


def _paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indexes) to a value below the root."""
    out: list[tuple] = []
    items = tree.items() if isinstance(tree, dict) else \
        enumerate(tree) if isinstance(tree, list) else ()
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(_paths(value, prefix + (key,)))
    return out


def _at(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


@st.composite
def mutated_tree(draw: st.DrawFn, tree: Any) -> Any:
    """1-3 structural edits: replace a value, delete, add an unknown key, rename a key."""
    tree = copy.deepcopy(tree)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(tree)
        if not paths:
            return copy.deepcopy(draw(odd_values))
        path = draw(st.sampled_from(paths))
        parent, key = _at(tree, path[:-1]), path[-1]
        op = draw(st.sampled_from(["replace", "replace", "delete", "unknown", "rename"]))
        # Copies: ODD_VALUES holds lists and dicts that later edits would change for good.
        value = copy.deepcopy(draw(odd_values))
        if op == "replace":
            parent[key] = value
        elif op == "delete":
            del parent[key]
        elif op == "unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(UNKNOWN_KEYS))] = value
        elif op == "rename" and isinstance(parent, dict):
            parent[f"{key}x"] = parent.pop(key)
        elif isinstance(parent, list):
            parent.append(value)
    return tree


def dump(tree: Any) -> bytes:
    return yaml.safe_dump(tree, allow_unicode=True, sort_keys=False).encode()


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, sep: bytes | None = None) -> bytes:
    """1-2 byte-level edits: truncation, bad bytes, another encoding, a duplicated, dropped
    or garbage line, one token of a line replaced (tokens split on ``sep`` or blanks)."""
    for _ in range(draw(st.integers(1, 2))):
        op = draw(st.sampled_from(["truncate", "bytes", "encoding", "dup", "drop", "token",
                                   "token", "garbage"]))
        lines = _lines(data)
        k = draw(st.integers(0, max(0, len(lines) - 1)))
        pos = draw(st.integers(0, len(data)))
        if op == "truncate":
            data = data[:pos]
        elif op == "bytes":
            data = data[:pos] + draw(st.sampled_from(BAD_BYTES)) + data[pos:]
        elif op == "encoding":
            text = data.decode("utf-8", errors="replace")
            at = draw(st.integers(0, len(text)))
            text = text[:at] + draw(st.sampled_from(["é", "ü", "µ", "–", "日"])) + text[at:]
            data = text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")
        elif op == "dup":
            data = b"\n".join(lines[:k + 1] + lines[k:])
        elif op == "drop":
            data = b"\n".join(lines[:k] + lines[k + 1:])
        elif op == "token":
            data = b"\n".join(lines[:k] + [_swap_token(draw, lines[k], sep)] + lines[k + 1:])
        else:
            garbage = draw(st.text(max_size=40)).encode("utf-8", errors="replace")
            data = b"\n".join(lines[:k] + [garbage] + lines[k:])
    return data


def _swap_token(draw: st.DrawFn, line: bytes, sep: bytes | None) -> bytes:
    words = line.split(sep) if sep and sep in line else line.split(b" ")
    i = draw(st.integers(0, max(0, len(words) - 1)))
    token = draw(odd_tokens).encode("utf-8", errors="replace")
    if words:
        words[i] = token
    joiner = sep if sep and sep in line else b" "
    return joiner.join(words) if words else token


# ---- the property ------------------------------------------------------------------------

def loads_or_names_file(load: Callable[[Path], Any], path: Path, data: bytes,
                        names: tuple[Path, ...] = ()) -> None:
    """Write ``data`` to ``path`` and load it: success, or one T2hxError line naming
    ``path`` (or one of ``names``, e.g. the conf that refers to it)."""
    path.write_bytes(data)
    try:
        load(path)
    except T2hxError as err:
        line = err.line()
        assert len(line.splitlines()) == 1, repr(line)
        assert any(str(f) in line for f in (path, *names)), f"error names no file: {line}"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def mini():
    return load_system(MINI)


@pytest.fixture(scope="module")
def mini_hyperx(mini):
    return build_plane(mini, "hyperx")


def check_system(path: Path) -> None:
    system = load_system(path)
    for name in system.planes:
        build_plane(system, name)


def check_study(path: Path) -> None:
    for profile in ("full", "quick"):
        study = load_study(path, profile)
        study.combo(study.baseline)
        study.all_cases()
        for name in study.catalog:
            for nodes in study.nodes(name):
                study.input(name, nodes)
            study.variants(name)
        # what `campaign run` checks before it starts (t2hx.campaign.preflight)
        preflight.check_combos(study)
        preflight.check_inputs(study)
        preflight.check_size(study, [])


# ---- conf/systems ------------------------------------------------------------------------

MINI_TREE = yaml.safe_load(MINI.read_text())


def yaml_mutants(path: Path) -> st.SearchStrategy[bytes]:
    """A YAML file edited as data (types, keys, values) or as bytes (encoding, lines)."""
    return st.one_of(mutated_tree(yaml.safe_load(path.read_text())).map(dump),
                     mutated_bytes(path.read_bytes()))


@fuzz("mini-conf")
@given(data=yaml_mutants(MINI))
def test_system_conf(work: Path, data: bytes) -> None:
    loads_or_names_file(check_system, work / "mini.yaml", data)


@fuzz("t2hx-conf")
@given(data=yaml_mutants(T2HX))
def test_t2hx_conf(work: Path, data: bytes) -> None:
    loads_or_names_file(check_system, work / "t2hx.yaml", data)


def _fabric_file() -> bytes:
    return netfile.render(build_plane(load_system(MINI), "hyperx")).encode()


@fuzz("fabric-file")
@given(data=mutated_bytes(_fabric_file()))
def test_ibnetdiscover_file(work: Path, data: bytes) -> None:
    """A conf whose plane is an ibnetdiscover output: the output is the mutated input."""
    conf = work / "real.yaml"
    tree = copy.deepcopy(MINI_TREE)
    tree["planes"] = {"hyperx": {"hca": "mlx4_1",
                                 "topology": {"kind": "ibnetdiscover", "file": "real.net"}}}
    conf.write_bytes(dump(tree))
    loads_or_names_file(lambda _: check_system(conf), work / "real.net", data, (conf,))


# ---- conf/studies/hyperx-vs-fattree-sc19.yaml ---------------------------------------------------------------------

@fuzz("study")
@given(data=yaml_mutants(STUDY))
def test_study(work: Path, data: bytes) -> None:
    loads_or_names_file(check_study, work / "study.yaml", data)


# ---- hostfiles, demand and job files -----------------------------------------------------

def _hosts(system) -> list[str]:
    return system.hostnames()[:8]


def _valid_hostfile() -> bytes:
    hosts = load_system(MINI).hostnames()
    return (f"# ranks of a job\n{hosts[0]}\n{hosts[1]} slots=1\n"
            + "".join(f"{h}\n" for h in hosts[2:8])).encode()


def _valid_demand() -> bytes:
    hosts = load_system(MINI).hostnames()
    demand = {hosts[i]: {hosts[(i + j) % 16]: 17 * j for j in (1, 3, 5)} for i in range(8)}
    return dm.render(demand).encode()


def _valid_jobs() -> bytes:
    hosts = load_system(MINI).hostnames()
    return dm.render_jobs({"job1": hosts[:4], "1234.pbs": hosts[4:9]}).encode()


@fuzz("hostfile")
@given(data=mutated_bytes(_valid_hostfile()))
def test_hostfile(work: Path, mini, data: bytes) -> None:
    loads_or_names_file(lambda p: network.read_hostfile(p, mini), work / "hosts.txt", data)
    loads_or_names_file(dm.read_hostfile, work / "hosts.txt", data)


# PARX demand files and SAR job files: (valid file, reader, validation against the fabric).
ROUTING_FILES = {"demand": (_valid_demand(), dm.read_demand, dm.validate_demand),
                 "jobs": (_valid_jobs(), dm.read_jobs, dm.validate_jobs)}


@pytest.mark.parametrize("kind", sorted(ROUTING_FILES))
@fuzz("routing-file")
@given(data=st.data())
def test_demand_and_job_files(work: Path, mini_hyperx, kind: str, data: st.DataObject) -> None:
    valid, read, validate = ROUTING_FILES[kind]
    loads_or_names_file(lambda p: validate(read(p), mini_hyperx, p), work / f"{kind}.txt",
                        data.draw(mutated_bytes(valid)))


PROFILES = sorted((ROOT / "tests" / "data" / "demand").glob("traffic.*.prof"))


@fuzz("profile")
@given(rank=st.integers(0, len(PROFILES) - 1),
       data=st.sampled_from(PROFILES).flatmap(lambda f: mutated_bytes(f.read_bytes(), b"\t")))
def test_monitoring_profile(work: Path, mini, rank: int, data: bytes) -> None:
    """pml_monitoring files of one job (t2hx demand build): one rank's file mutated."""
    folder = work / "prof"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for f in PROFILES:
        shutil.copyfile(f, folder / f.name)
    prefix = folder / "traffic"

    def check(_: Path) -> None:
        dm.node_demand(dm.read_monitoring(prefix), mini.hostnames()[:len(PROFILES)], prefix)
    loads_or_names_file(check, folder / f"traffic.{rank}.prof", data, (prefix,))


# ---- logs: perflogs, run directories, routing analyses -----------------------------------

def _perflog_sample() -> bytes:
    """Header and a few lines of two reference perflogs (one file, two headers)."""
    out = []
    for name in ("HPL.log", "IMBCollective.log"):
        out += (REF / "perflogs" / "sim" / "t2hx-hyperx" / name).read_bytes().split(b"\n")[:4]
    return b"\n".join(out) + b"\n"


def _logdir(work: Path) -> Path:
    logdir = work / "log"
    shutil.rmtree(logdir, ignore_errors=True)
    (logdir / "perflogs" / "sim").mkdir(parents=True)
    return logdir


def ingest_clean(logdir: Path) -> None:
    """ingest() never fails on bad content: it skips and lists; a traceback fails."""
    result = ingest(logdir)
    assert result.summary.rows == len(result.results)


@fuzz("perflog")
@given(data=mutated_bytes(_perflog_sample(), b"|"))
def test_perflog(work: Path, data: bytes) -> None:
    logdir = _logdir(work)
    path = logdir / "perflogs" / "sim" / "HPL.log"
    loads_or_names_file(read_perflog, path, data)
    ingest_clean(logdir)


RUN_OUTPUTS = [("hpl", FIXTURES / "fixtures/hpl/hpl-np2-N1000_2000-NB64_128-P1xQ2.out"),
               ("imb", FIXTURES / "fixtures/imb/imb-mpi1-np4-collectives-msglog0-16.out"),
               ("mpigraph", FIXTURES / "fixtures/mpigraph/mpigraph-np2-1MiB-10x10.out"),
               ("graph500", FIXTURES / "fixtures/graph500/graph500-bfs-np2-scale12.out"),
               ("hpcg", FIXTURES / "fixtures/hpcg/hpcg-np2-16x16x16-rt10.out"),
               ("minife", FIXTURES / "fixtures/minife/minife-ref-np2-20x20x20.yaml"),
               ("amg", FIXTURES / "fixtures/amg/amg-problem1-np2-n20.out"),
               ("ebb", FIXTURES / "fixtures/netgauge/netgauge-ebb-np2-1MiB.out"),
               ("milc", FIXTURES / "hand/milc.out"), ("qball", FIXTURES / "hand/qbox.out"),
               ("swfft", FIXTURES / "hand/swfft.out"), ("ffvc", FIXTURES / "hand/ffvc.out")]
RUN_META = {"benchmark": "hpl", "campaign": "fuzz", "combo": "hx-dfsssp-linear",
            "nodes": 2, "repetition": 0, "routing": "dfsssp", "placement": "linear",
            "topology": "hyperx", "system": "sim", "simulated": False, "msg_size": None}


@st.composite
def run_dir(draw: st.DrawFn) -> tuple[str, bytes, bytes]:
    """(benchmark, t2hx-run.json, raw output), one of the two mutated."""
    bench, path = draw(st.sampled_from(RUN_OUTPUTS))
    meta = json.dumps({**RUN_META, "benchmark": bench}).encode()
    raw = path.read_bytes()
    if draw(st.booleans()):
        return bench, meta, draw(mutated_bytes(raw))
    tree = draw(mutated_tree({**RUN_META, "benchmark": bench}))
    return bench, json.dumps(tree, default=str).encode(), raw


@fuzz("run-output")
@given(run=run_dir())
def test_run_directory(work: Path, run: tuple[str, bytes, bytes]) -> None:
    bench, meta, raw = run
    logdir = _logdir(work)
    folder = logdir / "runs" / "sim" / "case"
    folder.mkdir(parents=True)
    (folder / "t2hx-run.json").write_bytes(meta)
    loads_or_names_file(lambda p: parsers.parse_file(bench, p), folder / "rfm_job.out", raw)
    ingest_clean(logdir)


ANALYSIS_CSV = (REF / "analysis" / "hyperx-parx.csv").read_bytes()[:400]
ANALYSIS_JSON = (REF / "analysis" / "hyperx-parx.json").read_bytes()


@fuzz("analysis")
@given(csv=mutated_bytes(ANALYSIS_CSV, b","), js=mutated_bytes(ANALYSIS_JSON))
def test_routing_analysis(work: Path, csv: bytes, js: bytes) -> None:
    logdir = _logdir(work)
    (logdir / "analysis").mkdir()
    (logdir / "analysis" / "hyperx-parx.csv").write_bytes(csv)
    (logdir / "analysis" / "hyperx-parx.json").write_bytes(js)
    summary = Summary()
    # What the figures rely on: finite, non-negative path counts and a 0..1 share.
    for series in read_efi(logdir, summary).values():
        assert series.map(math.isfinite).all() and (series >= 0).all()
    for share in read_dark_fiber(logdir, summary).values():
        assert 0.0 <= share <= 1.0


# ---- cross-file inconsistencies and environment variables ------------------------------
# Values that are each valid alone but, together with another file or the environment,
# would silently route, run or report something else. The property: refused in one line
# naming the file, or accepted and consistent.

OWN_OPTIONS = ("routing_engine", "lmc")            # opensm.conf keys t2hx sets itself
ENGINE_LISTS = st.lists(st.sampled_from(["minhop", "ftree", "sssp", "dfsssp", "parx", "updn"]),
                        max_size=3)


@st.composite
def routing_edits(draw: st.DrawFn) -> dict:
    """The mini conf with its planes' multi-rail shape, engines, LMC and options drawn."""
    tree = copy.deepcopy(MINI_TREE)
    fat, hx = tree["planes"]["fattree"], tree["planes"]["hyperx"]
    fat["topology"] = draw(st.sampled_from([
        {"kind": "kary", "k": 8, "n": 2, "rails": draw(st.integers(1, 3))},
        {"kind": "xgft", "m": [8, 8], "w": [draw(st.integers(1, 2)), 8],
         "p": [draw(st.integers(1, 2)), 1], "switch_ports": 24}]))
    for plane in (fat, hx):
        plane["opensm"] = {"routing": draw(ENGINE_LISTS), "lmc": draw(st.integers(0, 7)),
                           "options": draw(st.dictionaries(
                               st.sampled_from([*OWN_OPTIONS, "max_op_vls", "qos"]),
                               st.integers(0, 8), max_size=2)),
                           "sm": {"via": "agent"}}
    return tree


def check_routed_as_written(path: Path) -> None:
    system = load_system(path)
    for name, plane in system.planes.items():
        engines = plane.opensm["routing"]
        assert engines and len(set(engines)) == len(engines), (name, engines)
        assert "parx" not in engines or plane.opensm["lmc"] in (0, 2), plane.opensm
        assert not set(OWN_OPTIONS) & set(plane.opensm["options"]), plane.opensm
        assert build_plane(system, name).subnets() == 1, name


@fuzz("cross-file")
@given(tree=routing_edits())
def test_what_a_plane_routes_is_what_its_conf_says(work: Path, tree: dict) -> None:
    loads_or_names_file(check_routed_as_written, work / "routing.yaml", dump(tree))


STUDY_TREE = yaml.safe_load(STUDY.read_text())
T2HX_CORES = yaml.safe_load(T2HX.read_text())["nodes"]["cores"]


@st.composite
def study_against_system(draw: st.DrawFn) -> tuple[dict, str]:
    """The study with fields that depend on its system, the benchmark registry or each
    other drawn, and a $T2HX_STUDY_PROFILE value."""
    tree = copy.deepcopy(STUDY_TREE)
    tree["ranks_per_node"] = draw(st.integers(1, 2 * T2HX_CORES))
    tree["ladders"]["linear"] = draw(st.lists(st.integers(1, 700), min_size=1, max_size=6))
    baseline = next(c for c in tree["combos"] if c["name"] == tree["baseline"])
    baseline["routing"] = draw(st.sampled_from(["ftree", "sssp", "updn", "dfsssp", "parx"]))
    tree["extra_combos"][0]["only"] = {draw(st.sampled_from(["mpigraph", "mpigrahp", "hpl"])):
                                       [28]}
    tree["benchmarks"]["imb"]["variants"] = draw(st.lists(
        st.sampled_from(["Bcast", "Allreduce", "Bcst", "Allgather", "PingPong"]),
        min_size=1, max_size=3, unique=True))
    env = draw(st.sampled_from(["", "full", "quick", "paper", "quik", "Quick", "full "]))
    return tree, env


def check_consistent(path: Path, env: str) -> None:
    """Loaded as the environment's study (what `t2hx hostfiles` and the checks do), and
    its variants checked as a campaign's preflight does."""
    from t2hx.benchmarks import BY_KEY
    from t2hx.campaign import preflight

    saved = {k: os.environ.get(k) for k in ("T2HX_STUDY", "T2HX_STUDY_PROFILE")}
    os.environ.update({"T2HX_STUDY": str(path), "T2HX_STUDY_PROFILE": env})
    try:
        study = load_study(profile="full")
        preflight.check_variants(study)
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    raw = yaml.safe_load(path.read_text())
    assert env in ("", "full") or env in raw["profiles"], env
    assert all(a < b for a, b in zip(study.ladders["linear"], study.ladders["linear"][1:]))
    assert study.ranks_per_node <= T2HX_CORES
    assert study.baseline not in study.left_out(load_system(T2HX))
    assert all(set(c.only) <= set(study.catalog) for c in study.extra_combos)
    assert set(study.variants("imb")) <= set(BY_KEY["imb"].variants)


@fuzz("environment")
@given(case=study_against_system())
def test_a_study_runs_as_written_on_its_system(work: Path, case: tuple[dict, str]) -> None:
    tree, env = case
    path = work / "study-env.yaml"
    loads_or_names_file(lambda p: check_consistent(p, env), path, dump(tree))


def test_enough_examples() -> None:
    """At least 1,000 mutated inputs per run (routing-file runs per kind)."""
    assert sum(EXAMPLES.values()) + EXAMPLES["routing-file"] * (len(ROUTING_FILES) - 1) >= 1000


# ---- through the real CLI: exit status 2, one stderr line naming the file ----------------

def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _assert_one_line(run: subprocess.CompletedProcess, path: Path) -> None:
    assert run.returncode == 2, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("t2hx: error: "), run.stderr
    assert str(path) in lines[0], lines[0]


def _bad_confs(work: Path) -> list[Path]:
    text = MINI.read_text()
    cases = {"placeholder.yaml": text.replace("m{rack}n{slot:02d}", "rv-{rak}-{slot}").encode(),
             "latin1.yaml": ("# Säule\n" + text).encode("latin-1"),
             "utf16.yaml": text.encode("utf-16"),
             "dupkey.yaml": text.replace("  racks: 4\n", "  racks: 4\n  racks: 5\n").encode()}
    for name, data in cases.items():
        (work / name).write_bytes(data)
    return [work / name for name in cases]


def test_cli_bad_conf(work: Path) -> None:
    for path in _bad_confs(work):
        _assert_one_line(_cli("fabric", "build", "--system", str(path), "--plane", "hyperx",
                              "--out", str(work / "fabric")), path)


def test_cli_bad_study(work: Path) -> None:
    path = work / "study-bad.yaml"
    path.write_bytes(STUDY.read_bytes().replace(b"repetitions: 10", b"repetitions: \xff"))
    _assert_one_line(_cli("campaign", "status", "--campaign", "fuzz",
                          env={"T2HX_STUDY": str(path)}), path)


def test_cli_bad_demand_and_jobs(work: Path) -> None:
    demand, jobs = work / "demand-bad.txt", work / "jobs-bad.txt"
    demand.write_bytes(_valid_demand().replace(b":17", b":" + b"9" * 5000, 1))
    jobs.write_bytes(b"\xfe" + _valid_jobs())
    _assert_one_line(_cli("demand", "check", str(demand), "--system", str(MINI)), demand)
    _assert_one_line(_cli("demand", "check", str(jobs), "--jobs", "--system", str(MINI)), jobs)


def test_cli_bad_hostfile(work: Path) -> None:
    hosts = work / "hosts-bad.txt"
    hosts.write_bytes(b"m1n01 slots=99999999999\n")
    _assert_one_line(_cli("demand", "jobs", "--job", "j1", str(hosts), "--out",
                          str(work / "jobs.out")), hosts)


def test_cli_replay_of_broken_logs(work: Path) -> None:
    """`t2hx replay` skips and lists bad log inputs (exit 0); a missing LOGDIR is one line."""
    logdir = _logdir(work)
    (logdir / "perflogs" / "sim" / "HPL.log").write_bytes(
        _perflog_sample() + b"garbage|x\n\xff\xfe|||\n")
    (logdir / "provenance.json").write_bytes(b"[1, 2")
    (logdir / "analysis").mkdir()
    (logdir / "analysis" / "a.csv").write_bytes(b"link,efi\n1,inf\n")
    run = _cli("-q", "replay", str(logdir), "--out", str(work / "paper"))
    assert run.returncode == 0 and not run.stderr, run.stderr
    skipped = json.loads((work / "paper" / "data" / "summary.json").read_text())["skipped"]
    assert {s["path"] for s in skipped} >= {"provenance.json", "analysis/a.csv"}
    _assert_one_line(_cli("replay", str(work / "no-such-log")), work / "no-such-log")


# ---- cross-file checks before a campaign starts (t2hx.campaign.preflight) ----------------

STUDY_BREAKS = {
    "a combo's plane the system lacks": ("plane: hyperx,  routing: dfsssp, placement: linear",
                                         "plane: hyprex,  routing: dfsssp, placement: linear",
                                         "combos[2]"),
    "an IMB sweep upside down": ('msglog: "0:22"', 'msglog: "22:0"',
                                 "benchmarks.imb.input.msglog"),
    "a word for a number": ("input: {gib_per_rank: 1.0, nb: 192}",
                            "input: {gib_per_rank: lots, nb: 192}", "benchmarks.hpl.input"),
    "a negative size": ("input: {gib_per_rank: 1.0, nb: 192}",
                        "input: {gib_per_rank: -1, nb: 192}", "benchmarks.hpl.input"),
    "more cases than a campaign holds": ("repetitions: 10 ", "repetitions: 1000 ",
                                         "repetitions"),
    "a system that does not exist": ("\nsystem: t2hx", "\nsystem: t2hy", "system"),
    "a baseline the system cannot route": ("{name: ft-ftree-linear,   plane: fattree, routing: "
                                           "ftree,", "{name: ft-ftree-linear,   plane: "
                                           "fattree, routing: updn, ", "baseline"),
    "more ranks than a node has cores": ("ranks_per_node: 1 ", "ranks_per_node: 48 ",
                                         "ranks_per_node"),
}


@pytest.mark.parametrize("what", STUDY_BREAKS)
def test_campaign_refuses_a_study_its_system_cannot_run(work: Path, what: str) -> None:
    """One line naming the study file and field, exit 2, before provenance or ReFrame."""
    old, new, field = STUDY_BREAKS[what]
    text = STUDY.read_text()
    assert old in text, old
    path = work / f"study-{field}.yaml"
    path.write_text(text.replace(old, new, 1))
    logs = work / "preflight-log"
    run = _cli("campaign", "dry-run", "--system", "sim", "--campaign", "preflight",
               env={"T2HX_STUDY": str(path), "T2HX_LOG_ROOT": str(logs),
                    "T2HX_WORK_ROOT": str(work / "preflight-work")})
    _assert_one_line(run, path)
    assert f": {field}: " in run.stderr, run.stderr
    assert not (logs / "preflight").exists()


def test_an_error_in_a_plane_not_in_use_fails_now(work: Path) -> None:
    """Too many missing cables on the HyperX fail `fabric build` of the Fat-Tree too."""
    path = work / "cables.yaml"
    path.write_text(MINI.read_text().replace("list: [[hx-0-0, hx-1-0]]", "random: 9999"))
    run = _cli("fabric", "build", "--system", str(path), "--plane", "fattree",
               "--out", str(work / "fabric-cables"))
    _assert_one_line(run, path)
    assert "planes.hyperx.missing_cables.random" in run.stderr


def test_simulate_refuses_a_demand_file_the_fabric_does_not_match(work: Path) -> None:
    """As `demand check` does: OpenSM's plugin would only log the unknown node."""
    hosts = work / "hosts-4.txt"
    hosts.write_text("".join(f"{h}\n" for h in load_system(MINI).hostnames()[:4]))
    demand = work / "demand-unknown-node.txt"
    demand.write_bytes(_valid_demand().replace(b"m1n01 ", b"zz9n99 ", 1))
    run = _cli("simulate", "--system", str(MINI), "--plane", "hyperx", "--routing", "parx",
               "--hostfile", str(hosts), "--benchmark", "mpigraph", "--demand", str(demand),
               "--work", str(work / "sim-work"))
    _assert_one_line(run, demand)
    assert "zz9n99" in run.stderr
