"""The fast fluid engine (compiled event loop, t2hx/flowsim/kernel/fluidk.c) against the
exact engine (t2hx/flowsim/fluid.py, the reference) on real OpenSM routes: finished runs
within ±1 per job and completion times within 2 % (the agreement rule of docs/modelling.md#capacity-mode)."""

import numpy as np

from t2hx.flowsim import apps, imbjobs
from t2hx.flowsim.fluid import Comm, Compute, Job, State, run_jobs
from t2hx.flowsim.fluid_fast import _Flat, _fused, run_jobs_fast
from t2hx.flowsim.network import open_network


def _agree(exact: list[Job], fast: list[Job]) -> None:
    for e, f in zip(exact, fast):
        assert len(e.ends) > 0 and abs(len(e.ends) - len(f.ends)) <= 1, e.name
        k = min(len(e.ends), len(f.ends))
        np.testing.assert_allclose(f.ends[:k], e.ends[:k], rtol=0.02, err_msg=e.name)


def _net(mini, routed):
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames(),
                        dumps=routed(mini, "hyperx", "dfsssp").run.out_dir)


def _mix(net, spans: dict[str, np.ndarray], scale: float) -> list[Job]:
    from t2hx import benchmarks

    jobs = [apps.app_job(net, benchmarks.app(app), r, scale, 1000) for app, r in spans.items()
            if app not in ("mupp", "shifts")]
    jobs.append(imbjobs.mupp_job(net, "mupp", spans["mupp"], 1000, msglog=(12, 17)))
    s = spans["shifts"]
    jobs.append(Job("shifts", [Compute(2e-4)] + [Comm(s, np.roll(s, k), 1 << 19)
                                                  for k in (1, 2, 3)], 1000, start=1e-3))
    return jobs


def test_fast_engine_agrees_with_exact_engine_when_communication_dominates(mini,
                                                                           routed) -> None:
    net = _net(mini, routed)
    order = np.random.default_rng(11).permutation(64)
    names = ["amg", "milc", "swfft", "minife", "mupp", "shifts"]
    spans = {app: order[8 * i:8 * i + 8] for i, app in enumerate(names)}
    window = 0.4
    exact = run_jobs(net, _mix(net, spans, 50.0), until=window)
    stats: dict = {}
    fast = run_jobs_fast(net, _mix(net, spans, 50.0), until=window, stats=stats)
    _agree(exact, fast)
    # The kernel did solve, re-solve partially and reuse rate solutions (both caches).
    assert stats["misses"] > 0 and stats["hits"] + stats["set_hits"] > stats["misses"]
    assert stats["partial"] > 0
    # The room for end times is never short (a short one would simulate the window twice).
    probe = State(net, [])
    flat = _Flat(probe, [_fused(probe, job) for job in _mix(net, spans, 50.0)])
    bounds = [flat.runs_bound(j, window, float(net.capacity.max())) for j in range(len(fast))]
    assert all(len(f.ends) <= b for f, b in zip(fast, bounds))
    assert any(len(f.ends) > b / 4 for f, b in zip(fast, bounds))


def test_every_message_fluid_and_shared_links(mini, routed) -> None:
    """small_bytes=0: every message enters the sharing; all jobs cross the same nodes'
    neighbourhood, so components merge and split as jobs start and end steps."""
    net = _net(mini, routed)
    a, b, c = np.arange(0, 16), np.arange(16, 32), np.arange(32, 64)

    def jobs() -> list[Job]:
        return [Job("a", [Comm(a, b, 1 << 16), Compute(1e-4)], 200),
                Job("b", [Comm(b, np.roll(c, 3)[:16], 3 << 15), Compute(3e-5)], 200),
                Job("c", [Comm(c, np.roll(c, 7), 1 << 12), Compute(2e-5),
                          Comm(c, a[np.arange(32) % 16], 5000)], 200, start=2e-4)]
    window = 0.05
    exact = run_jobs(net, jobs(), until=window, small_bytes=0)
    fast = run_jobs_fast(net, jobs(), until=window, small_bytes=0)
    _agree(exact, fast)


def test_partial_re_solves_equal_full_solves(mini, routed) -> None:
    """The kernel re-solves only the flows at or above the slowest ended flow's rate (and
    guesses a level for new flows, then checks it). verify=True compares every partial
    re-solve with a full max-min solve of all flows in flight: they must agree to rounding,
    and the partial path must have carried most solves."""
    net = _net(mini, routed)
    rng = np.random.default_rng(5)
    jobs = []
    for k in range(6):
        r = rng.permutation(64)[:16]
        steps: list = []
        for s in range(4):
            steps += [Comm(r, np.roll(r, s + 1), rng.integers(1 << 14, 1 << 20, 16)),
                      Compute(float(rng.uniform(1e-5, 1e-3)))]
        jobs.append(Job(f"j{k}", steps, 300, start=float(rng.uniform(0, 1e-3))))
    stats: dict = {}
    run_jobs_fast(net, jobs, until=0.05, small_bytes=0, stats=stats, verify=True)
    assert stats["partial"] > stats["misses"] > 0
    assert stats["verify_max_rel_diff"] < 1e-12


def test_two_flows_share_one_link_exactly(mini, routed) -> None:
    """Two messages from one node share its injection link: each gets half the rate, so the
    step takes twice the bytes at full rate, plus the message latency."""
    net = _net(mini, routed)
    job = Job("pair", [Comm(np.array([0, 0]), np.array([9, 17]), 1 << 24)], 1)
    end = run_jobs_fast(net, [job])[0].ends[0]
    ref = run_jobs(net, [Job("pair", job.steps, 1)])[0].ends[0]
    bytes_at_full_rate = 2 * (1 << 24) / net.capacity.max()
    assert bytes_at_full_rate <= end < bytes_at_full_rate * 1.01
    assert abs(end - ref) <= 1e-9 * ref
