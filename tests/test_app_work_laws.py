"""The app models scale like the apps (docs/modelling.md#application-models): each code's
per-rank share of its input follows the study's ``scaling`` rule (seed 000 Table 2: weak =
the input per process is held, strong = one input split over the processes), its per-rank
work never falls faster than that share, and its modelled compute follows the work and the
conf node's rates. The rule per code is the study's data, not this file's."""

from __future__ import annotations

import pytest

from t2hx import benchmarks
from t2hx.benchmarks import mvmc
from t2hx.errors import ConfError
from t2hx.flowsim import appmodel
from t2hx.study import load_study

STUDY = load_study(profile="full")
NODE = appmodel.system_node(STUDY.system)
# Integer decompositions move a weak code's per-rank share a little (SWFFT's global grid is a
# multiple of P: 416^3 points at 32 ranks, 640^3 at 128, 9 % less per rank; miniFE's edge is
# a rounded cube root); strong-scaling a weak code moves it 16x over the counts below.
WEAK_SPREAD = 0.10
EXACT = 1e-9
MODELLED = [name for name, bench in STUDY.catalog.items()
            if name in appmodel.codes() and bench["scaling"] is not None]


def counts(name: str) -> list[int]:
    """Three node counts of the code's ladder, 4x apart and ending at its largest: they
    cross every `scale:` override of seed 000's study (FFVC at 128, HPL at 224, qb@ll at
    672) and avoid the ranks mVMC leaves in an incomplete group (test below)."""
    ladder = STUDY.nodes(name)
    return ladder[-5::2]


def test_every_app_of_the_study_states_its_rule():
    """Seed 000 Table 2 gives a rule for every proxy app and x500 code the study runs."""
    apps = [n for n, b in STUDY.catalog.items() if b["title"] and n in appmodel.codes()]
    assert len(apps) == 12
    assert sorted(MODELLED) == sorted(apps)
    assert [n for n in MODELLED if STUDY.catalog[n]["scaling"] == "strong"] == ["ntchem"]


@pytest.mark.parametrize("name", MODELLED)
def test_share_follows_the_input_rule(name):
    """At one input, a rank's share is the same at every count (weak) or falls as 1/n
    (strong)."""
    app, ns = benchmarks.app(name), counts(name)
    assert len(ns) == 3
    for n in ns:
        inp = STUDY.input(name, n)
        base = app.share(inp, ns[0])
        for m in ns:
            ratio = app.share(inp, m) / base
            if STUDY.catalog[name]["scaling"] == "weak":
                assert ratio == pytest.approx(1.0, rel=WEAK_SPREAD), (name, n, m)
            else:
                assert ratio == pytest.approx(ns[0] / m, rel=EXACT), (name, n, m)


@pytest.mark.parametrize("name", MODELLED)
def test_work_never_falls_faster_than_the_share(name):
    """A rank's work is its share times the code's cost per unit of it (HPL's N, an FFT's
    log N, qb@ll's plane waves per state), which never falls as the problem grows: a weak
    code's work does not strong-scale, a strong code's falls as 1/n; and the modelled
    compute on the conf node is that work's."""
    app, model, ns = benchmarks.app(name), appmodel.model(benchmarks.app(name)), counts(name)
    for n in ns:
        inp = STUDY.input(name, n)
        for m in ns[1:]:
            cost = (app.work(inp, m) / app.share(inp, m)) / (app.work(inp, ns[0])
                                                              / app.share(inp, ns[0]))
            assert cost >= 1 - EXACT, (name, m)
            if STUDY.catalog[name]["scaling"] == "strong":
                assert cost == pytest.approx(1.0, rel=EXACT), (name, m)
            compute = model.compute_seconds(m, inp, NODE) / model.compute_seconds(ns[0], inp,
                                                                                  NODE)
            assert compute == pytest.approx(app.work(inp, m) / app.work(inp, ns[0]),
                                            rel=EXACT), (name, m)


