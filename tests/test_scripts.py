"""The bash entry points stay thin and shellcheck-clean (the brief's rule for run/)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "run").iterdir() if p.is_file()) + [ROOT / ".ci" / "run"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_script_is_strict_and_shellcheck_clean(script: Path) -> None:
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    done = subprocess.run(["shellcheck", "-x", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


def test_ci_calls_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "run/test" in ci
    assert "run/test" in (ROOT / "README.md").read_text()
