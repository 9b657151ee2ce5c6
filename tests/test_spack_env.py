"""Static checks of spack-env/: the real environment passes; each kind of breakage in a
copy fails with exactly one clear line naming file, field and fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from t2hx.cli import main
from t2hx.spackenv import check_env, class_name, pinned_version

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / "spack-env"


@pytest.fixture
def env_copy(tmp_path: Path) -> Path:
    """spack-env/ and patches/ copied side by side, with an (empty) parx/ for develop:."""
    shutil.copytree(ENV, tmp_path / "spack-env",
                    ignore=shutil.ignore_patterns("view", ".spack-env", "spack.lock"))
    shutil.copytree(ROOT / "patches", tmp_path / "patches")
    (tmp_path / "parx").mkdir()
    _stand_in_for_parx_patch(tmp_path)
    return tmp_path / "spack-env"


def _stand_in_for_parx_patch(root: Path) -> None:
    """The Open MPI PARX patch is delivered by the PARX work, not here. Until it is in
    the checkout, give the *copy* a recorded stand-in so the breakage tests below test
    one breakage each; test_real_environment_passes still requires the real patch."""
    rel = "patches/openmpi/4.1-parx-lid-selection.patch"
    if (root / rel).exists():
        return
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text("stand-in for the tests (upstream: open-mpi 4.1.4)\n")
    record = root / "spack-env/patch-verification.json"
    doc = json.loads(record.read_text())
    doc["patches"].append({"patch": rel, "package": "openmpi", "upstream": "stand-in",
                           "result": "applies (stand-in)", "date": "-"})
    record.write_text(json.dumps(doc))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def one_problem(env: Path) -> str:
    problems = check_env(env).problems
    lines = [p.line() for p in problems]
    assert len(lines) == 1, lines
    assert "(fix: " in lines[0]
    return lines[0]


def test_real_environment_passes() -> None:
    report = check_env(ENV)
    assert [p.line() for p in report.problems] == []
    assert report.specs >= 19 and report.recipes >= 10 and report.patches >= 8


def test_copy_passes_too(env_copy: Path) -> None:
    assert check_env(env_copy).problems == []


def test_unpinned_spec(env_copy: Path) -> None:
    edit(env_copy / "spack.yaml", "- hpl@=2.3 +openmp", "- hpl +openmp")
    line = one_problem(env_copy)
    assert line.startswith("spack-env/spack.yaml: specs: hpl +openmp: spec is not pinned")
    assert "hpl@=<version>" in line


def test_version_not_declared(env_copy: Path) -> None:
    edit(env_copy / "spack.yaml", "- hpcg@=3.1", "- hpcg@=9.9")
    assert "version 9.9 is not declared for hpcg" in one_problem(env_copy)


def test_unknown_package(env_copy: Path) -> None:
    edit(env_copy / "spack.yaml", "  - swfft@=1.0\n", "  - swfft@=1.0\n  - nosuchbench@=1.0\n")
    line = one_problem(env_copy)
    assert "specs: nosuchbench@=1.0: unknown package nosuchbench" in line
    assert "builtin-packages.txt" in line


def test_missing_patch(env_copy: Path) -> None:
    (env_copy.parent / "patches/comd/t2hx-solver-walltime.patch").unlink()
    line = one_problem(env_copy)
    assert line.startswith("spack-env/repo/spack_repo/t2hx/packages/comd/package.py: patch(")
    assert "does not exist" in line


def test_unreferenced_patch(env_copy: Path) -> None:
    (env_copy.parent / "patches/comd/stray.patch").write_text("--- a/x\n+++ b/x\n")
    line = one_problem(env_copy)
    assert line.startswith("patches/comd/stray.patch: patch: not referenced by any recipe")


def test_recipe_syntax_error(env_copy: Path) -> None:
    recipe = env_copy / "repo/spack_repo/t2hx/packages/comd/package.py"
    edit(recipe, "class Comd(BuiltinComd):", "class Comd(BuiltinComd)")
    line = one_problem(env_copy)
    assert line.startswith("spack-env/repo/spack_repo/t2hx/packages/comd/package.py: line ")
    assert "not valid Python" in line


def test_recipe_without_pinned_source(env_copy: Path) -> None:
    recipe = env_copy / "repo/spack_repo/t2hx/packages/baidu_allreduce/package.py"
    edit(recipe, 'version("2017-02-24", commit="73c7b7f8d34f7163a3a46aa0fe48e2a418d25fe9")',
         'version("2017-02-24", branch="master")')
    assert 'version("2017-02-24"): not pinned to a sha256 or git commit' in one_problem(env_copy)


def test_recipe_without_build_system(env_copy: Path) -> None:
    recipe = env_copy / "repo/spack_repo/t2hx/packages/opensm/package.py"
    edit(recipe, "class Opensm(AutotoolsPackage):", "class Opensm(object):")
    assert "does not derive from a Spack build system" in one_problem(env_copy)


def test_patch_missing_from_verification_record(env_copy: Path) -> None:
    record = env_copy / "patch-verification.json"
    doc = json.loads(record.read_text())
    doc["patches"] = [e for e in doc["patches"] if "minife" not in e["patch"]]
    record.write_text(json.dumps(doc))
    line = one_problem(env_copy)
    assert "patches/minife/t2hx-solver-walltime.patch: patch not recorded as verified" in line


def test_invalid_yaml(env_copy: Path) -> None:
    (env_copy / "spack.yaml").write_text("spack:\n  specs: [hpl@=2.3\n")
    assert "spack-env/spack.yaml: line" in one_problem(env_copy)


def test_unpinned_requirement_in_include(env_copy: Path) -> None:
    edit(env_copy / "include/packages-t2hx.yaml", '"@=3.3.10 +openmp"', '"+openmp"')
    assert "packages: fftw: require: requirement '+openmp' is not pinned" in one_problem(env_copy)


def test_every_patch_is_recorded_as_applying() -> None:
    record = json.loads((ENV / "patch-verification.json").read_text())
    recorded = {e["patch"]: e for e in record["patches"]}
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "patches").rglob("*") if p.is_file())
    assert files and set(files) <= set(recorded)
    for name in files:
        assert recorded[name]["result"].startswith("applies"), recorded[name]
        assert len(recorded[name].get("commit", "")) in (0, 40)


def test_patch_headers_name_their_upstream() -> None:
    # patches/openmpi/ is written to its own conventions by the PARX work
    for patch in (ROOT / "patches").rglob("*.patch"):
        if patch.parent.name == "openmpi":
            continue
        header = patch.read_text(errors="replace").split("\ndiff ", 1)[0]
        assert "Upstream" in header or "upstream" in header, patch


def test_helpers() -> None:
    assert class_name("baidu-allreduce") == "BaiduAllreduce"
    assert class_name("amg2013") == "Amg2013"
    assert pinned_version("openmpi@=4.1.4 fabrics=verbs") == "4.1.4"
    assert pinned_version("hpl@2.3") is None
    assert pinned_version("foo commit=" + "a" * 40) == "a" * 40


def test_cli(env_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spack", "check", "--env", str(env_copy)]) == 0
    assert "OK" in capsys.readouterr().out
    edit(env_copy / "spack.yaml", "- graph500@=3.0.0", "- graph500")
    assert main(["spack", "check", "--env", str(env_copy)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("t2hx: error: spack-env/spack.yaml: specs: graph500")
