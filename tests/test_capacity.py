"""Capacity runs: IMB invocations as runs, the fast fluid engine against the
exact one, and the mix scaled to a smaller system."""

import json
import re

import numpy as np
import pytest

from t2hx import benchmarks
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.flowsim import apps, imbjobs
from t2hx.flowsim.fluid import Comm, Compute, Job, run_jobs
from t2hx.flowsim.fluid_fast import run_jobs_fast
from t2hx.flowsim.network import open_network
from t2hx.study import load_study


def test_imb_repetitions_follow_imbs_default_rule() -> None:
    assert [imbjobs.repetitions(s) for s in (0, 1, 1 << 15, 1 << 16, 1 << 22)] == \
        [1000, 1000, 1000, 640, 10]
    assert imbjobs.repetitions(8, 0.1) == 100          # -time 10 caps EmDL's sleepy reps
    assert imbjobs.repetitions(8, 0.1001) == 99
    sweep = imbjobs.sweep((0, 22))
    assert len(sweep) == 24 and sweep[0] == (0, 1000) and sweep[-1] == (1 << 22, 10)


def test_mupp_and_emdl_runs_are_whole_invocations(mini, routed) -> None:
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(),
                       dumps=routed(mini, "hyperx", "dfsssp").run.out_dir)
    a, b = np.arange(0, 8), np.arange(8, 16)
    mupp = imbjobs.mupp_job(net, "mupp", a, msglog=(20, 21))
    # 0 B, 1 MiB, 2 MiB: a size's repetitions are one fused ping step and one pong step.
    assert [(s.size, s.count) for s in mupp.steps] == \
        [(0, 1000), (0, 1000), (1 << 20, 40), (1 << 20, 40), (1 << 21, 20), (1 << 21, 20)]
    one = run_jobs(net, [mupp])[0].ends[-1]
    assert one > 2 * (40 * (1 << 20) + 20 * (1 << 21)) / net.capacity.max()
    emdl = run_jobs(net, [imbjobs.emdl_job(net, "emdl", b, repeat=2, msglog=(0, 1))])[0]
    # 0, 1, 2 bytes: 99 sleepy repetitions each (10 s / a bit over 0.1 s), two invocations.
    assert len(emdl.ends) == 2 and 59.4 <= emdl.ends[-1] < 59.5


def test_fused_repetitions_take_as_long_as_the_repetitions_alone(mini, routed) -> None:
    """Comm.count: max-min rates do not depend on sizes, so k back-to-back repetitions of a
    step alone take k times one, latencies included, in both engines."""
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(),
                       dumps=routed(mini, "hyperx", "dfsssp").run.out_dir)
    src = np.arange(0, 16)
    dst = np.random.default_rng(3).permutation(np.arange(16, 32))
    sizes = np.linspace(1 << 14, 1 << 20, 16).astype(np.int64)
    for engine in (run_jobs, run_jobs_fast):
        apart = engine(net, [Job("a", [Comm(src, dst, sizes)] * 7)])[0].ends[-1]
        fused = engine(net, [Job("f", [Comm(src, dst, sizes, 7)])])[0].ends[-1]
        assert abs(fused - apart) <= 1e-9 * apart
    small = [Comm(src, dst, 64, 5)]                   # eager: a timer, five latencies
    one = run_jobs(net, [Job("s", [Comm(src, dst, 64)])])[0].ends[-1]
    assert run_jobs(net, [Job("s", small)])[0].ends[-1] == pytest.approx(5 * one)


def _mix(net, spans: dict[str, np.ndarray]) -> list[Job]:
    # Compute 20x faster than the reference node: several runs fit a short window.
    jobs = [apps.app_job(net, benchmarks.app(app), r, 20.0, 1000) for app, r in spans.items()
            if app not in ("mupp", "emdl")]
    jobs.append(imbjobs.mupp_job(net, "mupp", spans["mupp"], 1000, msglog=(12, 16)))
    jobs.append(Job("shifts", [Compute(1e-3)] + [
        Comm(spans["emdl"], np.roll(spans["emdl"], k), 1 << 18) for k in (1, 2)], 1000))
    return jobs


