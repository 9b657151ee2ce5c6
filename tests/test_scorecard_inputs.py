"""`t2hx scorecard` on inputs it cannot use: every class of bad claims file (empty, a list at
the top, a claim without a benchmark, a misspelt one, ...) and every log it cannot score (an
unknown study, no results, every raw output gone, only a port's runs and no portable claim)
ends in exit 2 and one line naming the file, the claim and field, and the fix — never a
traceback, a table of "not run" or exit 0. Claims are checked before the log is read."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from t2hx import ROOT
from t2hx.cli import main

from tests.conftest import one_line

CLI = ROOT / "run" / "t2hx"
FT = {"topology": "fattree", "routing": "ftree", "placement": "linear"}
PARX = {"topology": "hyperx", "routing": "parx", "placement": "clustered"}
CLAIM = {"id": "c1", "source": "§x", "statement": "PARX beats the fat-tree",
         "mechanism": "congestion", "portable": True, "published": {"sign": 1},
         "compute": {"kind": "rank", "benchmark": "imb-bcast", "metric": "t_min",
                     "subject": PARX, "base": FT, "combos": [FT, PARX]}}


def scorecard(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str, str]:
    code = main(["scorecard", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_results(tmp_path: Path) -> Path:
    """A campaign with its provenance and nothing else: itself refused (no results)."""
    log = tmp_path / "empty"
    log.mkdir()
    (log / "provenance.json").write_text(json.dumps({"study": "hyperx-vs-fattree-sc19"}))
    return log


@pytest.fixture
def local_log(tmp_path: Path) -> Path:
    """A copy of the committed local campaign (runs of `local`, a port of seed 000)."""
    log = tmp_path / "local"
    shutil.copytree(ROOT / "log" / "local-reference", log,
                    ignore=shutil.ignore_patterns("paper"))
    return log


def claims_file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "claims.yaml"
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def with_claim(change: Callable[[dict[str, Any]], Any]) -> str:
    claim = copy.deepcopy(CLAIM)
    change(claim)
    return yaml.safe_dump({"claims": [claim]})


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(claim: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            claim = claim[key]
        claim[last] = value
    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(claim: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            claim = claim[key]
        del claim[last]
    return change


# (claims file text, words the one line holds): each a class of mistake.
BAD_CLAIMS: dict[str, tuple[str | bytes, tuple[str, ...]]] = {
    "empty file": ("", ("empty claims file",)),
    "only a comment": ("# the claims come later\n", ("empty claims file",)),
    "a list at the top": (yaml.safe_dump([CLAIM]), ("a list at the top level", "claims:")),
    "text at the top": ("claims\n", ("a str at the top level",)),
    "no claims key": ("defaults: {dead_band: 0.01}\n", ("claims: no claims",)),
    "empty claims list": ("claims: []\n", ("claims: no claims",)),
    "claims a mapping": (yaml.safe_dump({"claims": {"c1": CLAIM}}),
                         ("claims: claims is a dict",)),
    "defaults a list": (yaml.safe_dump({"defaults": [1], "claims": [CLAIM]}),
                        ("defaults: defaults is a list",)),
    "a claim that is text": (yaml.safe_dump({"claims": ["PARX wins"]}),
                             ("claims[0]: claim is a str",)),
    "no id": (with_claim(_drop("id")), ("claims[0].id: no id",)),
    "a duplicate id": (yaml.safe_dump({"claims": [CLAIM, CLAIM]}),
                       ("claims[c1].id: a second claim",)),
    "no statement": (with_claim(_drop("statement")), ("claims[c1].statement",)),
    "no published": (with_claim(_drop("published")),
                     ("claims[c1].published: no published statement",)),
    "a misspelt published form": (with_claim(_set("published", {"sing": 1})),
                                  ("claims[c1].published: no published form",)),
    "a published value of the wrong kind": (with_claim(_set("published", {"sign": 2})),
                                            ("claims[c1].published.sign: sign is 2",
                                             "+1 or -1")),
    "a zero published value": (with_claim(_set("published", {"value": 0})),
                               ("claims[c1].published.value",)),
    "no compute": (with_claim(_drop("compute")), ("claims[c1].compute: no compute",)),
    "an unknown kind": (with_claim(_set("compute.kind", "gains")),
                        ("claims[c1].compute.kind: kind is 'gains'", "one of gain")),
    "no benchmark": (with_claim(_drop("compute.benchmark")),
                     ("claims[c1].compute.benchmark: a rank claim needs compute.benchmark",)),
    "a misspelt benchmark": (with_claim(_set("compute.benchmark", "imb-bcats")),
                             ("claims[c1].compute.benchmark: unknown benchmark 'imb-bcats'",
                              "did you mean 'imb-bcast'")),
    "a misspelt benchmark in a list": (with_claim(_set("compute.benchmark",
                                                       ["imb-bcast", "mpigrph"])),
                                       ("unknown benchmark 'mpigrph'", "'mpigraph'")),
    "an alias runs are not recorded under": (with_claim(_set("compute.benchmark", "hpcc")),
                                             ("unknown benchmark 'hpcc'", "write 'hpl'")),
    "a family name, not a variant": (with_claim(_set("compute.benchmark", "imb")),
                                     ("unknown benchmark 'imb'", "imb-bcast")),
    "no subject": (with_claim(_drop("compute.subject")), ("claims[c1].compute.subject",)),
    "a misspelt combo key": (with_claim(_set("compute.base", {"topolgy": "fattree"})),
                             ("claims[c1].compute.base: base has", "topology")),
    "node counts as text": (with_claim(_set("compute.nodes", "28")),
                            ("claims[c1].compute.nodes: nodes is '28'",)),
    "an unknown aggregate": (with_claim(_set("compute.aggregate", "mean")),
                             ("claims[c1].compute.aggregate",)),
    "a misspelt trend axis": (with_claim(_set("compute.along", "msg_sizes")),
                              ("claims[c1].compute.along", "nodes or msg_size")),
    "requirements as a list": (with_claim(_set("compute.requires", ["3 h window"])),
                               ("claims[c1].compute.requires", "capacity_window_s")),
    "a misspelt best or worst": (with_claim(_set("compute.of", "wrost")),
                                 ("claims[c1].compute.of: of is 'wrost'",)),
    "an unknown mechanism": (with_claim(_set("mechanism", "magic")),
                             ("claims[c1].mechanism: mechanism is 'magic'",)),
    "a portable magnitude": (with_claim(_set("published", {"gain": 0.3})),
                             ("claims[c1].portable",)),
    "not UTF-8": (b"claims:\n  - id: \xff\xfe\n", ("claims file unreadable",)),
    "not YAML": ("claims: [{id: c1\n", ("claims file unreadable",)),
}


@pytest.mark.parametrize("case", sorted(BAD_CLAIMS))
def test_a_bad_claims_file_is_one_line_before_the_log_is_read(
        case: str, tmp_path: Path, no_results: Path, capsys) -> None:
    """The log would be refused itself (no results): the claims' line comes first."""
    text, words = BAD_CLAIMS[case]
    path = claims_file(tmp_path, text)
    code, out, err = scorecard(capsys, no_results, "--claims", path)
    one_line(code, err, str(path), *words)
    assert out == ""


