"""conf/study.yaml: the five combos, ladders, inputs per scale, capacity mix, profiles, and
one-line errors for bad files."""

from __future__ import annotations

import pytest

from t2hx import ROOT
from t2hx.errors import ConfError
from t2hx.study import load_study, seconds

STUDY = (ROOT / "conf" / "study.yaml").read_text()


def test_reference_study_matches_seed_000():
    s = load_study(ROOT / "conf" / "study.yaml", "full")
    assert [c.name for c in s.combos] == ["ft-ftree-linear", "ft-sssp-clustered",
                                          "hx-dfsssp-linear", "hx-dfsssp-random",
                                          "hx-parx-clustered"]
    assert s.combo("hx-parx-clustered").routing == "parx"
    assert s.baseline == "ft-ftree-linear"
    assert s.ladders["linear"] == [7, 14, 28, 56, 112, 224, 448, 672]
    assert s.ladders["pow2"] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert s.repetitions == 10 and seconds(s.walltime) == 900
    assert s.variants("imb") == ["Barrier", "Bcast", "Gather", "Scatter", "Reduce",
                                 "Allreduce", "Alltoall"]
    assert 512 not in s.nodes("milc")                       # omitted in the paper
    assert s.input("ffvc", 64)["cube"] == 128 and s.input("ffvc", 128)["cube"] == 64
    assert s.input("hpl", 112)["gib_per_rank"] == 1.0
    assert s.input("hpl", 224)["gib_per_rank"] == 0.25
    assert s.input("qball", 448)["atoms_per_node"] == 32
    assert s.input("qball", 672)["atoms_per_node"] == 16
    assert len(s.capacity["apps"]) == 14 and s.capacity_nodes() == 664
    assert set(s.capacity["apps"].values()) == {32, 56}
    assert seconds(s.capacity["window"]) == 3 * 3600
    # 16 capability benchmarks of Table 2 (IMB as 7 collectives) + MuPP + EmDL.
    assert len(s.benchmarks) == 18
    assert s.cases("imb", 672) == 7 * 5 * 8 * 10
    assert s.all_cases(672) == 9555
    assert s.all_cases(64) < s.all_cases(672)               # ladders clip to the system


def test_quick_profile_is_a_subset():
    full = load_study(ROOT / "conf" / "study.yaml", "full")
    quick = load_study(ROOT / "conf" / "study.yaml", "quick")
    assert quick.combos == full.combos
    assert set(quick.benchmarks) < set(full.benchmarks)
    assert quick.repetitions in (1, 2)
    assert set(quick.ladders["linear"]) < set(full.ladders["linear"])
    assert quick.capacity["apps"] == full.capacity["apps"]
    assert seconds(quick.capacity["window"]) < seconds(full.capacity["window"])
    # Capacity apps left out of the quick capability runs keep their inputs.
    assert "qball" not in quick.benchmarks and quick.input("qball", 56)["atoms_per_node"] == 32
    assert quick.all_cases(672) < full.all_cases(672) / 10
    assert set(quick.variants("imb")) < set(full.variants("imb"))
    assert quick.cases("imb", 672) == len(quick.variants("imb")) * 5 * 3 * quick.repetitions


def test_profile_from_environment(monkeypatch):
    monkeypatch.setenv("T2HX_STUDY_PROFILE", "quick")
    assert load_study(ROOT / "conf" / "study.yaml").profile == "quick"


@pytest.mark.parametrize("old,new,field", [
    ("routing: parx,   placement: clustered", "routing: parxx,  placement: clustered",
     "combos[4].routing"),
    ("baseline: ft-ftree-linear", "baseline: nope", "baseline"),
    ("walltime: 15m", "walltime: 15 minutes", "walltime"),
    ("    ladder: pow2\n    input: {reps: 16", "    ladder: pow3\n    input: {reps: 16",
     "benchmarks.swfft.ladder"),
    ("    mupp: 56", "    mupp: 56\n    nosuch: 8", "capacity.apps.nosuch"),
    ("repetitions: 10 ", "repetitions: 0 ", "repetitions"),
])
def test_bad_study_names_field(tmp_path, old, new, field):
    assert old in STUDY
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace(old, new, 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "full")
    assert err.value.field == field
    assert str(path) in err.value.line() and "\n" not in err.value.line()


def test_unknown_profile(tmp_path):
    with pytest.raises(ConfError, match="no profile 'huge'"):
        load_study(ROOT / "conf" / "study.yaml", "huge")


@pytest.mark.parametrize("variants,field", [
    ("{imb: [Bcast, Allgather]}", "profiles.quick.variants.imb"),
    ("{imb: []}", "profiles.quick.variants.imb"),
    ("{hpcg: [x]}", "profiles.quick.variants.hpcg"),
])
def test_bad_profile_variants(tmp_path, variants, field):
    old = "variants: {imb: [Bcast, Allreduce, Alltoall]}"
    assert old in STUDY
    path = tmp_path / "study.yaml"
    path.write_text(STUDY.replace(old, f"variants: {variants}", 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "quick")
    assert err.value.field == field and "\n" not in err.value.line()