def test_fast_engine_agrees_with_exact_engine(mini, routed) -> None:
    net = open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(),
                       dumps=routed(mini, "hyperx", "dfsssp").run.out_dir)
    order = np.random.default_rng(3).permutation(64)
    names = ["amg", "minife", "milc", "hpcg", "mupp", "emdl"]
    spans = {app: order[8 * i:8 * i + 8] for i, app in enumerate(names)}
    window = 0.5
    exact = run_jobs(net, _mix(net, spans), until=window)
    fast = run_jobs_fast(net, _mix(net, spans), until=window)
    for e, f in zip(exact, fast):
        assert len(e.ends) > 0 and abs(len(e.ends) - len(f.ends)) <= 1, e.name
        k = min(len(e.ends), len(f.ends))
        np.testing.assert_allclose(f.ends[:k], e.ends[:k], rtol=0.02, err_msg=e.name)
    # The interference is real: "shifts" alone runs more iterations than in the mix.
    alone = run_jobs_fast(net, _mix(net, spans)[-1:], until=window)[0]
    assert len(alone.ends) > len(fast[-1].ends)


def test_mix_scales_to_the_usable_nodes() -> None:
    study = load_study()
    full = study.capacity_apps(None)
    assert study.capacity_apps(672) == full and sum(full.values()) == 664
    small = study.capacity_apps(238)
    assert list(small) == list(full) and sum(small.values()) <= 238
    for app, n in small.items():
        pow2 = study._pow2(app)
        assert n >= 2 and (n & (n - 1) == 0 if pow2 else n % 2 == 0), (app, n)
        assert n <= full[app] * 238 / 664
    assert set(study.capacity_apps(10).values()) == {2}      # never below min_nodes


SYSTEM_240 = """\
name: port240
description: a 240-node HyperX written by tests/test_capacity.py
nodes: {hostname: "p{rack}n{slot:02d}", racks: 10, per_rack: 24, cores: 2, down: []}
planes:
  hyperx:
    hca: mlx4_0
    topology: {kind: hyperx, dims: [6, 5], nodes_per_switch: 8, switch_ports: 18}
    opensm: {routing: [dfsssp], lmc: 0}
"""


def test_capacity_runs_on_a_240_node_system(tmp_path, capsys) -> None:
    conf = tmp_path / "port240.yaml"
    conf.write_text(SYSTEM_240)
    system = load_system(conf)
    usable = len(system.hostnames())
    apps = load_study().capacity_apps(usable)
    need = sum(apps.values())
    assert main(["-q", "hostfiles", "--system", str(conf), "--out", str(tmp_path / "hf"),
                 "--placements", "linear", "--counts", str(need)]) == 0
    order = (tmp_path / "hf" / "port240" / "linear" / f"{need}.txt").read_text().split()
    jobs, at = {}, 0
    for app, n in apps.items():
        path = tmp_path / f"{app}.hosts"
        path.write_text("".join(h + "\n" for h in order[at:at + n]))
        jobs[app] = {"hostfile": str(path), "nodes": n, "benchmark": app}
        at += n
    spec = tmp_path / "capacity.json"
    spec.write_text(json.dumps(jobs))
    assert main(["-q", "campaign", "simulate-capacity", "--system", str(conf), "--plane",
                 "hyperx", "--routing", "dfsssp", "--capacity", str(spec), "--window", "4",
                 "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("T2HX capacity window closed")
    done = {a for a, _ in re.findall(r"^T2HX capacity finished: app=(\S+) run=(\d+) ",
                                     out, re.M)}
    assert done and done <= set(apps), done


def test_report_states_the_capacity_window_and_why() -> None:
    from t2hx.post.report import capacity_paragraph

    text = capacity_paragraph([{"window_s": 30.0, "nodes": 664, "note": "Too slow for 3 h."},
                               {"window_s": 30.0, "nodes": 664, "note": "Too slow for 3 h."}])
    assert text.startswith("Capacity window: 30 s per combo") and "664 nodes" in text
    assert text.endswith("Too slow for 3 h.") and text.count("Too slow") == 1
    quick = load_study(profile="quick").capacity
    assert quick["window"] == "1h" and "3 h" in quick["note"]
