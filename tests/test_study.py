"""conf/studies/hyperx-vs-fattree-sc19.yaml: the five combos, ladders, inputs per scale, capacity mix, profiles, and
one-line errors for bad files."""

from __future__ import annotations

import pytest
import yaml

from t2hx import ROOT
from t2hx.conf import load_system, system_path
from t2hx.errors import ConfError
from t2hx.study import load_study, seconds

STUDY = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()


RAW = yaml.safe_load(STUDY)


def enumerated_cases(raw: dict, max_nodes: int) -> int:
    """Capability cases counted from the raw YAML, one by one (independent of Study)."""
    count = 0
    for bench in raw["benchmarks"].values():
        for _variant in bench.get("variants") or [""]:
            for _combo in raw["combos"]:
                for n in raw["ladders"][bench["ladder"]]:
                    if n <= max_nodes and n not in bench.get("exclude", []):
                        count += raw["repetitions"]
    for extra in raw.get("extra_combos", []):
        for name, nodes in extra["only"].items():
            variants = raw["benchmarks"][name].get("variants") or [""]
            count += len(variants) * sum(raw["repetitions"] for n in nodes if n <= max_nodes)
    return count + len(raw["combos"]) * raw["capacity"]["repetitions"]


def test_study_reads_the_file():
    """Every value comes from the file as written; counts from its own ladders and combos."""
    s = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "full")
    system = load_system(system_path(s.system))
    nodes = system.nodes["racks"] * system.nodes["per_rack"]
    assert [c.name for c in s.combos] == [c["name"] for c in RAW["combos"]]
    for combo in RAW["combos"]:
        assert s.combo(combo["name"]).routing == combo["routing"]
        assert combo["plane"] in system.planes               # combos name planes of the system
    assert s.baseline in [c.name for c in s.combos]
    assert s.ladders == RAW["ladders"] and s.repetitions == RAW["repetitions"]
    assert seconds(s.walltime) > 0
    assert set(s.benchmarks) == set(RAW["benchmarks"])
    for name, bench in RAW["benchmarks"].items():
        assert s.variants(name) == (bench.get("variants") or [""])
        assert not set(bench.get("exclude", [])) & set(s.nodes(name))
        for rule in bench.get("scale", []):     # overrides apply from their node count on
            below, at = s.input(name, rule["from"] - 1), s.input(name, rule["from"])
            assert below == bench["input"] and at == {**bench["input"], **rule["set"]}
    assert s.capacity["apps"] == RAW["capacity"]["apps"]
    assert s.capacity_nodes() == sum(RAW["capacity"]["apps"].values()) <= nodes
    assert s.all_cases(nodes) == enumerated_cases(RAW, nodes)
    small = min(n for ladder in s.ladders.values() for n in ladder)
    assert s.all_cases(small) < s.all_cases(nodes)           # ladders clip to the system


def test_quick_profile_is_a_subset():
    full = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "full")
    quick = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "quick")
    prof = RAW["profiles"]["quick"]
    system = load_system(system_path(full.system))
    nodes = system.nodes["racks"] * system.nodes["per_rack"]
    assert quick.combos == full.combos
    assert list(quick.benchmarks) == prof.get("benchmarks", list(full.benchmarks))
    assert set(quick.benchmarks) <= set(full.benchmarks)
    assert quick.repetitions == prof["repetitions"]
    assert quick.ladders == {**full.ladders, **prof["ladders"]}
    assert quick.capacity["apps"] == full.capacity["apps"]
    assert quick.capacity["window"] == prof["capacity"]["window"]
    # Capacity apps left out of the quick capability runs keep their inputs.
    for app in set(full.capacity["apps"]) - set(quick.benchmarks):
        assert all(quick.input(app, n) == full.input(app, n) for n in full.nodes(app))
    for name, subset in prof.get("variants", {}).items():
        assert quick.variants(name) == subset
    for name in quick.benchmarks:
        rungs = [n for n in quick.nodes(name) if n <= nodes]
        extra = sum(len(c.only.get(name, [])) for c in quick.extra_combos)
        assert quick.cases(name, nodes) == len(quick.variants(name)) * (
            len(quick.combos) * len(rungs) + extra) * quick.repetitions
    assert quick.all_cases(nodes) < full.all_cases(nodes)


