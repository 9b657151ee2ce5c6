"""Calibrated application models (t2hx/flowsim/appmodel.py, conf/appmodels.yaml): they predict
what pml_monitoring measured in our own runs, and the absolutes they print stay physical."""

from __future__ import annotations

import dataclasses
import json

import pytest

from t2hx import benchmarks, calibration
from t2hx.benchmarks import graph500, hpl, milc, ntchem
from t2hx.cli import main
from t2hx.errors import WorkloadError
from t2hx.flowsim import apps, appmodel
from t2hx.flowsim.network import open_network
from t2hx.grids import grid4
from t2hx.post.parsers import parse_text
from t2hx.study import load_study

CODES = calibration.codes()
STUDY = load_study()


def test_every_calibrated_code_has_a_model_that_can_miss():
    """A prediction must be able to fail: at least two multi-rank points to fit, one more to
    predict."""
    assert set(CODES) <= set(appmodel.codes()), "fix: add the code to conf/appmodels.yaml"
    for code in CODES:
        multi = [r["ranks"] for r in appmodel.model(benchmarks.app(code)).runs()]
        assert len(multi) >= 3, f"{code}: fix: t2hx calibrate {code} --ranks 1,2,4,8"


@pytest.mark.parametrize("code", CODES)
def test_model_predicts_the_largest_measured_rank_count(code):
    """Fitted on the smaller rank counts, the model's per-rank bytes at the largest one are
    within 10 % of what pml_monitoring measured there."""
    n, predicted, measured = appmodel.predict_largest(benchmarks.app(code))
    assert measured > 0
    assert predicted == pytest.approx(measured, rel=0.10), (code, n)


@pytest.mark.parametrize("code, wrong_pattern", [("swfft", "alltoall"), ("ntchem", "alltoall"),
                                                  ("milc", "alltoall"), ("npb-mg", "alltoall"),
                                                  ("npb-lu", "halo3d")])
def test_a_wrong_pattern_misses(code, wrong_pattern):
    """The check discriminates: SWFFT or NTChem read as a plain all-to-all (not SWFFT's pencil
    redistributions, not RI-MP2's half ring; MILC too, not its halo), miss the 8-rank volume
    by more than 10 %."""
    real = appmodel.model(benchmarks.app(code))
    wrong = dataclasses.replace(real, terms=tuple(
        dataclasses.replace(t, pattern=wrong_pattern) if t.kind == "p2p" else t
        for t in real.terms))
    n_max = max(r["ranks"] for r in real.calibration["runs"])
    run = next(r for r in real.calibration["runs"] if r["ranks"] == n_max)
    measured = appmodel.measured_bytes(run, "all")
    predicted = sum(wrong.bytes_per_rank(n_max, real.calibration["input"],
                                         wrong.fit(below=n_max)).values())
    assert abs(predicted / measured - 1) > 0.10


def test_patterns_follow_the_process_grids():
    assert [appmodel.halo_faces(n) for n in (2, 4, 8)] == [1, 2, 3]
    assert appmodel.pencil_moves(8) == pytest.approx(5.0)         # 4/2 + 4/2 + 2/2
    assert appmodel.staged_halo(8, 5) == 25 + 35 + 49
    assert appmodel.hpl_panel(8) == pytest.approx(3 / 8)           # P x Q = 2 x 4
    # MILC: periodic, both faces of each split axis; all four split from 16 ranks on.
    assert [grid4(n) for n in (2, 8, 32)] == [(2, 1, 1, 1), (2, 2, 2, 1), (4, 2, 2, 2)]
    assert [appmodel.halo4d_faces(n) for n in (2, 4, 8, 16, 32)] == [2, 4, 6, 8, 8]


def test_compute_scales_with_the_conf_node():
    model, inp = appmodel.model(hpl.APP), STUDY.input("hpl", 56)
    slow = model.compute_seconds(56, inp, {"peak_gflops": 100.0, "mem_gbs": 64.0})
    fast = model.compute_seconds(56, inp, {"peak_gflops": 200.0, "mem_gbs": 64.0})
    assert slow == pytest.approx(2 * fast)
    assert appmodel.node_of({"peak_gflops": 10.0}) == {
        "peak_gflops": 10.0, "mem_gbs": appmodel.default_node()["mem_gbs"]}


@pytest.fixture(scope="module")
def net(mini, routed):
    hx = routed(mini, "hyperx", "dfsssp").run.out_dir
    return open_network(mini, "hyperx", "dfsssp", hosts=mini.hostnames()[:16], dumps=hx)


