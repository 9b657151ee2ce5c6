"""A site adds a benchmark with ONE module in its own package, named in
$T2HX_BENCHMARK_PACKAGES, without editing t2hx: the module simulates through `t2hx simulate`
(real OpenSM routing of mini.yaml), its output parses with `t2hx parse`, its metric becomes a
perflog record and both land in t2hx.post's table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT, wire

from tests.conftest import MINI

T2HX = str(Path(sys.executable).parent / "t2hx")

# The whole benchmark: identity, check binding, Spack spec, binary, parser binding (its
# parse function lives here too), the typed workload, its renderer and noise rule.
MODULE = '''"""OSU MPI latency (osu_latency): rank 0 and rank 1 ping-pong every message size."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from t2hx.benchmarks import imbtext
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.post.records import ParseError, record, to_float


@dataclass(frozen=True)
class LatencyRow:
    size: int
    usec: float             # half a round trip


@dataclass(frozen=True)
class Latency:
    rows: list[LatencyRow]


def run(request, net) -> Latency:
    from t2hx.flowsim.bulk import Phase

    rows = []
    for size in imbtext.msglog(request.options.msglog):
        trip = net.run([Phase.of([0], [1], size), Phase.of([1], [0], size)]).total
        rows.append(LatencyRow(size, trip / 2 * 1e6))
    return Latency(rows)


def render(out: Latency) -> str:
    head = "# OSU MPI Latency Test v7.3\\n# Size          Latency (us)\\n"
    return head + "".join(f"{r.size:<10d}{r.usec:>18.2f}\\n" for r in out.rows)


def perturb(out: Latency, f: float) -> Latency:
    return replace(out, rows=[replace(r, usec=r.usec * f) for r in out.rows])


ROW = re.compile(r"^(\\d+)\\s+([0-9.]+)$", re.M)


def parse(text: str) -> list:
    recs = [record("osu-latency", "latency", "us", to_float(t), msg_size=int(m))
            for m, t in ROW.findall(text)]
    if not recs:
        raise ParseError("no osu_latency table", fix="check the run's stdout")
    return recs