def test_quick_profile_covers_every_benchmark_and_collective():
    """Every registry benchmark the study runs, every IMB collective, each
    at one scale at least on the reference system, all combos (lists from the registry)."""
    from t2hx import benchmarks

    full = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "full")
    quick = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "quick")
    system = load_system(system_path(quick.system))
    nodes = system.nodes["racks"] * system.nodes["per_rack"]
    # The study runs all of Table 2; the NAS Parallel Benchmarks are seed 001's.
    registry = {b.key for b in benchmarks.REGISTRY if b.parser != "npb"}
    assert set(full.benchmarks) == registry
    assert set(quick.benchmarks) == registry
    imb = benchmarks.get("imb")
    assert quick.variants("imb") == list(imb.variants)
    for name in quick.benchmarks:
        assert any(n <= nodes for n in quick.nodes(name)), name
        assert quick.cases(name, nodes) >= len(quick.combos) * quick.repetitions, name


def test_profile_from_environment(monkeypatch):
    monkeypatch.setenv("T2HX_STUDY_PROFILE", "quick")
    assert load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").profile == "quick"


@pytest.mark.parametrize("old,new,field", [
    ("routing: parx,   placement: clustered", "routing: parxx,  placement: clustered",
     "combos[4].routing"),
    ("baseline: ft-ftree-linear", "baseline: nope", "baseline"),
    ("walltime: 15m", "walltime: 15 minutes", "walltime"),
    ("    ladder: pow2\n    input: {reps: 16", "    ladder: pow3\n    input: {reps: 16",
     "benchmarks.swfft.ladder"),
    ("    mupp: 56", "    mupp: 56\n    nosuch: 8", "capacity.apps.nosuch"),
    ("repetitions: 10 ", "repetitions: 0 ", "repetitions"),
    ("cv: {network: 0.1706", "cv: {netwrk: 0.1706", "noise.cv.netwrk"),
    ("cv: {network: 0.1706", "cv: {network: -0.1", "noise.cv.network"),
    (", x500: 0.1836}", "}", "noise.cv.x500"),
    ("model: slowdown", "model: gauss", "noise.model"),
    ("seed: 2019\n  cv:", "seed: -1\n  cv:", "noise.seed"),
    # Each of these once ran a silently different campaign.
    ("{name: ft-ftree-linear,   plane: fattree, routing: ftree,",
     "{name: ft-ftree-linear,   plane: fattree, routing: updn,", "baseline"),
    ("only: {mpigraph: [28]}", "only: {mpigrahp: [28]}", "extra_combos[0].only.mpigrahp"),
    ("ranks_per_node: 1 ", "ranks_per_node: 13 ", "ranks_per_node"),
    ("linear: [7, 14, 28, 56,", "linear: [7, 28, 14, 56,", "ladders.linear"),
    ("linear: [7, 14, 28, 56,", "linear: [7, 14, 14, 56,", "ladders.linear"),
    ("    ladders: {linear: [7, 28, 112]", "    ladders: {linear: [7, 112, 112]",
     "profiles.quick.ladders.linear"),
])
def test_bad_study_names_field(tmp_path, old, new, field):
    assert old in STUDY
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace(old, new, 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "full")
    assert err.value.field == field
    assert str(path) in err.value.line() and "\n" not in err.value.line()


def test_a_variant_the_binary_lacks_is_refused_before_the_campaign(tmp_path):
    from t2hx.campaign import preflight

    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace("variants: [Barrier, Bcast,", "variants: [Barrier, Bcst,", 1))
    with pytest.raises(ConfError) as err:
        preflight.check_variants(load_study(path, "full"))
    assert err.value.field == "benchmarks.imb.variants"
    assert str(path) in err.value.line() and "\n" not in err.value.line()


def test_a_simulated_campaign_refuses_ranks_per_node_the_simulator_cannot_place(tmp_path):
    """The flow model places several ranks per node; the capacity mix and the packet engine
    place one. A study asking them for more would otherwise run at one rank per node without
    a word (real systems take it)."""
    from t2hx.campaign import preflight

    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace("ranks_per_node: 1 ", "ranks_per_node: 2 ", 1))
    with pytest.raises(ConfError) as err:
        preflight.check_ranks_per_node(load_study(path, "full"))
    assert err.value.field == "ranks_per_node" and "2 ranks per node" in err.value.line()
    assert "capacity" in err.value.line()
    assert str(path) in err.value.line() and "\n" not in err.value.line()
    raw = yaml.safe_load(STUDY)
    raw["benchmarks"]["ebb"]["ranks_per_node"] = 4
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfError) as err:
        preflight.check_ranks_per_node(load_study(path, "full"))
    assert err.value.field == "benchmarks.ebb.ranks_per_node" and "packet" in err.value.line()
    raw["benchmarks"]["ebb"]["model"] = "flow"
    path.write_text(yaml.safe_dump(raw))
    preflight.check_ranks_per_node(load_study(path, "full"))
    sc17 = load_study(ROOT / "conf" / "studies" / "fattree-configs-sc17.yaml", "full")
    preflight.check_ranks_per_node(sc17)
    assert sc17.ranks_per_node == 16 and sc17.ranks_per_node_of("ebb") == 1


