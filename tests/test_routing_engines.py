"""The routing-engine table (t2hx/routing_engines.py) is the one home of what distinguishes
an engine: no code compares engine names, no literal repeats a column, and an engine added
as a row routes through ``t2hx simulate`` like the others."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from t2hx import ROOT, routing_engines as re_
from t2hx.cli import main
from t2hx.routing_engines import DEMAND, JOBS, RoutingEngine, RoutingInput

MINI = ROOT / "conf" / "systems" / "mini.yaml"
SCANNED = ("t2hx", "checks", "bench", "run")
HOME = "t2hx/routing_engines.py"


def test_no_code_compares_with_an_engine_name_of_ours() -> None:
    names = "|".join(re.escape(n) for n in re_.ours())
    found = subprocess.run(["git", "grep", "-nE", rf'(==|!=) *"({names})"', "--", *SCANNED],
                           cwd=ROOT, capture_output=True, text=True).stdout
    assert found == "", "compare with the engine table's columns instead:\n" + found


def _column_sets() -> dict[frozenset[str], str]:
    """Each boolean-ish column as the set of engines that have it (two or more of them)."""
    rows = re_.ENGINES.values()
    columns = {"ours": {r.name for r in rows if r.ours},
               "reads": {r.name for r in rows if r.reads},
               "roots": {r.name for r in rows if r.roots},
               "path_sl": {r.name for r in rows if r.path_sl},
               "lid_per_message": {r.name for r in rows if r.lid_per_message}}
    out: dict[frozenset[str], str] = {}
    for name, engines in columns.items():
        if len(engines) > 1:
            key = frozenset(engines)
            out[key] = f"{out[key]}/{name}" if key in out else name
    return out


def _column_values(name: str) -> dict[str, object]:
    row = re_.ENGINES[name]
    return {"lmc": row.lmc, "reads": row.reads, "option": row.option,
            "mca": dict(row.mca) or None}


def repeated_facts(tree: ast.AST) -> list[tuple[int, str]]:
    """Literals that state a column again: a collection of engine names equal to one
    column's set, or an {engine: value} whose value is that engine's cell."""
    sets, found = _column_sets(), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            if len(words) == len(node.elts) and frozenset(words) in sets:
                found.append((node.lineno, f"the '{sets[frozenset(words)]}' column"))
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if not (isinstance(key, ast.Constant) and key.value in re_.ENGINES):
                    continue
                try:
                    literal = ast.literal_eval(value)
                except ValueError:
                    continue
                cells = _column_values(key.value)
                hit = next((c for c, v in cells.items() if v is not None and v == literal), None)
                if hit:
                    found.append((node.lineno, f"{key.value}'s '{hit}' cell"))
    return found


def test_no_literal_repeats_a_column_of_the_table() -> None:
    files = subprocess.run(["git", "ls-files", "--", *(f"{d}/*.py" for d in SCANNED)],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    files += [str(p.relative_to(ROOT)) for d in SCANNED for p in (ROOT / d).rglob("*.py")
              if str(p.relative_to(ROOT)) not in files and ".venv" not in p.parts]
    bad = [f"{f}:{line}: repeats {what}" for f in sorted(set(files)) if f != HOME
           for line, what in repeated_facts(ast.parse((ROOT / f).read_text()))]
    assert not bad, "state engine facts once, in t2hx/routing_engines.py:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, expected", [
    ('ENGINE_LMC = {"parx": 2}', "lmc"),
    ('INPUT = {"sar": "jobs"}', "reads"),
    ('PLUGIN_ENGINES = ("parx", "sar", "floyd")', "ours"),
    ('REROUTED = ("parx", "sar")', "reads"),
    ('TREES = ["ftree", "updn", "dnup"]', "roots"),
])
def test_the_scan_finds_a_second_definition(source: str, expected: str) -> None:
    found = repeated_facts(ast.parse(source))
    assert len(found) == 1 and expected in found[0][1], found


def test_the_scan_lets_unrelated_literals_pass() -> None:
    assert repeated_facts(ast.parse('COMBOS = {"parx": ("hyperx", "parx")}\n'
                                    'X = ("parx", "dfsssp")')) == []


def test_columns_answer_what_the_code_asks() -> None:
    assert re_.reading(DEMAND) == ("parx",) and re_.reading(JOBS) == ("sar",)
    assert set(re_.ours()) == {"parx", "sar", "floyd"} and re_.routing_engine("parx").lmc == 2
    assert re_.routing_engine("ftree").roots and re_.routing_engine("minhop").oblivious
    assert re_.input_options() == {DEMAND: ("parx", "parx_demand"), JOBS: ("sar", "sar_jobs")}
    assert re_.routing_engine("unknown-stock") == RoutingEngine("unknown-stock")


def test_one_routing_input_from_the_cli_pair() -> None:
    assert RoutingInput.of("d.txt", None) == RoutingInput(DEMAND, "d.txt")
    assert RoutingInput.of(None, "j.txt") == RoutingInput(JOBS, "j.txt")
    assert RoutingInput.of(None, None) is None
    with pytest.raises(ValueError):
        RoutingInput.of("d.txt", "j.txt")


def test_an_engine_added_as_a_row_routes_through_simulate(tmp_path: Path, capsys) -> None:
    """lash taken out of the table is refused like any unknown name; put back from a new
    row it is routed by the real OpenSM and simulated."""
    from t2hx.conf import load_system

    hostfile = tmp_path / "hosts.txt"
    hosts = load_system(MINI).hostnames()[:4]
    hostfile.write_text("".join(f"{h}\n" for h in hosts))
    args = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing", "lash",
            "--hostfile", str(hostfile), "--benchmark", "mpigraph", "--size", "4096",
            "--times", "1", "--window", "1", "--work", str(tmp_path / "work")]
    saved = re_.ENGINES["lash"]
    re_.unregister("lash")
    try:
        assert main(args) == 2
        assert "lash" in capsys.readouterr().err
        re_.register(RoutingEngine("lash"))
        assert main(args) == 0
    finally:
        re_.register(saved)
    out = capsys.readouterr().out
    assert "routing=lash" in out and "t2hx-simulated" in out
    assert list((tmp_path / "work" / "routing").rglob("opensm-lfts.dump"))
