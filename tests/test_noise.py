"""Run-to-run noise and the run cache of ``t2hx simulate``: seeded noise
that differs across repetitions and scales what the parsers read; without noise a case is
simulated once and its repetitions say so; the cache key follows every input."""

from __future__ import annotations

import json
import shutil
import statistics
import threading
import time
from pathlib import Path

import pytest
import yaml

from t2hx import ROOT, benchmarks, simulation
from t2hx.benchmarks.results import decode, encode
from t2hx.cli import main
from t2hx.flowsim import noise, runcache
from t2hx.post.parsers import parse_text
from t2hx.post.records import better_for
from t2hx.study import load_study
from t2hx.wire import split_simulated

from tests.conftest import MINI, study_input_args

# Short inputs: the point is the noise and the cache, not the workloads.
SHORT = ["--msglog", "0:3", "--imb-iter", "5", "--rounds", "3", "--reps", "2", "--times", "2",
         "--window", "2", "--elements", "0,1024,65536", "--iterations", "2"]


@pytest.fixture(scope="module")
def hx_dir(mini, routed):
    return routed(mini, "hyperx", "dfsssp").run.out_dir


@pytest.fixture(scope="module")
def hostfile8(tmp_path_factory, mini) -> Path:
    path = tmp_path_factory.mktemp("hf") / "8.txt"
    path.write_text("".join(f"{h}\n" for h in mini.hostnames()[:8]))
    return path


def sim(capsys, work: Path, hostfile: Path, routing: Path, bench: str, rep: int = 0,
        extra: list[str] = ()) -> tuple[dict, str]:
    args = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
            "dfsssp", "--routing-dir", str(routing), "--hostfile", str(hostfile),
            "--benchmark", bench, "--work", str(work), "--repetition", str(rep),
            "--seed", str(rep), *SHORT, *study_input_args(benchmarks.resolve(bench)[0].key),
            *extra]
    assert main(args) == 0
    body, meta = split_simulated(capsys.readouterr().out)
    return meta, body


def test_factor_is_seeded_lognormal_with_the_given_cv() -> None:
    model = noise.Noise("lognormal", 0.2, 2019)
    draws = [model.factor("case", r) for r in range(4000)]
    assert draws == [model.factor("case", r) for r in range(4000)]        # pure function
    assert len(set(draws[:10])) == 10                                       # reps differ
    assert model.factor("other", 0) != draws[0]                             # cases differ
    assert noise.Noise("lognormal", 0.2, 2020).factor("case", 0) != draws[0]
    assert min(draws) > 0
    assert statistics.fmean(draws) == pytest.approx(1.0, abs=0.015)
    assert statistics.stdev(draws) == pytest.approx(0.2, rel=0.08)
    assert noise.Noise("none", 0.2, 2019).factor("case", 3) == 1.0
    assert noise.Noise("lognormal", 0.0, 2019).factor("case", 3) == 1.0


def test_slowdown_never_speeds_a_run_up_and_has_the_given_cv() -> None:
    """The study's model: the simulated run is the undisturbed best case, so f >= 1 (no
    bandwidth above the link rate), with the measured coefficient of variation."""
    model = noise.Noise("slowdown", 0.18, 2019)
    draws = [model.factor("case", r) for r in range(4000)]
    assert min(draws) >= 1.0
    assert statistics.stdev(draws) / statistics.fmean(draws) == pytest.approx(0.18, rel=0.08)
    assert noise.slowdown_cv(noise.slowdown_sigma(0.3)) == pytest.approx(0.3, rel=1e-6)


def test_combos_share_a_repetition_draw(capsys, tmp_path, mini, hostfile8, hx_dir) -> None:
    """Common random numbers: the same benchmark, input, rank count and repetition draw the
    same factor on another placement; another repetition or rank count draws another."""
    other = tmp_path / "other8.txt"
    other.write_text("".join(f"{h}\n" for h in reversed(mini.hostnames()[-8:])))
    four = tmp_path / "4.txt"
    four.write_text("".join(f"{h}\n" for h in mini.hostnames()[:4]))
    on = ["--noise", "slowdown", "--noise-cv", "0.2", "--noise-seed", "5", "--no-cache"]
    f = {}
    for label, hosts, rep in (("a", hostfile8, 1), ("b", other, 1), ("c", hostfile8, 2),
                              ("d", four, 1)):
        meta, _ = sim(capsys, tmp_path, hosts, hx_dir, "imb-bcast", rep, on)
        f[label] = meta["noise_factor"]
    assert f["a"] == f["b"] and f["a"] != f["c"] and f["a"] != f["d"]


NAMES = [b.name(v) for b in benchmarks.REGISTRY for v in (b.variants or (None,))]