def test_a_process_count_held_over_the_ladder_sets_each_rungs_ranks_per_node(tmp_path):
    """Seed 003 §5.3 strong-scales 16,384 processes: 64 per node on 256 nodes, 16 on 1,024.
    A workload's job holds no process count (the study's per-node one), and a profile that
    asks N per node runs every benchmark without a count of its own at N."""
    sc17_file = ROOT / "conf" / "studies" / "fattree-configs-sc17.yaml"
    sc17 = load_study(sc17_file, "full")
    assert [sc17.ranks_per_node_of("amg", n) for n in (256, 1024)] == [64, 16]
    assert sc17.ranks_per_node_of("amg") == 16 and sc17.ranks_per_node_of("swfft", 256) == 1
    one = load_study(sc17_file, "quick-one-rank-per-node")
    assert [one.ranks_per_node_of("amg", n) for n in (256, 1024)] == [1, 1]
    raw = yaml.safe_load(sc17_file.read_text())
    path = tmp_path / "fattree-configs-sc17.yaml"
    for edit, line in (({"ranks": 1000}, "1000 processes on 256 nodes are not a whole number"),
                       ({"ranks_per_node": 4}, "both ranks and ranks_per_node")):
        path.write_text(yaml.safe_dump({**raw, "benchmarks": {
            **raw["benchmarks"], "amg": {**raw["benchmarks"]["amg"], **edit}}}))
        with pytest.raises(ConfError) as err:
            load_study(path, "full")
        assert err.value.field == "benchmarks.amg.ranks" and line in err.value.line()
        assert str(path) in err.value.line() and "\n" not in err.value.line()


def test_unknown_profile(tmp_path):
    with pytest.raises(ConfError, match="no profile 'huge'"):
        load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "huge")


def test_unknown_profile_in_the_environment_is_refused_by_every_loader(monkeypatch):
    """Commands that always read the full study (`t2hx hostfiles`) refuse a misspelt
    $T2HX_STUDY_PROFILE too, instead of running the full study without a word."""
    monkeypatch.setenv("T2HX_STUDY_PROFILE", "quik")
    with pytest.raises(ConfError) as err:
        load_study(profile="full")
    assert "T2HX_STUDY_PROFILE='quik' is not a profile" in err.value.line()
    assert "quick" in err.value.line() and "\n" not in err.value.line()
    monkeypatch.setenv("T2HX_STUDY_PROFILE", "quick")
    assert load_study(profile="full").profile == "full"


@pytest.mark.parametrize("variants,field", [
    ("{imb: [Bcast, Allgather]}", "profiles.quick.variants.imb"),
    ("{imb: []}", "profiles.quick.variants.imb"),
    ("{hpcg: [x]}", "profiles.quick.variants.hpcg"),
])
def test_bad_profile_variants(tmp_path, variants, field):
    old = "  quick:"
    assert old in STUDY
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace(old, f"{old}\n    variants: {variants}", 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "quick")
    assert err.value.field == field and "\n" not in err.value.line()


def test_profile_noise_override_and_errors(tmp_path):
    """A profile may switch the noise model off (the quick profile inherits the study's)."""
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace("  quick:", "  quick:\n    noise: {model: none}", 1))
    quick = load_study(path, "quick")
    assert quick.noise["model"] == "none" and quick.noise_of("app")[0] == "none"
    assert load_study(path, "full").noise_of("app")[0] == "slowdown"
    assert load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "quick").noise == \
        load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "full").noise


