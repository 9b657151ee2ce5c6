"""A campaign log knows whether today's model produced it (t2hx/post/freshness.py, #47):
by the fingerprint its runs recorded (model code version, conf systems, study), else by git
from the commit each run recorded; the line names what changed."""

from __future__ import annotations

import json
from pathlib import Path

from t2hx import ROOT
from t2hx.flowsim import runcache
from t2hx.post.freshness import fingerprint, freshness

SYSTEM = ROOT / "conf" / "systems" / "mini.yaml"
STUDY = "conf/studies/hyperx-vs-fattree-sc19.yaml"


def _log(tmp_path: Path, runs: list[dict], simulated: bool = True) -> Path:
    log = tmp_path / "camp"
    log.mkdir(parents=True)
    (log / "provenance.json").write_text(json.dumps({
        "simulated": simulated, "systems": ["mini"], "study_file": STUDY, "runs": runs}))
    return log


def _now() -> dict:
    return fingerprint([SYSTEM], ROOT / STUDY)


def test_a_log_of_todays_model_is_fresh(tmp_path) -> None:
    got = freshness(_log(tmp_path, [{"fingerprint": _now()}]))
    assert got.state == "fresh" and "today's" in got.line


def test_a_changed_model_makes_it_stale_and_says_so(tmp_path, monkeypatch) -> None:
    log = _log(tmp_path, [{"fingerprint": _now()}])
    monkeypatch.setattr(runcache, "code_version", lambda model=None: "f" * 64)
    got = freshness(log)
    assert got.state == "stale" and "model changed" in got.line and "ffffffffffff" in got.line


def test_a_changed_system_or_study_makes_it_stale(tmp_path) -> None:
    old = _now()
    old["systems"]["mini"] = "0" * 64
    old["study"] = old["study_profile"] = "1" * 64
    got = freshness(_log(tmp_path, [{"fingerprint": old}]))
    assert got.state == "stale" and "system mini" in got.line and "study" in got.line


def test_code_outside_simulate_goes_stale_for_the_studies_that_run_it(tmp_path,
                                                                    monkeypatch) -> None:
    """Capacity runs (seed 000's study has them) are computed by the job-mix model, outside
    `t2hx simulate`: a change to its code stales the log and says which part; a study
    without capacity, workloads, histories or networks has no such part."""
    from t2hx.post import freshness as fr

    code = tmp_path / "jobmix.py"
    code.write_text("# the job-mix model\n")
    monkeypatch.setattr(fr, "outside_sources", lambda part, model=None: [code])
    log = _log(tmp_path, [{"fingerprint": _now()}])
    assert list(_now()["outside"]) == ["capacity"]
    assert freshness(log).state == "fresh"
    code.write_text("# the job-mix model, changed\n")
    got = freshness(log)
    assert got.state == "stale" and "capacity code changed" in got.line
    assert fr.outside_parts({"benchmarks": {}, "capacity": {}}) == []
    assert fr.outside_parts({"histories": {"trace": "x"}, "networks": {"seed": 1}}) == \
        ["histories", "networks"]


def test_a_run_recorded_before_the_outside_digests_is_judged_by_git(tmp_path) -> None:
    """A fingerprint without ``outside`` (runs before it existed): git compares the part's
    sources at the run's commit with today's; a commit this clone lacks counts as changed."""
    import subprocess

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "t2hx"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout
    old = {k: v for k, v in _now().items() if k != "outside"}
    if not dirty:          # a clean checkout (CI's clone): HEAD's sources are today's
        got = freshness(_log(tmp_path / "a", [{"fingerprint": old, "git_hash": head}]))
        assert got.state == "fresh", got.line
    got = freshness(_log(tmp_path / "b", [{"fingerprint": old, "git_hash": "0" * 40}]))
    assert got.state == "stale" and "capacity code changed" in got.line


def test_runs_of_two_models_are_stale(tmp_path) -> None:
    old = {**_now(), "model": "e" * 64}
    got = freshness(_log(tmp_path, [{"fingerprint": old}, {"fingerprint": _now()}]))
    assert got.state == "stale" and "more than one model" in got.line