def test_every_registry_workload_has_a_rule(capsys, tmp_path, hostfile8, hx_dir) -> None:
    """Every benchmark declares its noise rule and renderer (a workload cannot be declared
    without them); a bad --noise-cv is one line."""
    for bench in benchmarks.REGISTRY:
        assert callable(bench.workload.perturb) and callable(bench.workload.render)
    args = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
            "dfsssp", "--routing-dir", str(hx_dir), "--hostfile", str(hostfile8),
            "--benchmark", "amg", "--work", str(tmp_path), "--noise", "lognormal",
            "--noise-cv", "-0.1"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--noise-cv" in err[0]


@pytest.mark.parametrize("option", [("--size", "-5"), ("--times", "0"), ("--window", "0"),
                                    ("--iterations", "-3"), ("--reps", "0"), ("--lmc", "99"),
                                    ("--repetition", "-1"), ("--seed", "-1"),
                                    ("--compute-scale", "-1"), ("--noise-cv", "nan")])
def test_out_of_range_options_are_one_line(option, capsys, tmp_path, hostfile8, hx_dir) -> None:
    """A value that would print plausible-looking nonsense (negative sizes, nan rates) is
    refused before any work, naming the option and its range."""
    args = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
            "dfsssp", "--routing-dir", str(hx_dir), "--hostfile", str(hostfile8),
            "--benchmark", "ebb", "--work", str(tmp_path), *option]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and option[0] in err[0], err
    assert "out of range" in err[0], err
    assert not list(tmp_path.rglob("*.json"))          # nothing simulated, nothing cached


def test_an_unwritable_output_is_one_line(capsys, tmp_path, hostfile8, hx_dir) -> None:
    """A file where the output's folder should be: one line naming the path, exit 2."""
    (tmp_path / "file").write_text("x")
    args = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
            "dfsssp", "--routing-dir", str(hx_dir), "--hostfile", str(hostfile8),
            "--benchmark", "ebb", "--work", str(tmp_path / "work"),
            "--output", str(tmp_path / "file" / "out.txt")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(tmp_path / "file") in err[0] and "fix:" in err[0], err


@pytest.mark.parametrize("name", NAMES)
def test_noise_scales_what_the_parser_reads(name, capsys, tmp_path, hostfile8, hx_dir) -> None:
    """Every benchmark (every IMB collective): rep 1 with noise = the cached noiseless
    numbers with their times times f and their rates divided by f, as the parsers read
    them; the cached numbers survive JSON exactly and factor 1 changes nothing."""
    entry, variant = benchmarks.resolve(name)
    plain_meta, plain = sim(capsys, tmp_path, hostfile8, hx_dir, name, rep=1)
    [cached] = [json.loads(p.read_text())["value"]
                for p in (tmp_path / "simulate").rglob("*.json")]
    work = entry.workload
    numbers = decode(work.result, cached["result"])
    assert encode(numbers) == cached["result"]
    assert work.render(work.perturb(numbers, 1.0)) == work.render(numbers) == plain
    meta, noisy = sim(capsys, tmp_path, hostfile8, hx_dir, name, rep=1,
                      extra=["--noise", "lognormal", "--noise-cv", "0.3",
                             "--noise-seed", "7"])
    assert plain_meta["noise"] == "none" and "noise_factor" not in plain_meta
    assert meta["cache"] == "hit" and meta["noise"] == "lognormal:cv=0.3:seed=7"
    f = float(meta["noise_factor"])
    assert f != 1.0
    want = entry.metric_benchmark(variant)
    before = [r for r in parse_text(entry.parser, plain) if r["metric"] == entry.metric
              and (want is None or r["benchmark"] == want)]
    after = [r for r in parse_text(entry.parser, noisy) if r["metric"] == entry.metric
             and (want is None or r["benchmark"] == want)]
    assert before and len(before) == len(after)
    power = 1 if better_for(entry.unit) == "lower" else -1
    for b, a in zip(before, after):
        assert a["value"] == pytest.approx(b["value"] * f ** power, rel=0.01, abs=0.011)