@pytest.mark.parametrize("name", [n for n in MODELLED if STUDY.catalog[n]["scale"]])
def test_the_starred_inputs_shrink_where_the_study_says(name):
    """Table 2's "*": from a rule's node count on, the study's overridden input lowers the
    share and the compute; below it the input is the base one."""
    app, model, ns = benchmarks.app(name), appmodel.model(benchmarks.app(name)), counts(name)
    base = STUDY.catalog[name]["input"]
    start = min(rule["from"] for rule in STUDY.catalog[name]["scale"])
    assert any(n >= start for n in ns) and any(n < start for n in ns)
    for n in ns:
        inp = STUDY.input(name, n)
        if n < start:
            assert inp == base
            continue
        assert app.share(inp, n) < app.share(base, n), (name, n)
        assert model.compute_seconds(n, inp, NODE) < model.compute_seconds(n, base, NODE)


def test_a_strong_scaled_mvmc_would_fail():
    """The check can miss: mVMC's former law (SR steps x samples / P) strong-scales."""
    inp, ns = STUDY.input("mvmc", 672), counts("mvmc")
    old = [mvmc.mvmc_param(inp, "NSROptItrStep") * mvmc.mvmc_param(inp, "NVMCSample") / n
           for n in ns]
    assert old[-1] / old[0] != pytest.approx(1.0, rel=WEAK_SPREAD)


def test_mvmc_groups_carry_the_imbalance_of_the_real_code():
    """mVMC runs one Markov chain per group of NSplitSize ranks (vmcmain.c): with 7 or 14
    ranks the last group has 3 or 2, whose ranks split the chain fewer ways; whole groups
    from 28 ranks on give every count the same per-rank work."""
    app, inp = benchmarks.app("mvmc"), STUDY.input("mvmc", 7)
    size = mvmc.mvmc_param(inp, "NSplitSize")
    full = app.work(inp, 28)
    for n in STUDY.nodes("mvmc"):
        smallest = n % size or size
        assert app.work(inp, n) == pytest.approx(full * size / smallest, rel=EXACT), n
    assert app.work(inp, 1) == pytest.approx(size * full)     # one rank runs a whole chain


@pytest.mark.parametrize("name", MODELLED)
def test_compute_scales_with_the_conf_nodes_rate_for_its_bound(name):
    """Compute comes from the conf node's rate for the code's bound (peak_gflops or
    mem_gbs), not from this machine's: doubling that rate halves it, the other rate does
    not move it."""
    model = appmodel.model(benchmarks.app(name))
    n = counts(name)[0]
    inp = STUDY.input(name, n)
    key = appmodel.NODE_RATE[model.bound]
    other = next(k for k in appmodel.NODE_RATE.values() if k != key)
    fast = {key: 2 * NODE[key], other: NODE[other]}
    busy = {key: NODE[key], other: 2 * NODE[other]}
    assert model.compute_seconds(n, inp, fast) == pytest.approx(
        model.compute_seconds(n, inp, NODE) / 2)
    assert model.compute_seconds(n, inp, busy) == pytest.approx(
        model.compute_seconds(n, inp, NODE))


def test_the_study_node_is_the_papers():
    """Seed 000's system conf gives its nodes' rates (2 x Xeon X5670), so no default and no
    rate of this machine stands in for them."""
    from t2hx.conf import load_system, system_path

    nodes = load_system(system_path(STUDY.system)).nodes
    assert {k: nodes[k] for k in appmodel.NODE_RATE.values()} == {
        k: NODE[k] for k in appmodel.NODE_RATE.values()}
    assert nodes["peak_gflops"] == pytest.approx(nodes["cores"] * 2.93 * 4, rel=1e-3)
    here = appmodel.machine()
    assert NODE["peak_gflops"] != here["flops"] and NODE["mem_gbs"] != here["memory"]


def test_a_scaling_rule_outside_table_2_is_refused(tmp_path):
    text = STUDY.path.read_text().replace("scaling: strong", "scaling: strongish", 1)
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ConfError, match="scaling"):
        load_study(bad)
