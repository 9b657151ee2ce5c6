"""The fluid engines' inter-job term (t2hx/flowsim/interference.py): its constants are the
fit of the committed packet-engine runs (bench/results/interference.json), exposure says
which jobs share links, and the correction gives each job of a fluid mix the fitted
slowdown."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from t2hx import conf
from t2hx.flowsim import interference
from t2hx.flowsim.fluid import Comm, Compute, Job, run_jobs
from t2hx.flowsim.packetjobs import mean_step, window_of

from tests.test_packetsim import MIB, switch_of

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "bench" / "results" / "interference.json"


def bench():
    spec = importlib.util.spec_from_file_location("bench_interference",
                                                  ROOT / "bench" / "interference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_conf_constants_are_the_fit_of_the_committed_packet_runs() -> None:
    result = json.loads(RESULT.read_text())
    gain, expo = bench().fit(result["per_row"])
    assert (conf.FIT_GAIN, conf.FIT_EXPOSURE) == pytest.approx((gain, expo), abs=5e-5)
    assert result["fit"] == {"fluid_gain": conf.FIT_GAIN, "exposure": conf.FIT_EXPOSURE}
    # the error is measured on mixes the fit did not see, beside the fluid engine's own
    for name in ("term", "fluid"):
        assert set(result["heldout"][name]) == {"median", "p90", "worst", "n"}
    assert result["heldout"]["term"]["n"] == result["rows"] >= 50


def jobs_on(ranks_a: list[int], ranks_b: list[int]) -> list[Job]:
    def steps(r: list[int]) -> list:
        a = np.array(r)
        return [Comm(a, np.roll(a, 1), MIB), Compute(1e-4)]
    return [Job("a", steps(ranks_a), 30), Job("b", steps(ranks_b), 30)]


def test_exposure_is_zero_on_disjoint_switches_and_not_when_jobs_share_links(mini_hyperx) -> None:
    sw = switch_of(mini_hyperx)
    first = [r for r in range(mini_hyperx.ranks) if sw[r] == sw[0]][:4]
    last = [r for r in range(mini_hyperx.ranks) if sw[r] == sw[-1]][:4]
    alone = np.array([1e-3, 1e-3])
    assert interference.exposure(mini_hyperx, jobs_on(first, last), alone).tolist() == [0.0, 0.0]
    spread = list(range(0, 64, 8))                     # every job on many switches
    x = interference.exposure(mini_hyperx, jobs_on(spread, [r + 1 for r in spread]), alone)
    assert (x > 0).all() and (x <= 1).all()


def test_correction_gives_each_job_the_fitted_slowdown(mini_hyperx) -> None:
    spread = list(range(0, 64, 8))
    jobs = run_jobs(mini_hyperx, jobs_on(spread, [r + 1 for r in spread]))
    window = window_of(jobs)
    alone = np.array([mean_step(run_jobs(mini_hyperx, [j])[0], np.inf)
                      for j in jobs_on(spread, [r + 1 for r in spread])])
    fluid = np.array([mean_step(j, window) for j in jobs]) / alone
    term = interference.Term(0.5, 2.0)
    x = interference.exposure(mini_hyperx, jobs, alone)
    before = [list(j.ends) for j in jobs]
    assert interference.correct(mini_hyperx, jobs, alone, np.inf, None).tolist() == [1.0, 1.0]
    assert [j.ends for j in jobs] == before
    factors = interference.correct(mini_hyperx, jobs, alone, window, term)
    got = np.array([mean_step(j, window * f) for j, f in zip(jobs, factors)]) / alone
    assert got == pytest.approx(term.slowdown(fluid, x), rel=1e-9)
    assert not np.allclose(factors, 1.0)


def test_the_term_never_speeds_a_job_up_and_can_be_switched_off() -> None:
    term = interference.Term(0.1, -5.0)
    assert term.slowdown(np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist() == \
        pytest.approx([1.0, 1.1])
    model = {"interference": {"mode": "off", "fluid_gain": 1.0, "exposure": 0.0}}
    assert interference.Term.of(model) is None


def test_a_job_made_faster_finishes_the_iterations_its_window_cut() -> None:
    job = Job("a", [], repeat=100, start=1.0, ends=[2.0, 3.0, 4.0, 5.0])
    interference.stretch(job, 0.5, until=5.0)
    assert job.ends == pytest.approx([1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])
    job = Job("b", [], repeat=100, ends=[1.0, 2.0])
    interference.stretch(job, 2.0, until=3.0)
    assert job.ends == [2.0, 4.0]          # slower: the caller drops what passes the window