def test_studies_are_selected_by_name_or_file(tmp_path, monkeypatch):
    """conf/studies/<name>.yaml by name, $T2HX_STUDY, or a file; an unknown name lists the
    known ones in one line."""
    from t2hx.study import STUDIES, STUDY_ENV, study_names, study_path

    assert study_path() == STUDIES / "hyperx-vs-fattree-sc19.yaml"
    assert "hyperx-vs-fattree-sc19" in study_names()
    assert load_study("hyperx-vs-fattree-sc19").name == "hyperx-vs-fattree-sc19"
    copy = tmp_path / "mine.yaml"
    copy.write_text((STUDIES / "hyperx-vs-fattree-sc19.yaml").read_text())
    monkeypatch.setenv(STUDY_ENV, str(copy))
    assert load_study().path == copy
    monkeypatch.setenv(STUDY_ENV, "no-such-study")
    with pytest.raises(ConfError) as err:
        load_study()
    assert "hyperx-vs-fattree-sc19" in err.value.line() and "\n" not in err.value.line()


def test_a_study_file_names_itself(tmp_path, monkeypatch):
    import t2hx.study as S

    monkeypatch.setattr(S, "STUDIES", tmp_path)
    wrong = tmp_path / "other.yaml"
    wrong.write_text((ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text())
    with pytest.raises(ConfError, match="name: other"):
        S.load_study(wrong)


def test_campaign_keeps_its_study(tmp_path, monkeypatch, capsys):
    """`t2hx campaign --study`: an unknown name fails listing the known ones; a campaign
    recorded under another study cannot be resumed with this one."""
    from t2hx.cli import main

    monkeypatch.setenv("T2HX_LOG_ROOT", str(tmp_path))
    # `--study` and a campaign's recorded study set $T2HX_STUDY in this process:
    # monkeypatch restores it afterwards, so later tests of this worker see the default.
    monkeypatch.setenv("T2HX_STUDY", "hyperx-vs-fattree-sc19")
    assert main(["campaign", "status", "--campaign", "c1", "--study", "nope"]) == 2
    assert "hyperx-vs-fattree-sc19" in capsys.readouterr().err
    (tmp_path / "c2").mkdir()
    (tmp_path / "c2" / "provenance.json").write_text('{"study": "fattree-configs-sc17"}')
    assert main(["campaign", "dry-run", "--campaign", "c2"]) == 2
    err = capsys.readouterr().err
    assert "fattree-configs-sc17" in err and "--study" in err
    assert main(["campaign", "status", "--campaign", "c2", "--study",
                 "hyperx-vs-fattree-sc19"]) == 2
    assert "fattree-configs-sc17" in capsys.readouterr().err
    # status reads the campaign's own study when none is given
    assert main(["campaign", "status", "--campaign", "c2"]) == 0
    assert "sc17-sr-edr" in capsys.readouterr().out
    assert main(["campaign", "status", "--campaign", "c3"]) == 0


def test_combos_follow_what_a_system_can_route(tmp_path):
    """A combo runs where its plane exists and lists its engine in opensm.routing; the
    others are left out with the reason (and are not counted)."""
    study = load_study(ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml", "quick")
    t2hx = load_system(system_path("t2hx"))
    assert study.left_out(t2hx) == {} and study.combos_on(t2hx) == study.all_combos()
    port = load_system(system_path("port512"))            # its HyperX routes dfsssp only
    assert study.left_out(port) == {
        c: "plane hyperx routes dfsssp (opensm.routing), not parx"
        for c in ("hx-parx-clustered", "hx-parx-linear")}
    raw = yaml.safe_load(system_path("port512").read_text())
    del raw["planes"]["hyperx"]
    (tmp_path / "ft-only.yaml").write_text(yaml.safe_dump(raw))
    ft_only = load_system(tmp_path / "ft-only.yaml")
    assert set(study.left_out(ft_only).values()) == {"no plane hyperx"}
    assert [c.plane for c in study.combos_on(ft_only)] == ["fattree", "fattree"]
    # Fat-tree combos only: 2 of 5 grid combos, no PARX extra, capacity per combo.
    capability = sum(study.cases(b, 510, study.combos_on(ft_only)) for b in study.benchmarks)
    assert study.cases_on(ft_only) == capability + 2
    assert capability == sum(study.cases(b, 510, study.combos[:2]) for b in study.benchmarks)


def test_a_profile_sets_inputs_and_engines(tmp_path) -> None:
    """`inputs:` merge into a benchmark's input, `engines:` replace its engine, in the
    profile only; an unknown benchmark names the profile's field."""
    text = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("    inputs: {ebb: {rounds: 100}}\n",
                                 "    inputs: {ebb: {rounds: 7}}\n    models: {mpigraph: flow}\n"))
    quick, full = load_study(path, "quick"), load_study(path, "full")
    assert quick.input("ebb", 28) == {**full.input("ebb", 28), "rounds": 7}
    assert full.input("ebb", 28)["rounds"] == 1000
    assert (quick.model("mpigraph"), full.model("mpigraph")) == ("flow", "packet")
    path.write_text(text.replace("    inputs: {ebb: {rounds: 100}}\n",
                                 "    inputs: {nosuch: {rounds: 7}}\n"))
    with pytest.raises(ConfError) as err:
        load_study(path, "quick")
    assert "profiles.quick.inputs.nosuch" in str(err.value)


@pytest.mark.parametrize("edit, field", [
    (("    ladders: {linear: [7, 28, 112], pow2: [4, 16, 64]}",
      "    ladders: {linear: [7, 28, 112], pwo2: [4, 16, 64]}"), "profiles.quick.ladders.pwo2"),
    (("    repetitions: 2\n", "    repetitions: 1000000000\n"), "profiles.quick.repetitions"),
])
def test_study_typos_are_refused(tmp_path, edit, field) -> None:
    """A misspelt ladder in a profile, or a runaway repetition count, is one error naming
    the field, not a silently different campaign."""
    text = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
    assert edit[0] in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "quick")
    assert field in str(err.value)