def test_the_valid_claim_the_cases_break_is_scored(tmp_path: Path, local_log: Path,
                                                   capsys) -> None:
    """The control: unbroken, the same claim loads and is scored (exit 0)."""
    path = claims_file(tmp_path, yaml.safe_dump({"claims": [CLAIM]}))
    code, out, err = scorecard(capsys, local_log, "--claims", path)
    assert code == 0 and err == "", err
    assert "c1 " in out and "1 claims" in out


def test_claims_are_checked_before_the_log_is_read(tmp_path: Path, no_results: Path,
                                                   capsys) -> None:
    """A log whose runs cannot even be unpacked: a good claims file meets that error, a bad
    one is refused first (the log is never opened)."""
    (no_results / "runs.tar.xz").write_bytes(b"not an archive")
    good = claims_file(tmp_path, yaml.safe_dump({"claims": [CLAIM]}))
    one_line(*scorecard(capsys, no_results, "--claims", good)[::2], "cannot unpack")
    bad = tmp_path / "bad.yaml"
    bad.write_text(with_claim(_set("compute.benchmark", "mpigrph")))
    one_line(*scorecard(capsys, no_results, "--claims", bad)[::2], str(bad),
             "unknown benchmark 'mpigrph'")


def test_a_study_unknown_here_is_one_line(local_log: Path, capsys) -> None:
    prov = local_log / "provenance.json"
    prov.write_text(json.dumps({**json.loads(prov.read_text()), "study": "no-such-study"}))
    one_line(*scorecard(capsys, local_log)[::2], str(prov), "study: the log's study "
             "'no-such-study' is not known here", "--claims")
    # the fix works: the claims named on the command line score it
    code, out, _ = scorecard(capsys, local_log, "--claims", ROOT / "conf" / "claims" /
                             "hyperx-vs-fattree-sc19.yaml")
    assert code == 0 and "fig1-parx-vs-dfsssp" in out