def test_hpl_uses_the_input_n_and_stays_below_peak(net):
    node = appmodel.default_node()
    for gib in (1.0, 0.25):             # the study's input and its override from 224 nodes
        inp = {"gib_per_rank": gib, "nb": 192}
        res = apps.run_app(net, hpl.APP, inp=inp, node=node)
        text = hpl.render(hpl.output(res, 16))
        row = text.splitlines()[-1].split()
        assert int(row[1]) == hpl.hpl_n(inp, 16)
        assert 0 < float(row[-1]) < node["peak_gflops"] * 16
    small = apps.run_app(net, hpl.APP, inp={"gib_per_rank": 0.25, "nb": 192}, node=node)
    large = apps.run_app(net, hpl.APP, inp={"gib_per_rank": 1.0, "nb": 192}, node=node)
    assert large.seconds > 4 * small.seconds        # N^3 work: 8x for 4x the memory


def test_graph500_prints_the_scale_the_real_run_gets(net):
    inp = STUDY.input("graph500", 16)
    text = graph500.render(graph500.output(apps.run_app(net, graph500.APP, inp=inp), 16))
    assert f"SCALE:                          {graph500.graph500_scale(inp, 16)}\n" in text
    from checks.x500 import Graph500

    launch = type("L", (), {"input": inp, "ranks": 16})()
    assert Graph500.command(launch)[1][0] == str(graph500.graph500_scale(inp, 16))


def test_apps_communicate_what_the_model_says(net):
    """The simulated run carries the model's per-rank bytes (phases built from the terms)."""
    for code in ("amg", "swfft", "hpl", "qball", "mvmc", "ntchem", "milc"):
        model, inp = appmodel.model(benchmarks.app(code)), STUDY.input(code, 16)
        want = sum(model.term_bytes(16, inp))
        phases = apps.iteration_phases(benchmarks.app(code), 16, 1.0, net.loggp.reduce_rate,
                                       inp)
        sent = sum(float(p.size.sum()) for p in phases) / 16 * model.iterations
        assert sent == pytest.approx(want, rel=0.05), code


def test_simulate_takes_the_input_and_rejects_bad_json(mini_simulate, capsys):
    base = [*mini_simulate, "--benchmark", "hpl"]
    assert main([*base, "--input", json.dumps({"gib_per_rank": 0.25, "nb": 192})]) == 0
    rec = parse_text("hpl", capsys.readouterr().out)
    assert rec and int(rec[0]["N"]) == hpl.hpl_n({"gib_per_rank": 0.25, "nb": 192}, 8)
    assert main([*base, "--input", "{nope"]) != 0
    assert "--input" in capsys.readouterr().err


def test_ntchem_scales_from_benzene_to_taxol_by_its_basis():
    """Strong scaling of one molecule; taxol's RI-MP2 parts scale from c6h6's by
    nbf^2 naux, nocc^2 nvir^2 naux and nocc nvir naux (docs/modelling.md#ntchem), weighted
    by where the calibration's one-rank run spent its time."""
    c6h6, taxol = {"case": "c6h6"}, STUDY.input("ntchem", 56)
    code = benchmarks.app("ntchem")
    assert code.work(c6h6, 1) == pytest.approx(1.0)
    ratios = {"integrals": (1123 / 114) ** 2 * 4186 / 372,
              "pairs": (226 * 897) ** 2 * 4186 / ((21 * 93) ** 2 * 372),
              "tensor": 226 * 897 * 4186 / (21 * 93 * 372)}
    share = ntchem.NTCHEM_SHARES
    assert code.work(taxol, 1) == pytest.approx(sum(share[p] * ratios[p] for p in ratios))
    assert code.work(taxol, 56) == pytest.approx(code.work(taxol, 1) / 56)
    measured = ntchem.ntchem_shares(appmodel.model(code).one_rank_run()["phases"])
    for part, value in measured.items():
        assert share[part] == pytest.approx(value, abs=0.005), f"fix: NTCHEM_SHARES[{part!r}]"
    with pytest.raises(WorkloadError, match="unknown NTChem case 'benzene'.*fix: use one of"):
        code.work({"case": "benzene"}, 2)


def test_milc_weak_scales_its_lattice():
    """Every rank keeps lattice_per_rank^4 sites; the MD steps scale work and traffic."""
    inp = STUDY.input("milc", 32)
    code = benchmarks.app("milc")
    assert milc.milc_lattice(inp, 32) == (64, 32, 32, 32)
    assert code.work(inp, 32) == code.work(inp, 2) == 16.0 ** 4 * 10
    longer = dict(inp, trajecs=2)
    assert code.measure("face", longer, 8) == 2 * code.measure("face", inp, 8)
