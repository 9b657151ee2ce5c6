"""Lint, as CI runs it through run/test: ruff over the Python of the repository and mypy over
t2hx/, both pinned in pyproject.toml (dev extra) and requirements.lock and configured in pyproject.toml (rule set and
strictness: docs/architecture.md#lint). shellcheck over run/ is tests/test_scripts.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from t2hx import ROOT

BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = run(str(BIN / "ruff"), "check", "--no-cache", "t2hx", "checks", "tests", "bench")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_mypy_finds_nothing_in_t2hx() -> None:
    done = run(str(BIN / "mypy"))
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