def test_paper_profile_cuts_are_data() -> None:
    """The paper profile runs every ladder count but mpiGraph's (28 only, seed 000 Fig 1),
    10 repetitions, 3 h of capacity, and the flow engine above 224 nodes for the packet
    engine's benchmarks (an app stays on its own engine); the full profile keeps all."""
    paper, full = load_study(profile="paper"), load_study(profile="full")
    assert paper.nodes("mpigraph") == [28] and paper.nodes("imb") == full.nodes("imb")
    assert paper.repetitions == 10 and paper.capacity["window"] == "3h"
    assert [paper.model("imb", n) for n in (224, 448)] == ["packet", "flow"]
    assert paper.model("amg", 672) == full.model("amg", 672) == "flow"
    assert full.model("imb", 672) == "packet"
    assert paper.all_cases(672) < full.all_cases(672)


def test_profile_nodes_off_the_ladder_are_refused(tmp_path) -> None:
    """A node count the benchmark's ladder lacks would run nothing: refused, naming it."""
    path = tmp_path / "s.yaml"
    path.write_text(STUDY.replace("nodes: {mpigraph: [28]}", "nodes: {mpigraph: [30]}"))
    with pytest.raises(ConfError) as err:
        load_study(path, "paper")
    assert "benchmarks.mpigraph.nodes" in str(err.value) and "30" in str(err.value)


def test_only_systems_with_placed_cases_need_hostfiles() -> None:
    """Seed 004's study places Fig 8's Alltoall on Taurus only; Tsubame replays the trace's
    own jobs, so a campaign must not ask for Tsubame hostfiles (nor generate its cases)."""
    sar = load_study("scheduling-aware-routing-sc16")
    assert sar.needs_hostfiles("sc16-taurus") and not sar.needs_hostfiles("sc16-tsubame")
    assert load_study("hyperx-vs-fattree-sc19").needs_hostfiles("any-port")


def test_mapping_draws_set_a_benchmarks_runs(tmp_path) -> None:
    """``draws:`` runs a benchmark once per mapping draw instead of ``repetitions`` times on
    one hostfile, and counts its cases so; a profile can set it; a runaway or zero count is
    one error naming the field."""
    text = (ROOT / "conf" / "studies" / "shortcut-topologies-thesis.yaml").read_text()
    study = load_study(ROOT / "conf" / "studies" / "shortcut-topologies-thesis.yaml", "full")
    draws = study.catalog["npb-mg"]["draws"]
    assert draws > 1 and study.repetitions == 1
    assert study.cases("npb-mg") == draws * len(study.catalog["npb-mg"]["combos"])
    path = tmp_path / "s.yaml"
    assert text.count("\n  quick:\n") == 1
    path.write_text(text.replace("\n  quick:\n", "\n  quick:\n    draws: {npb-mg: 3}\n"))
    assert load_study(path, "quick").runs_of("npb-mg") == 3
    assert load_study(path, "full").runs_of("npb-mg") == draws
    for bad, field in (("{npb-mg: 0}", "profiles.quick.draws"),
                       ("{npb-mg: 1000000}", "profiles.quick.draws"),
                       ("{nosuch: 3}", "profiles.quick.draws.nosuch")):
        path.write_text(text.replace("\n  quick:\n", f"\n  quick:\n    draws: {bad}\n"))
        with pytest.raises(ConfError) as err:
            load_study(path, "quick")
        assert field in str(err.value), str(err.value)