BENCHMARK = Benchmark(
    "osu-latency", "OSU MPI latency", "network", "OSULatency",
    parser="sitebench.osu_latency:parse", metric="latency", unit="us",
    spack_spec="osu-micro-benchmarks", markers=(r"# OSU MPI Latency Test",),
    workload=Workload(Latency, run, render, perturb), sized=True,
    local_binary="osu_latency", sim_options=imbtext.msglog_option, aliases=("osu_latency",))
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory, mini, routed) -> dict:
    """The site's package with its one module, and the environment that registers it."""
    root = tmp_path_factory.mktemp("site")
    (root / "sitebench").mkdir()
    (root / "sitebench" / "__init__.py").write_text('"""A site\'s own benchmarks."""\n')
    (root / "sitebench" / "osu_latency.py").write_text(MODULE)
    hostfile = root / "4.txt"
    hostfile.write_text("".join(f"{h}\n" for h in mini.hostnames()[:4]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("T2HX_")}
    env.update(PYTHONPATH=os.pathsep.join([str(root), str(ROOT)]),
               T2HX_BENCHMARK_PACKAGES="sitebench", T2HX_WORK_ROOT=str(root / "work"),
               T2HX_LOG_ROOT=str(root / "log"))
    return {"root": root, "env": env, "hostfile": hostfile,
            "routing": routed(mini, "hyperx", "dfsssp").run.out_dir}


def t2hx(site: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([T2HX, *args], env=site["env"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def simulate(site: dict, out: Path, *extra: str) -> str:
    ran = t2hx(site, "-q", "simulate", "--system", str(MINI), "--plane", "hyperx",
               "--routing", "dfsssp", "--routing-dir", str(site["routing"]),
               "--hostfile", str(site["hostfile"]), "--benchmark", "osu_latency",
               "--msglog", "0:12", "-o", str(out), *extra)
    assert ran.returncode == 0, ran.stderr[-2000:]
    return out.read_text()


def test_a_site_module_runs_through_simulate_parse_perflog_and_post(site) -> None:
    root = site["root"]
    run_dir = root / "log" / "site" / "runs" / "sim" / "mini-hyperx" / "osu-latency_r1"
    run_dir.mkdir(parents=True)
    plain = simulate(site, root / "plain.out", "--repetition", "0")
    noisy = simulate(site, run_dir / "osu.out", "--repetition", "1", "--noise", "slowdown",
                     "--noise-cv", "0.2", "--noise-seed", "3")
    head, body = wire.split_simulated(plain)[1], wire.split_simulated(plain)[0]
    assert head["fabric"] == "mini/hyperx" and head["cache"] == "miss"
    assert body.startswith("# OSU MPI Latency Test") and len(body.splitlines()) == 2 + 14
    meta = wire.split_simulated(noisy)[1]
    assert meta["cache"] == "hit" and meta["repeat_of"] == "0"   # the cached numbers
    factor = float(meta["noise_factor"])
    assert factor > 1

    parsed = t2hx(site, "parse", "--benchmark", "osu-latency", str(root / "plain.out"),
                  str(run_dir / "osu.out"))
    assert parsed.returncode == 0, parsed.stderr[-2000:]
    recs = [json.loads(line) for line in parsed.stdout.splitlines()]
    assert len(recs) == 2 * 14 and all(r["simulated"] for r in recs)
    clean = {r["msg_size"]: r["value"] for r in recs if r["file"] == "plain.out"}
    noisy_us = {r["msg_size"]: r["value"] for r in recs if r["file"] == "osu.out"}
    assert 0 < clean[0] < clean[4096]                  # latency grows with the size
    for size, value in clean.items():                  # the noise rule scaled every time
        # (before printing: each printed value is off by at most half a last digit)
        assert noisy_us[size] == pytest.approx(value * factor, abs=0.005 * (factor + 1))

    # What the check would record: the largest size's value in the perflog, the run's
    # parameters beside its raw output.
    largest = max(clean)
    (run_dir / wire.RUN_META).write_text(wire.run_meta_text({
        "benchmark": "osu-latency", "campaign": "site", "system": "sim",
        "partition": "mini-hyperx", "topology": "hyperx", "routing": "dfsssp",
        "placement": "linear", "combo": "hx-dfsssp-linear", "nodes": 4, "repetition": 1,
        "msg_size": None, "git_hash": "x", "simulated": True,
        "timestamp": wire.run_timestamp()}))
    perflog = root / "log" / "site" / "perflogs" / "sim" / "mini-hyperx" / "OSULatency.log"
    perflog.parent.mkdir(parents=True)
    perflog.write_text(wire.PERFLOG_HEADER + "\n" + wire.perflog_line(
        system="sim", partition="mini-hyperx", campaign="site", combo="hx-dfsssp-linear",
        topology="hyperx", routing="dfsssp", placement="linear", benchmark="osu-latency",
        num_nodes=4, repetition=1, msg_size=largest, simulated=True, perf_var="latency",
        perf_value=noisy_us[largest], perf_unit="us", result="pass") + "\n")

    probe = ("import json, sys; from t2hx.post.ingest import ingest; "
             "df = ingest(sys.argv[1]).results; "
             "print(df[['benchmark', 'metric', 'unit', 'better', 'nodes', 'msg_size', "
             "'value', 'source']].to_json(orient='records'))")
    ran = subprocess.run([sys.executable, "-c", probe, str(root / "log" / "site")],
                         env=site["env"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    rows = json.loads(ran.stdout)
    assert {r["benchmark"] for r in rows} == {"osu-latency"}
    assert {(r["metric"], r["unit"], r["better"], r["nodes"]) for r in rows} == \
        {("latency", "us", "lower", 4)}
    by_size = {r["msg_size"]: r for r in rows}
    assert set(by_size) == set(clean)                  # every size of the raw output
    assert by_size[largest]["source"].startswith("perflogs/")    # the perflog's record
    assert by_size[largest]["value"] == noisy_us[largest]
    assert by_size[0]["value"] == noisy_us[0]


def test_a_site_module_that_clashes_or_is_missing_is_one_line(site, tmp_path) -> None:
    bad = tmp_path / "clash"
    (bad / "clashbench").mkdir(parents=True)
    (bad / "clashbench" / "__init__.py").write_text("")
    (bad / "clashbench" / "mine.py").write_text(MODULE.replace('"osu-latency", "OSU', '"imb", "OSU'))
    for packages, pythonpath, expect in (
            ("clashbench", str(bad), "benchmark name 'imb' is bound twice"),
            ("nosuchbench", str(bad), "cannot import benchmark package 'nosuchbench'")):
        env = dict(site["env"], T2HX_BENCHMARK_PACKAGES=packages,
                   PYTHONPATH=os.pathsep.join([pythonpath, str(site["root"]), str(ROOT)]))
        ran = subprocess.run([T2HX, "parse", "--benchmark", "imb", "/dev/null"], env=env,
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 2
        assert ran.stderr.count("\n") == 1 and expect in ran.stderr, ran.stderr[-2000:]
