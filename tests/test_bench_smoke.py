"""Every benchmark script of bench/ runs: its ``--smoke DIR`` mode (seconds, tiny inputs, the
result in DIR/<script>.json, never in bench/results/) in a subprocess, so a moved or renamed
function breaks run/test instead of the next measurement (bench/flowsim.py once imported a
function that had moved, and nothing noticed).

The scripts are found by glob: a new bench/*.py is covered without editing this file. A smoke
run that leaves a part out (a real cluster, Spack, a build outside the repository) says which
and why in its result's ``smoke_left_out``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2hx import ROOT

#: bench/*.py that are not benchmarks, and why.
NOT_BENCHMARKS = {
    "quote.py": "keeps the figures README.md and docs/ quote in step with bench/results/; "
                "tests/test_docs.py runs its --check",
}
SCRIPTS = sorted(p.name for p in (ROOT / "bench").glob("*.py") if p.name not in NOT_BENCHMARKS)
#: A smoke run is seconds; this bounds a hung one (two ReFrame campaigns are the slowest).
TIMEOUT_S = 240


@pytest.mark.parametrize("script", SCRIPTS)
def test_smoke_mode_runs_and_writes_its_result(script: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "bench" / "results").iterdir()}
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--smoke", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT_S)
    seconds = time.monotonic() - start
    assert done.returncode == 0, f"{script} --smoke: exit {done.returncode}\n" \
        f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    result = out / f"{Path(script).stem}.json"
    assert result.is_file(), f"{script} --smoke wrote no {result.name} ({sorted(out.iterdir())})"
    doc = json.loads(result.read_text())
    assert doc, f"{result.name} is empty"
    if isinstance(doc, dict):
        for part, why in doc.get("smoke_left_out", {}).items():
            assert isinstance(why, str) and len(why) > 20, (script, part, why)
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "bench" / "results").iterdir()}
    assert after == before, f"{script} --smoke wrote into bench/results/"
    print(f"{script}: {seconds:.1f} s")


def test_the_non_benchmarks_listed_exist() -> None:
    present = {p.name for p in (ROOT / "bench").glob("*.py")}
    assert set(NOT_BENCHMARKS) <= present, "a listed non-benchmark is gone: drop it here"
