"""The editors' JSON Schemas (t2hx/editor_schema.py, conf/schema/): generated from the same
field tables the loaders use, so they cannot drift (the committed files are what `t2hx conf schema`
prints); every committed conf passes them, and what they refuse the loader refuses too."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from t2hx import ROOT
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.editor_schema import SCHEMAS
from t2hx.errors import ConfError
from t2hx.study import load_study

DIRS = {"system": "systems", "study": "studies"}


def validator(kind: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(SCHEMAS[kind]())


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_the_committed_schema_is_the_generated_one(kind: str, tmp_path: Path, capsys) -> None:
    committed = ROOT / "conf" / "schema" / f"{kind}.schema.json"
    assert json.loads(committed.read_text()) == SCHEMAS[kind](), \
        f"regenerate: t2hx conf schema {kind} --out {committed.relative_to(ROOT)}"
    assert main(["conf", "schema", kind, "--out", str(tmp_path / "s.json")]) == 0
    assert (tmp_path / "s.json").read_text() == committed.read_text()
    jsonschema.Draft202012Validator.check_schema(SCHEMAS[kind]())


@pytest.mark.parametrize("kind, path", [(k, p) for k, d in DIRS.items()
                                        for p in sorted((ROOT / "conf" / d).glob("*.yaml"))],
                         ids=lambda v: v.name if isinstance(v, Path) else v)
def test_every_committed_conf_passes_its_schema(kind: str, path: Path) -> None:
    errors = [e.message for e in validator(kind).iter_errors(yaml.safe_load(path.read_text()))]
    assert not errors, errors[:3]


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["planes"]["hyperx"].update(hcaa="mlx4_1"), "hcaa"),
    (lambda d: d["planes"]["hyperx"]["topology"].update(dims="12x8"), "dims"),
    (lambda d: d["planes"]["fattree"]["topology"].update(kind="torus"), "kind"),
    (lambda d: d["nodes"].update(per_rack="many"), "per_rack"),
])
def test_what_the_schema_refuses_the_loader_refuses(edit, field: str, tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "conf" / "systems" / "t2hx.yaml").read_text())
    edit(data)
    assert list(validator("system").iter_errors(data))
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError):
        load_system(path)


def test_a_study_with_a_misspelt_key_is_refused_by_both(tmp_path: Path) -> None:
    data = yaml.safe_load((ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text())
    data["repetition"] = data.pop("repetitions")
    assert any("repetition" in e.message for e in validator("study").iter_errors(data))
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError):
        load_study(str(path), "full")


def test_conf_check_reads_every_committed_conf_and_names_a_bad_field(tmp_path: Path,
                                                                     capsys) -> None:
    files = [str(p) for d in ("systems", "studies", "claims")
             for p in sorted((ROOT / "conf" / d).glob("*.yaml"))]
    assert main(["-q", "conf", "check", *files]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(files) and all(line.startswith("ok: ") for line in out)
    data = yaml.safe_load((ROOT / "conf" / "systems" / "t2hx.yaml").read_text())
    data["planes"]["hyperx"]["topology"]["dims"] = "12x8"
    bad = tmp_path / "site.yaml"
    bad.write_text(yaml.safe_dump(data))
    assert main(["-q", "conf", "check", "--kind", "system", str(bad), files[0]]) == 1
    first, second = capsys.readouterr().out.splitlines()
    assert first.startswith(f"FAILED: {bad}") and "dims" in first and "fix:" in first
    assert second.startswith("ok: ")
    assert main(["-q", "conf", "check", str(bad)]) == 1        # kind unknown: says how
    assert "--kind" in capsys.readouterr().out