def test_without_a_fingerprint_git_decides(tmp_path) -> None:
    # a66a0d67 predates the change of mpiGraph's window (t2hx/flowsim/patterns.py)
    got = freshness(_log(tmp_path, [{"git_hash": "a66a0d673239b943d52741f05d1064a62302d539"}]))
    assert got.state == "stale" and "a66a0d67" in got.line and "(git)" in got.line


def test_an_unknown_commit_or_none_is_unknown(tmp_path) -> None:
    assert freshness(_log(tmp_path, [{"git_hash": "0" * 40}])).state == "unknown"
    (tmp_path / "b").mkdir()
    assert freshness(_log(tmp_path / "b", [{}])).state == "unknown"


def test_a_broken_provenance_leaves_the_model_unknown(tmp_path) -> None:
    """replay reports a broken provenance.json itself (one line); freshness never raises."""
    for text in ("{not json", "[1, 2]", '{"simulated": true, "runs": [1]}',
                 '{"simulated": true, "runs": [{"fingerprint": {"model": 3}}]}'):
        log = tmp_path / str(abs(hash(text)))
        log.mkdir()
        (log / "provenance.json").write_text(text)
        assert freshness(log).state in ("unknown", "stale"), text


def test_measured_logs_have_no_model(tmp_path) -> None:
    assert freshness(_log(tmp_path, [{}], simulated=False)).state == "measured"


def test_every_log_the_readme_quotes_is_fresh_or_declared_stale() -> None:
    """A README-quoted campaign whose model changed must be named in the README's "Stale
    against today's model" paragraph (the end of #47: every such log fresh, the paragraph
    gone); a log declared stale that is fresh again must leave it."""
    import re

    text = (ROOT / "README.md").read_text()
    stale_par = text.split("**Stale against today's model.**", 1)[1].split("\n\n", 1)[0] \
        if "**Stale against today's model.**" in text else ""
    declared = set(re.findall(r"`([a-z0-9-]+)`", stale_par))
    quoted = {m for m in re.findall(r"log/([a-z0-9-]+)", text) if (ROOT / "log" / m).is_dir()}
    assert {"reference", "paper-scale"} <= quoted
    for name in sorted(quoted):
        state = freshness(ROOT / "log" / name).state
        if state == "stale":
            assert name in declared, f"log/{name} is stale: rerun it or say so in README.md"
        elif state == "fresh":
            assert name not in declared, f"log/{name} is fresh: drop it from README's Stale"


def test_the_study_counts_only_where_the_logs_profile_reads_it(tmp_path) -> None:
    """Another profile added (or changed) leaves a log fresh; its own profile's section or
    the settings outside ``profiles:`` changed make it stale."""
    import yaml

    study = tmp_path / "study.yaml"
    text = {"name": "s", "repetitions": 3, "profiles": {"quick": {"repetitions": 1}}}
    study.write_text(yaml.safe_dump(text))
    run = {"profile": "quick", "fingerprint": fingerprint([SYSTEM], study, "quick")}
    log = tmp_path / "camp"
    log.mkdir()
    (log / "provenance.json").write_text(json.dumps({
        "simulated": True, "systems": ["mini"], "study_file": str(study), "runs": [run]}))
    for change, state in ((("profiles", "other"), {"repetitions": 2}), "fresh"), \
            ((("profiles", "quick"), {"repetitions": 2}), "stale"), \
            ((("repetitions",), 4), "stale"):
        doc = json.loads(json.dumps(text))
        where, value = change
        if len(where) == 2:
            doc[where[0]][where[1]] = value
        else:
            doc[where[0]] = value
        study.write_text(yaml.safe_dump(doc))
        got = freshness(log)
        assert got.state == state, (change, got.line)
        assert state == "fresh" or "study changed" in got.line


def test_where_a_profile_is_logged_is_not_a_setting_of_its_runs() -> None:
    """``logs:`` names where run/reproduce writes, nothing a run reads: adding or changing it
    leaves every log of the study fresh."""
    import yaml

    from t2hx.post.freshness import profile_digest

    study = yaml.safe_load((ROOT / "conf/studies/shortcut-topologies-thesis.yaml").read_text())
    base = profile_digest(study, "quick")
    assert profile_digest({**study, "logs": {"quick": "elsewhere"}}, "quick") == base
    assert profile_digest({k: v for k, v in study.items() if k != "logs"}, "quick") == base
    assert profile_digest({**study, "repetitions": 2}, "quick") != base
