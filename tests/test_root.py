"""Finding the checkout (t2hx.find_root): ``$T2HX_ROOT`` first, then the checkout the package
sits in, then the working directory or its nearest parent that is a checkout; none is one
line naming ``T2HX_ROOT`` from the command line, never an error at import."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT, ROOT_ENV, find_root, is_checkout
from t2hx.errors import T2hxError


def fake_checkout(path: Path) -> Path:
    (path / "conf" / "systems").mkdir(parents=True)
    (path / "pyproject.toml").write_text("[project]\nname = 't2hx'\n")
    return path.resolve()


def installed(tmp_path: Path) -> Path:
    """A package directory whose parent is no checkout (as in site-packages)."""
    package = tmp_path / "site-packages" / "t2hx"
    package.mkdir(parents=True)
    return package


def test_this_checkout_is_found() -> None:
    assert is_checkout(ROOT) and (ROOT / "t2hx" / "__init__.py").is_file()
    assert find_root(environ={}) == ROOT


def test_the_environment_wins(tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "conf").mkdir(parents=True)
    assert find_root(environ={ROOT_ENV: str(other)}) == other.resolve()
    assert find_root(environ={ROOT_ENV: str(other)}, cwd=ROOT,
                     package=installed(tmp_path)) == other.resolve()


def test_an_empty_variable_is_unset() -> None:
    assert find_root(environ={ROOT_ENV: ""}) == ROOT


def test_the_environment_naming_no_checkout_is_an_error(tmp_path: Path) -> None:
    for bad in (tmp_path, tmp_path / "missing", ROOT / "pyproject.toml"):
        with pytest.raises(T2hxError) as err:
            find_root(environ={ROOT_ENV: str(bad)})
        line = str(err.value)
        assert "\n" not in line and line.startswith(f"{ROOT_ENV}: {bad} is not a t2hx checkout")


def test_the_package_checkout_before_the_working_directory(tmp_path: Path) -> None:
    other = fake_checkout(tmp_path / "other")
    assert find_root(environ={}, cwd=other) == ROOT
    assert find_root(environ={}, cwd=other, package=ROOT / "t2hx") == ROOT


def test_the_working_directory_or_a_parent(tmp_path: Path) -> None:
    checkout = fake_checkout(tmp_path / "checkout")
    package = installed(tmp_path)
    assert find_root(environ={}, cwd=checkout, package=package) == checkout
    deep = checkout / "conf" / "systems" / "x"
    deep.mkdir()
    assert find_root(environ={}, cwd=deep, package=package) == checkout


def test_no_checkout_anywhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "conf").mkdir()          # conf/ alone (no conf/systems, no pyproject) is none
    with pytest.raises(T2hxError) as err:
        find_root(environ={}, cwd=elsewhere, package=installed(tmp_path))
    assert str(err.value).startswith("no t2hx checkout found (fix: set T2HX_ROOT")


def t2hx_cli(*argv: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "t2hx.cli", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_bad_variable_fails_the_command_not_the_import(tmp_path: Path) -> None:
    env = {**os.environ, ROOT_ENV: str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", "import t2hx; print(t2hx.ROOT); "
                           "print(t2hx.ROOT_ERROR); t2hx.require_checkout()"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout.splitlines()[0] == str(tmp_path.resolve())
    assert "T2hxError: T2HX_ROOT: " in done.stderr
    assert t2hx_cli("--help", env=env, cwd=tmp_path).returncode == 0
    assert t2hx_cli("scorecard", "--help", env=env, cwd=tmp_path).returncode == 0
    done = t2hx_cli("scorecard", str(ROOT / "log" / "sar-quick"), env=env, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert re.fullmatch(rf"t2hx: error: T2HX_ROOT: {re.escape(str(tmp_path))} is not a t2hx "
                        r"checkout \(no conf/ there\) \(fix: set T2HX_ROOT to the directory "
                        r"holding conf/, or unset it\)\n", done.stderr), done.stderr


def test_the_checkout_comes_from_t2hx_root_alone() -> None:
    """No module derives the checkout from its own file: only t2hx/__init__.py (find_root)
    and the kernels' sources, which ship inside the package (t2hx/flowsim/ckernel.py)."""
    allowed = {"t2hx/__init__.py", "t2hx/flowsim/ckernel.py"}
    found = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "t2hx").rglob("*.py")
                   if re.search(r"Path\(__file__\)|\bparents\[2\]", p.read_text()))
    assert set(found) <= allowed, found
