"""`t2hx replay` (and its alias `post`) on a log it cannot replay: without provenance.json,
with every raw output gone, or with no result at all, it ends in exit 2 and one line naming
what is missing and the fix, and writes nothing (no report of nothing with exit 0). The same
log intact replays (the control)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.cli import main

from tests.conftest import one_line

CLI = ROOT / "run" / "t2hx"


def replay(capsys: pytest.CaptureFixture[str], *args: object, command: str = "replay"
           ) -> tuple[int, str]:
    code = main(["-q", command, *map(str, args)])
    return code, capsys.readouterr().err


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """A copy of the committed local campaign (22 runs, perflogs, provenance)."""
    out = tmp_path / "local"
    shutil.copytree(ROOT / "log" / "local-reference", out, ignore=shutil.ignore_patterns("paper"))
    return out


def drop_raw_outputs(log: Path) -> None:
    for path in (log / "runs").rglob("*"):
        if path.is_file() and path.name != "t2hx-run.json":
            path.unlink()


def test_the_intact_log_replays(log: Path, tmp_path: Path, capsys) -> None:
    code, err = replay(capsys, log, "--out", tmp_path / "paper")
    assert code == 0 and err == "", err
    assert (tmp_path / "paper" / "report.md").is_file()


@pytest.mark.parametrize("command", ["replay", "post"])
def test_no_provenance_is_one_line_and_writes_nothing(log: Path, tmp_path: Path, capsys,
                                                      command: str) -> None:
    (log / "provenance.json").unlink()
    one_line(*replay(capsys, log, "--out", tmp_path / "paper", command=command), str(log),
             "no provenance.json", "restore provenance.json")
    assert not (tmp_path / "paper").exists()


def test_no_provenance_is_refused_before_packing(log: Path, capsys) -> None:
    (log / "provenance.json").unlink()
    before = sorted(p.relative_to(log) for p in log.rglob("*"))
    one_line(*replay(capsys, log, "--pack"), "no provenance.json")
    assert sorted(p.relative_to(log) for p in log.rglob("*")) == before     # nothing packed


@pytest.mark.parametrize("keep_perflogs", [False, True], ids=["all-gone", "perflogs-kept"])
def test_every_raw_output_gone_is_one_line_and_writes_nothing(
        log: Path, tmp_path: Path, keep_perflogs: bool, capsys) -> None:
    """The runs' t2hx-run.json kept, every output beside them deleted (a copy that lost its
    files): the perflogs alone are not the campaign's evidence (no mpiGraph matrices)."""
    drop_raw_outputs(log)
    if not keep_perflogs:
        shutil.rmtree(log / "perflogs")
    one_line(*replay(capsys, log, "--out", tmp_path / "paper"), str(log),
             "every raw output is gone", "none of the 22 run(s)", "restore perflogs/ and runs/")
    assert not (tmp_path / "paper").exists()


def test_packed_runs_without_outputs_are_one_line(log: Path, tmp_path: Path, capsys) -> None:
    """The same when the runs are packed (runs.tar.xz), as a large campaign is committed."""
    from t2hx.post import archive

    drop_raw_outputs(log)
    shutil.rmtree(log / "perflogs")
    assert archive.pack(log, "runs")
    one_line(*replay(capsys, log, "--out", tmp_path / "paper"), "every raw output is gone")


def test_a_campaign_without_results_is_one_line(tmp_path: Path, capsys) -> None:
    log = tmp_path / "started"
    (log / "perflogs").mkdir(parents=True)
    (log / "provenance.json").write_text(json.dumps({"campaign": "started"}))
    one_line(*replay(capsys, log, "--out", tmp_path / "paper"), str(log), "no results")
    assert not (tmp_path / "paper").exists()


def test_the_real_command_exits_2_with_one_line(log: Path, tmp_path: Path) -> None:
    """Through run/t2hx, as an evaluator runs it."""
    (log / "provenance.json").unlink()
    run = subprocess.run([str(CLI), "replay", str(log), "--out", str(tmp_path / "paper")],
                         capture_output=True, text=True, timeout=120)
    one_line(run.returncode, run.stderr, "no provenance.json")
    assert run.stdout == "" and not (tmp_path / "paper").exists()


def _fake_dpkg(tmp_path: Path, installed: set[str]) -> dict[str, str]:
    """A PATH whose dpkg-query knows only ``installed`` (every other package is missing)."""
    import os

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "dpkg-query"
    script.write_text("#!/bin/sh\nfor p; do :; done\ncase \" " + " ".join(sorted(installed))
                      + " \" in *\" $p \"*) printf 'install ok installed';; *) exit 1;; esac\n")
    script.chmod(0o755)
    apt = bin_dir / "apt-get"       # a setup that tried to install would leave this mark
    apt.write_text(f"#!/bin/sh\ntouch {tmp_path / 'apt-called'}\nexit 1\n")
    apt.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "T2HX_QUIET": "1"}


def test_replay_setup_needs_only_python_and_gnuplot(tmp_path: Path) -> None:
    """#50: an evaluator without OpenSM, Slurm, MariaDB or compilers can still replay:
    `run/setup --replay` asks only for the packages marked "replay" (and never installs the
    rest), while the full setup wants them all."""
    marked = {line.split()[0] for line in (ROOT / "debian-packages.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#") and "replay" in line.split()[1:]}
    assert marked == {"gnuplot-nox", "python3-venv"}
    env = _fake_dpkg(tmp_path, marked)
    for purpose in (["--replay"], ["--for", "replay"]):
        ok = subprocess.run([str(ROOT / "run" / "setup"), *purpose], env=env,
                            capture_output=True, text=True, timeout=300)
        assert ok.returncode == 0, ok.stderr
        assert not (tmp_path / "apt-called").exists()
    # the full setup wants the rest: as root it would install them (here: the fake apt-get)
    full = subprocess.run([str(ROOT / "run" / "setup")], env=env, capture_output=True,
                          text=True, timeout=300)
    import os
    assert full.returncode != 0
    assert (tmp_path / "apt-called").exists() if os.geteuid() == 0 else \
        "missing Debian packages" in full.stderr
    bad = subprocess.run([str(ROOT / "run" / "setup"), "--bogus"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "run/setup [--for replay|all]" in bad.stderr
    nopurpose = subprocess.run([str(ROOT / "run" / "setup"), "--for", "lunch"], env=env,
                               capture_output=True, text=True, timeout=60)
    assert nopurpose.returncode == 2 and "--for 'lunch' is no purpose" in nopurpose.stderr
    assert "--for replay" in (ROOT / "run" / "replay").read_text()