def test_off_simulates_once_and_marks_repeats(capsys, tmp_path, hostfile8, hx_dir,
                                              monkeypatch) -> None:
    calls = []
    real = simulation.simulate_case
    monkeypatch.setattr(simulation, "simulate_case",
                        lambda *a: calls.append(a) or real(*a))
    runs = [sim(capsys, tmp_path, hostfile8, hx_dir, "minife", rep=r) for r in range(3)]
    assert len(calls) == 1
    assert [m["cache"] for m, _ in runs] == ["miss", "hit", "hit"]
    assert [m.get("repeat_of") for m, _ in runs] == [None, "0", "0"]
    assert [m["repetition"] for m, _ in runs] == ["0", "1", "2"]
    assert runs[0][1] == runs[1][1] == runs[2][1]
    # eBB draws its bisections from the seed (= repetition): never a repeat.
    ebb = [sim(capsys, tmp_path, hostfile8, hx_dir, "ebb", rep=r)[0] for r in range(2)]
    assert [m["cache"] for m in ebb] == ["miss", "miss"] and len(calls) == 3
    # --no-cache simulates again.
    meta, _ = sim(capsys, tmp_path, hostfile8, hx_dir, "minife", rep=3, extra=["--no-cache"])
    assert meta["cache"] == "off" and len(calls) == 4


def test_cache_follows_the_inputs(capsys, tmp_path, hostfile8, hx_dir, monkeypatch) -> None:
    work = tmp_path / "work"
    assert sim(capsys, work, hostfile8, hx_dir, "imb-bcast")[0]["cache"] == "miss"
    assert sim(capsys, work, hostfile8, hx_dir, "imb-bcast", rep=1)[0]["cache"] == "hit"
    # another option, another hostfile content, other routing dumps, other code: simulate.
    assert sim(capsys, work, hostfile8, hx_dir, "imb-bcast",
               extra=["--msglog", "0:4"])[0]["cache"] == "miss"
    hosts = tmp_path / "8.txt"
    hosts.write_text("".join(reversed(hostfile8.read_text().splitlines(keepends=True))))
    assert sim(capsys, work, hosts, hx_dir, "imb-bcast")[0]["cache"] == "miss"
    dumps = tmp_path / "dumps"
    shutil.copytree(hx_dir, dumps)
    assert sim(capsys, work, hostfile8, dumps, "imb-bcast")[0]["cache"] == "hit"
    with open(dumps / "guid2lid", "a") as fh:
        fh.write("\n")
    assert sim(capsys, work, hostfile8, dumps, "imb-bcast")[0]["cache"] == "miss"
    monkeypatch.setattr(runcache, "code_version", lambda model=None: "another model version")
    assert sim(capsys, work, hostfile8, hx_dir, "imb-bcast", rep=2)[0]["cache"] == "miss"


def test_concurrent_users_simulate_once(tmp_path) -> None:
    cache = runcache.RunCache(tmp_path)
    calls, results = [], []

    def make() -> str:
        calls.append(1)
        time.sleep(0.3)
        return "# t2hx-simulated: x=1\nbody\n"

    threads = [threading.Thread(target=lambda r=r: results.append(
        (r, *cache.get_or_make("k" * 64, r, make)))) for r in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    missed = [r for r, _, of in results if of is None]
    assert len(missed) == 1 and len({text for _, text, _ in results}) == 1
    assert [of for _, _, of in results if of is not None] == missed * 3
    assert not list(tmp_path.rglob(".*.tmp"))       # atomic: no half-written entry left


def test_study_cv_is_the_measured_one() -> None:
    """The study's cv values are what bench/noise.py measured, never tuned."""
    measured = json.loads((ROOT / "bench" / "results" / "noise.json").read_text())
    study = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "full")
    raw = yaml.safe_load((ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text())["noise"]
    assert raw["source"] == "bench/results/noise.json"
    assert study.noise["cv"]["network"] == measured["cv_group"]["network"]
    assert study.noise["cv"]["app"] == measured["cv_group"]["app"]
    assert len(measured["raw"]["minife_solver_walltime_s"]) >= 5


def test_the_cache_key_covers_what_the_simulator_reaches(tmp_path, monkeypatch) -> None:
    """The model's sources are found by import from the simulator's entry and the benchmark
    modules: a module the simulator reaches (the conf reader, the collective schedules shared
    with placement) counts; post-processing, the command line, the study file's reader (the
    command resolves a case's input) and the placement package do not; the compiled kernel's
    C source does."""
    monkeypatch.setenv("T2HX_WORK_ROOT", str(tmp_path))
    names = {str(p.relative_to(ROOT)) for p in runcache.model_sources()}
    assert {"t2hx/simulation.py", "t2hx/conf.py", "t2hx/doubling.py",
            "t2hx/benchmarks/imb.py", "t2hx/flowsim/kernel/fluidk.c", "t2hx/__init__.py",
            "conf/appmodels.yaml"} <= names
    assert not {n for n in names if n.startswith(("t2hx/post/", "t2hx/commands/", "checks/",
                                                   "t2hx/placement/", "t2hx/study.py"))}
    assert runcache.model_sources() == sorted(ROOT / n for n in names)   # from the cache now
    assert list((tmp_path / "imports").glob("imports-*.json"))
