"""An honest Python package: ``pip install`` of a copy of the sources (not editable, not this
checkout's venv) into a fresh venv gives a ``t2hx`` that runs outside any checkout.

From a directory outside every checkout the installed ``t2hx --help`` works without one, a
command needing one stops with one line naming ``T2HX_ROOT``, and with ``T2HX_ROOT`` naming
this checkout ``t2hx scorecard`` and ``t2hx replay`` of a committed log give what this
checkout's own t2hx gives, byte for byte; the compiled kernels build from the sources the
package ships, into the work directory.

The fresh venv installs from a wheelhouse in ``<work>/wheelhouse`` (``T2HX_WORK_ROOT``, else
work/; not committed): the pinned dependencies and the build backend as wheels, so the
install needs no network. A wheelhouse missing a pin (the first run, or after a pin moved) is
filled from PyPI with ``pip download``; without network that fails with a message saying so."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.paths import work_root

CHECKOUT = Path(__file__).resolve().parents[1]
LOG = CHECKOUT / "log" / "sar-quick"       # small (2 MB), with a report and a scorecard
PIP = ("-m", "pip", "--disable-pip-version-check", "--no-input")
# What the build of the package copies: the package and its metadata, nothing built.
JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.tmp", "*.egg-info")


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without t2hx's variables and without this checkout's venv."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("T2HX_") and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    return {**env, **extra}


def run(cmd: list[str | Path], cwd: Path, env: dict[str, str],
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def requirements(pyproject: Path) -> list[str]:
    """The package's dependencies and its build backend's requirements."""
    meta = tomllib.loads(pyproject.read_text())
    return [*meta["project"]["dependencies"], *meta["build-system"]["requires"]]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ of a fresh venv with t2hx pip-installed from a copy of the sources."""
    assert CHECKOUT == ROOT, f"this checkout's t2hx is not the one under test ({ROOT})"
    tmp = tmp_path_factory.mktemp("pip-install")
    src = tmp / "src"
    shutil.copytree(CHECKOUT / "t2hx", src / "t2hx", ignore=JUNK)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(CHECKOUT / name, src / name)
    venv = tmp / "venv"
    env = clean_env()
    made = run([sys.executable, "-m", "venv", venv], cwd=tmp, env=env)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    wheels = work_root() / "wheelhouse"
    wheels.mkdir(parents=True, exist_ok=True)
    install: list[str | Path] = [python, *PIP, "install", "--no-index", "--find-links", wheels, src]
    done = run(install, cwd=tmp, env=env)
    if "No matching distribution" in done.stderr:      # a pin not there yet: fetch from PyPI
        with open(wheels / ".lock", "w") as lock:      # one filler at a time (pytest -n)
            fcntl.flock(lock, fcntl.LOCK_EX)
            download: list[str | Path] = [python, *PIP, "download", "--only-binary", ":all:",
                                          "--dest", wheels, *requirements(src / "pyproject.toml")]
            fetch = run(download, cwd=tmp, env=env, timeout=900)
        if fetch.returncode != 0:
            pytest.fail(f"filling the wheelhouse {wheels} from PyPI failed (this test needs the "
                        "network once per set of pins, or those wheels put there): "
                        + fetch.stderr.strip()[-1500:])
        done = run(install, cwd=tmp, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return venv / "bin"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A working directory outside every checkout."""
    here = tmp_path / "elsewhere"
    here.mkdir()
    assert not any((p / "conf" / "systems").is_dir() for p in [here, *here.parents])
    return here


def test_installed_package_is_the_copy_and_ships_the_kernel_sources(installed: Path,
                                                                    outside: Path) -> None:
    where = run([installed / "python", "-c", "import t2hx; print(t2hx.__file__)"],
                cwd=outside, env=clean_env())
    assert where.returncode == 0, where.stderr
    package = Path(where.stdout.strip()).parent
    assert "site-packages" in package.parts and package.is_relative_to(installed.parent)
    kernel = package / "flowsim" / "kernel"
    assert sorted(p.name for p in kernel.iterdir()) == ["Makefile", "fluidk.c", "packetk.c",
                                                        "timelinek.c"]


def test_help_runs_without_a_checkout(installed: Path, outside: Path) -> None:
    done = run([installed / "t2hx", "--help"], cwd=outside, env=clean_env())
    assert done.returncode == 0, done.stderr
    assert "replay" in done.stdout and "scorecard" in done.stdout
    done = run([installed / "t2hx", "replay", "--help"], cwd=outside, env=clean_env())
    assert done.returncode == 0 and "LOGDIR" in done.stdout, done.stderr


def test_a_command_without_a_checkout_is_one_line(installed: Path, outside: Path) -> None:
    done = run([installed / "t2hx", "replay", LOG, "--out", outside / "out"], cwd=outside,
               env=clean_env())
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("t2hx: error: no t2hx checkout found") and "T2HX_ROOT" in lines[0]
    assert not (outside / "out").exists()


def test_a_bad_T2HX_ROOT_is_one_line(installed: Path, outside: Path) -> None:
    done = run([installed / "t2hx", "scorecard", LOG], cwd=outside,
               env=clean_env(T2HX_ROOT=str(outside)))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "T2HX_ROOT" in done.stderr, done.stderr


def checkout_t2hx(*argv: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """This checkout's own t2hx, in this venv."""
    return run([sys.executable, "-m", "t2hx.cli", *argv], cwd=cwd,
               env={**env, "PYTHONPATH": str(CHECKOUT)})


def test_scorecard_with_T2HX_ROOT_is_the_checkouts(installed: Path, outside: Path,
                                                   tmp_path: Path) -> None:
    env = clean_env(T2HX_ROOT=str(CHECKOUT), T2HX_WORK_ROOT=str(tmp_path / "work"))
    done = run([installed / "t2hx", "scorecard", LOG, "--json", "scorecard.json"],
               cwd=outside, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "scorecard (quick profile" in done.stdout and " claims: " in done.stdout
    assert "wrote scorecard.json" in done.stdout
    here = tmp_path / "checkout"
    here.mkdir()
    ours = checkout_t2hx("scorecard", LOG, "--json", "scorecard.json", cwd=here, env=env)
    assert ours.returncode == 0, ours.stderr[-3000:]
    assert done.stdout == ours.stdout
    assert (outside / "scorecard.json").read_bytes() == (here / "scorecard.json").read_bytes()


def test_replay_with_T2HX_ROOT_is_the_checkouts(installed: Path, outside: Path,
                                                tmp_path: Path) -> None:
    """Replay writes where --out says, not into the checkout, what the checkout's replay
    writes (data/, figures/, the report)."""
    env = clean_env(T2HX_ROOT=str(CHECKOUT), T2HX_WORK_ROOT=str(tmp_path / "work"))
    out, ours = tmp_path / "installed", tmp_path / "checkout"
    done = run([installed / "t2hx", "-q", "replay", LOG, "--out", out], cwd=outside, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    same = checkout_t2hx("-q", "replay", LOG, "--out", ours, cwd=outside, env=env)
    assert same.returncode == 0, same.stderr[-3000:]
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(ours).as_posix() for p in ours.rglob("*") if p.is_file())
    assert {"report.md", "report.html"} <= set(files) and any(f.endswith(".png") for f in files)
    for name in ("report.md", "report.html"):
        assert (out / name).read_bytes() == (ours / name).read_bytes(), name
    assert "# t2hx report" in (out / "report.md").read_text()


def test_kernels_build_from_the_shipped_sources(installed: Path, outside: Path,
                                                tmp_path: Path) -> None:
    work = tmp_path / "work"
    env = clean_env(T2HX_ROOT=str(CHECKOUT), T2HX_WORK_ROOT=str(work))
    code = ("from t2hx.flowsim import fluid_fast, packetk, timeline\n"
            "print(fluid_fast._kernel()._name); print(timeline._kernel()._name)\n"
            "print(packetk._kernel()._name)")
    done = run([installed / "python", "-c", code], cwd=outside, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    built = [Path(p) for p in done.stdout.split()]
    assert [p.name for p in built] == ["libfluidk.so", "libtimelinek.so", "libpacketk.so"]
    assert all(p.is_file() and p.is_relative_to(work / "kernels") for p in built), built
