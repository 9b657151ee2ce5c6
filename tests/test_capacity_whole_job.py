"""A capacity run lasts its whole job (docs/modelling.md#run-overheads, #capacity-mode): the
launch at its node count from the start-up law fitted to real srun/mpirun start-ups on the
test cluster (log/startup/runs.json), the code's measured set-up and teardown, then the
solve; MuPP and EmDL run the study input's whole IMB invocation; finished runs are counted
as the real capacity driver counts them (a run the window cut does not count)."""

from __future__ import annotations

import importlib.util
import json
import statistics

import numpy as np
import pytest

from t2hx import ROOT, wire
from t2hx.conf import RUN_OVERHEAD_LAUNCH, RUN_OVERHEAD_SETUP
from t2hx.flowsim import imbjobs
from t2hx.flowsim.apps import compute_seconds
from t2hx.flowsim.appmodel import node_of
from t2hx.flowsim.network import open_network
from t2hx.flowsim.overhead import LAWS, RunOverhead
from t2hx.jobmix import capacity_jobs, capacity_text, run_lines
from t2hx.study import load_study

RUNS = json.loads((ROOT / "log" / "startup" / "runs.json").read_text())


def _bench():
    spec = importlib.util.spec_from_file_location("overheads", ROOT / "bench" / "overheads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _measured_median(launcher: str, nodes: int) -> float:
    return statistics.median(r["seconds"] for r in RUNS["runs"]
                             if r["launcher"] == launcher and r["nodes"] == nodes
                             and r["rc"] == 0)


def test_startup_law_is_refitted_from_the_committed_runs() -> None:
    """The conf's launch is its launcher's mechanism law fitted to the committed cluster
    runs (every law's fit is reported beside it), and the bench file holds that same fit."""
    fit = _bench().fit_startup(RUNS["runs"])
    launcher, law = RUN_OVERHEAD_LAUNCH["launcher"], RUN_OVERHEAD_LAUNCH["law"]
    assert fit["chosen"][launcher] == law
    chosen = fit["fits"][launcher][law]
    assert (chosen["a_s"], chosen["b_s"]) == (RUN_OVERHEAD_LAUNCH["a_s"],
                                              RUN_OVERHEAD_LAUNCH["b_s"])
    assert law == _bench().MECHANISM[launcher]
    assert all(other in fit["fits"][launcher] for other in LAWS)
    saved = json.loads((ROOT / "bench" / "results" / "overheads.json").read_text())
    assert saved["startup"] == fit
    # Both launchers at every node count, several times each.
    for how in ("srun", "mpirun"):
        assert all(n >= 5 for n in fit["fits"][how]["runs"].values()), fit["fits"][how]["runs"]
        assert set(fit["fits"][how]["runs"]) == {"1", "2", "3", "4"}


def test_launch_never_falls_below_what_was_measured() -> None:
    """The conf's law at 4..672 nodes is at least the median start-up measured at 4 nodes
    minus the fit's residual there (a law fitted at 1-4 nodes does not shrink a larger job)."""
    over = RunOverhead(RUN_OVERHEAD_LAUNCH["a_s"], RUN_OVERHEAD_LAUNCH["b_s"],
                       RUN_OVERHEAD_LAUNCH["law"], {}, RUN_OVERHEAD_LAUNCH["launcher"])
    fit = _bench().fit_startup(RUNS["runs"])["fits"][over.launcher][over.law]
    at4 = _measured_median(over.launcher, 4) - abs(fit["residuals_s"][-1])
    for nodes in (4, 32, 56, 672):
        assert over.launch(nodes) >= at4 - 1e-9
    assert over.launch(56) >= over.launch(1)


def test_emdl_and_mupp_run_the_study_inputs_invocation() -> None:
    """EmDL's study input (-iter 10, -iter_policy off): per size IMB's estimate (the whole
    count with that policy), a warm-up of one and the count; MuPP's (IMB's defaults):
    the dynamic estimate, a tenth as warm-up, then the count of the 40 MiB rule."""
    study = load_study()
    emdl = study.input("emdl", 56)
    plan = imbjobs.executed(emdl, [2e-5] * 24, imbjobs.EMDL_SLEEP_S, 56)
    assert [n for _, n in plan] == [10 + 1 + 10] * 24
    mupp = study.input("mupp", 56)
    plan = dict(imbjobs.executed(mupp, [4e-6] * 24, 0.0, 56))
    assert plan[0] == 1 + 1000 + 100 + 1000         # one probe, 1000 estimated, warm-up, count
    assert plan[1 << 22] < plan[1 << 16] < plan[0]


@pytest.fixture(scope="module")
def mix(mini, routed, tmp_path_factory):
    """A capacity window on the mini HyperX: miniFE, MuPP and EmDL on 8 nodes each, the
    study's inputs, the conf's overheads and interference term."""
    tmp = tmp_path_factory.mktemp("whole")
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    hosts = mini.hostnames()
    jobs = {}
    for k, app in enumerate(("minife", "mupp", "emdl")):
        path = tmp / f"{app}.hosts"
        path.write_text("".join(h + "\n" for h in hosts[8 * k:8 * k + 8]))
        jobs[app] = {"hostfile": str(path), "nodes": 8, "benchmark": app}
    spec = tmp / "capacity.json"
    spec.write_text(json.dumps(jobs))
    text = capacity_text(str(mini.path), "hyperx", "dfsssp", spec, 300.0, str(tmp / "work"),
                         str(hx), None, "fast")
    net = open_network(mini, "hyperx", "dfsssp", hosts=hosts[:24], dumps=hx)
    return text, net


def test_mupp_and_minife_runs_last_their_whole_job(mix, mini) -> None:
    """Every finished MuPP and miniFE run lasts at least its measured whole job at its
    input: the measured launch law at 8 nodes, the measured set-up share of its solve, and
    the solve itself (its steps' compute, a lower bound of its time alone)."""
    text, net = mix
    over = RunOverhead.of(mini.model)
    lengths = wire.capacity_lengths(text)
    study, node = load_study(), node_of(mini.nodes)
    spans = {"minife": np.arange(0, 8), "mupp": np.arange(8, 16)}
    plain = dict(zip(spans, capacity_jobs(net, spans, study, node, 1)))
    for app in spans:
        solve = compute_seconds(plain[app].steps)
        whole = over.launch(8) + RUN_OVERHEAD_SETUP.get(app, 0.0) * solve + solve
        part = lengths[app]
        assert part["launch"] == pytest.approx(over.launch(8), abs=1e-3)
        assert part["launch"] >= _measured_median("mpirun", 4) * 0.5
        assert part["alone"] >= whole - 2e-3
        took = [float(e.fields["end"]) - float(e.fields["start"])
                for e in wire.capacity_events(text) if e.app == app and e.event == "finished"]
        assert took, f"{app} finished no run in the window"
        assert min(took) >= whole - 2e-3, (app, min(took), whole)
    assert lengths["minife"]["setup"] == pytest.approx(
        RUN_OVERHEAD_SETUP["minife"] * compute_seconds(plain["minife"].steps), abs=1e-3)
    # MuPP's run is the whole sweep: far longer than its launch alone.
    assert lengths["mupp"]["solve"] > 0.05


def test_finished_runs_are_counted_as_the_driver_counts_them(mix) -> None:
    """Each app's last run is cut by the window: recorded as cut, not counted."""
    text, _ = mix
    events = wire.capacity_events(text)
    for app in ("minife", "mupp", "emdl"):
        mine = [e for e in events if e.app == app]
        assert [e.event for e in mine[:-1]] == ["finished"] * (len(mine) - 1)
        assert mine[-1].event == "cut" and float(mine[-1].fields["end"]) == 300.0
        assert [e.run for e in mine] == list(range(len(mine)))
    assert run_lines("a", [10.0, 20.0, 30.0], 25.0) == [
        wire.capacity_line("finished", app="a", run=0, start="0.000", end="10.000") + "\n",
        wire.capacity_line("finished", app="a", run=1, start="10.000", end="20.000") + "\n",
        wire.capacity_line("cut", app="a", run=2, start="20.000", end="25.000") + "\n"]
    # A run that ends at the window's last second finished (the driver's rc 0).
    assert [e.event for e in wire.capacity_events("".join(run_lines("a", [5.0, 10.0], 10.0)))
            ] == ["finished", "finished"]


def test_capacity_figure_names_the_run_length(tmp_path) -> None:
    """Fig 7's table gives runs per app and the run length used, per combo and its parts."""
    import pandas as pd

    from t2hx.post import figures

    case = tmp_path / "capacity" / "sim" / "p" / "capacity_hx-dfsssp-linear_r0"
    case.mkdir(parents=True)
    body = "".join(run_lines("mupp", [4.0, 8.0, 12.0], 13.0) + run_lines("hpl", [9.0], 13.0))
    case.joinpath("rfm_job.out").write_text(
        wire.capacity_length_line(app="mupp", nodes=56, launch="1.5", setup="0.000",
                                  solve="2.5", alone="4.0") + "\n" + body)
    lengths = figures.capacity_lengths(tmp_path)
    results = pd.DataFrame({"unit": ["runs", "runs"], "metric": ["mupp", "hpl"],
                            "combo": ["hx-dfsssp-linear"] * 2, "value": [3.0, 1.0]})
    fig = figures.capacity(results, ["hx-dfsssp-linear"], tmp_path / "fig", lengths)
    row = fig.table.set_index("app").loc["mupp"]
    assert row["hx-dfsssp-linear"] == 3.0 and row["run_s hx-dfsssp-linear"] == 4.0
    assert (row["launch_s"], row["solve_s"]) == (1.5, 2.5)
    assert fig.table.set_index("app").loc["hpl", "run_s hx-dfsssp-linear"] == 9.0
    assert "mupp (4 s)" in fig.data.read_text()
