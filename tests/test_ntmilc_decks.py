"""The NTChem and MILC inputs the `local` checks stage (checks/apps.py): the view's NTChem test
deck as rimp2.exe reads it, and our MILC deck on the weak-scaled lattice."""

from __future__ import annotations

import pytest

from checks.apps import MILC, MILC_ACTION, MILC_RATIONALS, NTCHEM_DECK, stage_ntchem_deck
from t2hx.study import load_study

LOCAL = load_study().local["input"]


def fake_deck(folder, name="c6h6_rimp2", skip=()):
    folder.mkdir()
    (folder / f"{name}.inp").write_text("&prefix\n Name='c6h6_rimp2',\n/\n")
    for ext in NTCHEM_DECK:
        if ext not in skip:
            (folder / f"{name}.{ext}").write_text(ext)
    return folder


def test_ntchem_deck_is_linked_and_its_inp_becomes_input(tmp_path):
    stage = tmp_path / "stage"
    stage.mkdir()
    stage_ntchem_deck(fake_deck(tmp_path / "c6h6"), stage)
    assert (stage / "INPUT").read_text().startswith("&prefix")
    for ext in NTCHEM_DECK:
        assert (stage / f"c6h6_rimp2.{ext}").read_text() == ext


def test_ntchem_deck_without_mo_names_the_file_and_the_fix(tmp_path):
    stage = tmp_path / "stage"
    stage.mkdir()
    with pytest.raises(FileNotFoundError, match=r"no h2o\.MO \(fix: use a case"):
        stage_ntchem_deck(fake_deck(tmp_path / "h2o", name="h2o", skip=("MO",)), stage)


@pytest.mark.parametrize("ranks", [1, 2, 8])
def test_milc_deck_keeps_four_to_the_fourth_sites_per_rank(ranks):
    launch = type("L", (), {"input": LOCAL["milc"], "ranks": ranks})()
    (name, text), = MILC.input_files(launch).items()
    assert name == "milc_local.in"
    keys = dict(line.partition(" ")[::2] for line in text.splitlines())
    sites = 1
    for axis in "xyzt":
        sites *= int(keys[f"n{axis}"])
    assert sites == 4 ** 4 * ranks
    # The rationals file fixes flavours and masses; the deck must not drift from them.
    assert keys["load_rhmc_params"] == MILC_RATIONALS
    assert (keys["dyn_mass"], keys["dyn_flavors"]) == (MILC_ACTION["dyn_mass"], "2 1")
    assert text.count("cgresid_md_fa_gr") == int(keys["n_pseudo"])
    assert keys["steps_per_trajectory"] == "4" and "fresh" in keys


def test_the_site_deck_of_milc_is_not_generated():
    study = type("L", (), {"input": load_study().input("milc", 32), "ranks": 32})()
    assert MILC.input_files(study) == {}
