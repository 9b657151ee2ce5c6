"""A capacity run lasts its whole job (t2hx/flowsim/overhead.py, docs/modelling.md#run-overheads):
the launch law's regressors, the code's set-up and teardown, HPCG's sets for the input's
seconds; the conf's set-up numbers are those bench/overheads.py measured (the launch fit:
tests/test_capacity_whole_job.py)."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from t2hx import ROOT
from t2hx.benchmarks.hpcg import UNTIMED_SETS, run_sets
from t2hx.conf import RUN_OVERHEAD_SETUP
from t2hx.flowsim.appmodel import node_of
from t2hx.flowsim.apps import compute_seconds
from t2hx.flowsim.fluid import Compute
from t2hx.flowsim.overhead import RunOverhead, law_x, tree_levels
from t2hx.jobmix import capacity_jobs
from t2hx.study import load_study

RESULT = json.loads((ROOT / "bench" / "results" / "overheads.json").read_text())


def _bench():
    spec = importlib.util.spec_from_file_location("overheads", ROOT / "bench" / "overheads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("nodes, levels", [(1, 0), (2, 1), (56, 1), (64, 1), (65, 2),
                                           (4096, 2), (4097, 3)])
def test_launch_levels_follow_the_radix_tree(nodes, levels) -> None:
    assert tree_levels(nodes) == levels
    assert RunOverhead(0.5, 0.25, "levels").launch(nodes) == pytest.approx(0.5 + 0.25 * levels)


def test_launch_laws() -> None:
    assert [law_x("log2", n) for n in (1, 2, 56)] == pytest.approx([0, 1, 5.807354922])
    assert [law_x("linear", n) for n in (1, 4)] == [0, 3]
    # A law fitted with a negative slope never makes a larger job start faster than one node.
    assert RunOverhead(0.5, -0.1, "log2").launch(64) == 0.5
    with pytest.raises(ValueError, match="unknown start-up law"):
        law_x("cubic", 2)


def test_conf_defaults_are_the_measured_numbers() -> None:
    """The conf holds what bench/overheads.py measured, and the set-up fractions come out
    of the real outputs again (its parsers on tests/data/post/fixtures/)."""
    assert RUN_OVERHEAD_SETUP == {k: v["fraction"] for k, v in RESULT["setup"].items()}
    again = _bench().setup_fractions()
    assert {k: v["fraction"] for k, v in again.items()} == RUN_OVERHEAD_SETUP
    # Graph500 validates every search: most of a run is outside the timed BFS.
    assert RUN_OVERHEAD_SETUP["graph500"] > 1 > RUN_OVERHEAD_SETUP["comd"]


def test_hpcg_runs_every_set_of_its_seconds() -> None:
    assert run_sets({"seconds": 60}, 10.0) == UNTIMED_SETS + 7
    assert run_sets({"seconds": 60}, 100.0) == UNTIMED_SETS + 1
    assert run_sets({"seconds": 1}, 0.0) == 1


def test_a_capacity_job_starts_with_its_overhead(mini, mini_hyperx) -> None:
    """Each run of a job begins with launch + set-up; without the overhead it is the solve
    alone; HPCG's run is the sets of its 60 s."""
    study, node = load_study(), node_of(mini.nodes)
    spans = {"minife": np.arange(0, 8), "hpcg": np.arange(8, 16), "mupp": np.arange(16, 24)}
    over = RunOverhead(0.4, 0.2, "log2", {"minife": 1.5})
    plain = capacity_jobs(mini_hyperx, spans, study, node, 1)
    timed = capacity_jobs(mini_hyperx, spans, study, node, 1, over)
    for a, b in zip(plain, timed):
        assert isinstance(b.steps[0], Compute) and len(b.steps) == len(a.steps) + 1
        assert compute_seconds(b.steps[1:]) == pytest.approx(compute_seconds(a.steps))
    minife = compute_seconds(plain[0].steps)
    assert timed[0].steps[0].seconds == pytest.approx(0.4 + 0.2 * 3 + 1.5 * minife)
    assert timed[2].steps[0].seconds == pytest.approx(1.0)          # mupp: launch only
    hpcg = compute_seconds(plain[1].steps)
    assert hpcg >= 60 * 0.9 and hpcg < 60 + (UNTIMED_SETS + 1) * hpcg / 3