def test_an_unreadable_provenance_is_one_line(local_log: Path, capsys) -> None:
    """Which study's claims apply is unknown: not silently seed 000's."""
    prov = local_log / "provenance.json"
    prov.write_text('{"study": "hyperx-vs')
    one_line(*scorecard(capsys, local_log)[::2], str(prov), "unreadable")


def test_a_log_without_results_is_one_line(no_results: Path, capsys) -> None:
    one_line(*scorecard(capsys, no_results)[::2], str(no_results), "no results")


@pytest.mark.parametrize("keep_perflogs", [False, True], ids=["all-gone", "perflogs-kept"])
def test_a_log_whose_raw_outputs_are_gone_is_one_line(local_log: Path, keep_perflogs: bool,
                                                      capsys) -> None:
    for path in (local_log / "runs").rglob("*"):
        if path.is_file() and path.name != "t2hx-run.json":
            path.unlink()
    if not keep_perflogs:
        shutil.rmtree(local_log / "perflogs")
    one_line(*scorecard(capsys, local_log)[::2], str(local_log),
             "every raw output is gone", "runs/local/default/")


def test_a_port_with_no_portable_claim_is_one_line(tmp_path: Path, capsys) -> None:
    """Runs of `local` only, scored against the thesis' claims (none portable): nothing to
    score was a line on stdout and exit 0."""
    log = tmp_path / "thesis"
    shutil.copytree(ROOT / "log" / "local-reference-thesis", log,
                    ignore=shutil.ignore_patterns("paper"))
    one_line(*scorecard(capsys, log)[::2], str(log), "nothing to score", "local",
             "portable")


def test_the_real_command_exits_2_with_one_line(tmp_path: Path, no_results: Path) -> None:
    """Through run/t2hx, as a user runs it: the exit status and stderr of the process."""
    path = claims_file(tmp_path, "- id: c1\n")
    for args, words in ((["--claims", str(path)], (str(path), "a list at the top level")),
                        ([], (str(no_results), "no results"))):
        run = subprocess.run([str(CLI), "scorecard", str(no_results), *args],
                             capture_output=True, text=True, timeout=120)
        one_line(run.returncode, run.stderr, *words)
        assert run.stdout == ""


def test_every_compute_kind_declares_the_fields_it_reads() -> None:
    """A new kind is checked too: the schema names the fields of every kind scored."""
    from t2hx.post.scorecard.kinds import KINDS, LOG_KINDS
    from t2hx.post.scorecard.schema import REQUIRED

    assert set(REQUIRED) == {*KINDS, *LOG_KINDS, "unmeasured"}
