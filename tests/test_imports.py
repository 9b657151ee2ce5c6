"""Start-up cost of the command line: what ``t2hx --help`` and a simulated case import.

Every simulated case starts ``t2hx simulate`` in a fresh interpreter, and a repetition the run
cache serves does nothing else: numpy, scipy (through t2hx/placement/), pandas and the flow
model would be most of its CPU time. Each test runs the CLI in a subprocess and
reads the modules it had loaded at exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from t2hx import ROOT

# Runs t2hx's main with argv[3:] and writes sys.modules to argv[1] at exit (--help exits
# through SystemExit inside main); argv[2] says how: "script" as the installed t2hx does,
# "module" as ``python -m t2hx.cli`` (where t2hx.cli is imported a second time, by name).
DRIVER = """
import atexit, json, runpy, sys
out, how, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
if how == "module":
    sys.argv = ["t2hx", *argv]
    runpy.run_module("t2hx.cli", run_name="__main__", alter_sys=True)
from t2hx.cli import main
sys.exit(main(argv))
"""
HEAVY = ("numpy", "scipy", "pandas", "t2hx.placement", "t2hx.flowsim.network")


def loaded(tmp_path: Path, *argv: str, how: str = "script") -> tuple[set[str], str]:
    """(modules loaded by ``t2hx ARGV``, its stdout)."""
    dump = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", DRIVER, str(dump), how, *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(dump.read_text())), done.stdout


@pytest.mark.parametrize("how", ["script", "module"])
def test_help_imports_nothing_heavy(how: str, tmp_path: Path) -> None:
    modules, out = loaded(tmp_path, "--help", how=how)
    assert "simulate" in out and "campaign" in out
    assert "t2hx.commands.campaign" in modules      # every command's parser was built
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_campaign_case_commands_import_no_network_analysis(tmp_path: Path) -> None:
    """``t2hx campaign simulate-*`` builds every verb's parser: analyse-network's options
    (the placement package, scipy) are added only when that verb parses."""
    modules, out = loaded(tmp_path, "campaign", "simulate-capacity", "--help")
    assert "--solver {fast,exact}" in out
    assert not modules & {"scipy", "pandas", "t2hx.placement"}, sorted(modules)


def imb_case(mini, routed, tmp_path: Path) -> list[str]:
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("".join(f"{h}\n" for h in mini.hostnames()[:8]))
    dumps = routed(mini, "hyperx", "dfsssp").run.out_dir
    return ["simulate", "--system", str(mini.path), "--plane", "hyperx", "--routing",
            "dfsssp", "--hostfile", str(hosts), "--routing-dir", str(dumps), "--work",
            str(tmp_path / "work"), "--benchmark", "imb", "--collectives", "Allreduce",
            "--msglog", "0:4"]


def test_simulate_cache_hit_imports_no_model(mini, routed, tmp_path: Path) -> None:
    """A repetition the run cache serves loads neither the flow model nor numpy, scipy,
    pandas or the placement package; the one that simulated it loaded the flow model."""
    case = imb_case(mini, routed, tmp_path)
    first, out = loaded(tmp_path, *case)
    assert "cache=miss" in out.splitlines()[0]
    assert "t2hx.flowsim.network" in first
    modules, out = loaded(tmp_path, *case, "--repetition", "1")
    assert "cache=hit" in out.splitlines()[0]
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_simulate_miss_imports_no_placement_or_study(mini, routed, tmp_path: Path) -> None:
    """An IMB case that simulates needs the flow model, not the placement package (seed
    001's network analysis, two-opt, scipy's shortest paths), the study file or pandas."""
    modules, out = loaded(tmp_path, *imb_case(mini, routed, tmp_path), "--no-cache")
    assert "cache=off" in out.splitlines()[0]
    unwanted = {"scipy", "pandas", "t2hx.study", "t2hx.fabric.pathlengths"}
    found = modules & unwanted | {m for m in modules if m.startswith("t2hx.placement")}
    assert not found, sorted(found)


def test_run_cache_key_covers_neither_placement_nor_study() -> None:
    """The run cache keys on the simulator's import closure (t2hx/flowsim/runcache.py): a
    change to two-opt, a hostfile generator or the study's schema re-simulates nothing,
    while the recursive-doubling schedule the collectives use is in it."""
    from t2hx.flowsim.runcache import model_sources

    names = {str(p.relative_to(ROOT)) for p in model_sources()}
    assert "t2hx/doubling.py" in names and "t2hx/flowsim/collectives.py" in names
    stray = {n for n in names if n.startswith("t2hx/placement/") or n == "t2hx/study.py"}
    assert not stray, sorted(stray)
