"""The reproduce pipeline's own steps (t2hx.reproduce): routing analysis with real OpenSM into
the post-processing inputs, campaign restart/resume rules, the Fig 1 verdicts and the
comparison with the previous run. The whole pipeline is `run/reproduce` itself."""

from __future__ import annotations

import json

import pandas as pd

from t2hx.post.ingest import Summary
from t2hx.post.routing import read_dark_fiber, read_efi
from t2hx.progress import Progress
from t2hx.reproduce import COMPLETE, FIG1, Options, compare, fig1_verdicts, reproduce, \
    routing_analysis, seed_000, selecting, start


def test_routing_analysis_feeds_post(mini, tmp_path):
    opts = Options(system=mini, logs=tmp_path / "log", work=tmp_path / "work", quiet=True)
    rows = routing_analysis(opts, Progress("test", quiet=True))
    engines = [(p, e) for p in mini.planes for e in mini.plane(p).opensm["routing"]]
    assert [(r["plane"], r["engine"]) for r in rows] == engines
    assert not [r for r in rows if "error" in r]
    parx = next(r for r in rows if r["engine"] == "parx")
    assert parx["lmc"] == 2 and parx["vls"] >= 2       # PARX's own LID policy and layers
    summary = Summary()
    efi = read_efi(opts.logdir, summary)
    dark = read_dark_fiber(opts.logdir, summary)
    assert sorted(efi) == sorted(f"{p}-{e}" for p, e in engines) and not summary.skipped
    for row in rows:
        label = f"{row['plane']}-{row['engine']}"
        assert len(efi[label]) == row["inter_switch_links"]
        assert int(efi[label].max()) == row["max_efi"]
        assert dark[label] == row["unused_links"] / row["inter_switch_links"]
    # Cached routing: a second analysis reuses the dumps instead of rerunning OpenSM.
    stamp = next((tmp_path / "work" / "routing").rglob("opensm-lfts.dump")).stat().st_mtime
    routing_analysis(opts, Progress("test", quiet=True))
    assert next((tmp_path / "work" / "routing").rglob("opensm-lfts.dump")).stat().st_mtime \
        == stamp


def test_complete_campaign_restarts_incomplete_resumes(tmp_path):
    log = tmp_path / "reference"
    (log / "perflogs").mkdir(parents=True)
    assert start(log) is None and log.is_dir()            # interrupted: resume in place
    (log / COMPLETE).write_text(json.dumps({"profile": "quick"}))
    previous = start(log)
    assert previous is not None and previous.is_file()
    assert not log.exists()                                # fresh run, old one aside
    assert (previous.parent / "reference" / COMPLETE).is_file()
    log.mkdir()
    assert start(log) == previous                          # interrupted again: same baseline


def test_an_interrupted_campaign_of_another_model_starts_over(tmp_path, capsys):
    log = tmp_path / "sar-full"
    (log / "perflogs").mkdir(parents=True)
    old = {"model": "0" * 64, "systems": {}, "study": "0" * 64}
    (log / "provenance.json").write_text(json.dumps({"simulated": True, "runs": [
        {"date": "2026-01-01T00:00:00+00:00", "fingerprint": old}]}))
    previous = start(log)                  # resuming would mix two models' cases
    assert previous is not None and not log.exists()
    assert (previous.parent / "sar-full" / "provenance.json").is_file()
    assert "STALE" in capsys.readouterr().err


def test_selecting_options_are_found_with_their_values():
    assert selecting(["-x", "NetgaugeEBB", "--max-retries", "1"]) == ["-x", "NetgaugeEBB"]
    assert selecting(["-nHPL", "--name=IMB", "-P", "num_nodes=7"]) == \
        ["-nHPL", "--name=IMB", "-P", "num_nodes=7"]
    assert selecting(["--max-retries", "1", "--keep-stage-files"]) == []


def test_a_run_of_part_of_the_profile_is_not_complete(mini, tmp_path, monkeypatch, capsys):
    """`reproduce -- -n MpiGraph ...` runs some cases: the campaign must not be marked
    complete, or the next reproduce would move it aside and start over from nothing (it
    did: a paper-scale run with -x NetgaugeEBB, then one without)."""
    for key in ("T2HX_STUDY", "T2HX_STUDY_PROFILE", "T2HX_SIM_SYSTEMS", "T2HX_CONF_SYSTEMS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("T2HX_HOSTFILES", str(tmp_path / "hostfiles"))
    from t2hx.cli import main

    assert main(["-q", "hostfiles", "--system", str(mini.path), "--out",
                 str(tmp_path / "hostfiles")]) == 0
    opts = Options(system=mini, campaign="part", logs=tmp_path / "log", work=tmp_path / "work",
                   quiet=True, reframe_args=["-n", "MpiGraph", "-P", "repetition=0",
                                             "-P", "num_nodes=7"])
    reproduce(opts)
    assert (tmp_path / "log" / "part" / "perflogs").is_dir()
    assert not (tmp_path / "log" / "part" / COMPLETE).exists()
    assert "not marked complete" in capsys.readouterr().err


def _fig1(ft: float, dfsssp: float, parx: float, placement: str = "linear",
          nodes: int = FIG1["nodes"]) -> pd.DataFrame:
    rows = [{"benchmark": "mpigraph", "nodes": nodes, "metric": "send_avg", "unit": "MiB/s",
             "better": "higher", "topology": FIG1[k][0], "routing": FIG1[k][1],
             "placement": placement if k == "parx" else "linear",
             "combo": "-".join(FIG1[k]), "value": v * (1 - 0.1 * rep), "msg_size": 1048576}
            for k, v in (("ft", ft), ("dfsssp", dfsssp), ("parx", parx)) for rep in range(2)]
    return pd.DataFrame(rows)


def test_fig1_verdicts():
    ok = fig1_verdicts(_fig1(3000.0, 1100.0, 1800.0))
    assert [v[:4] for v in ok] == ["ok  ", "ok  "] and "+64%" in ok[1]    # best of N: max
    bad = fig1_verdicts(_fig1(1000.0, 1100.0, 900.0))
    assert [v[:4] for v in bad] == ["FAIL", "FAIL"]
    missing = fig1_verdicts(_fig1(1.0, 1.0, 1.0).query("routing != 'dfsssp'"))
    assert all(m.startswith("FAIL") and "hyperx/dfsssp/linear" in m for m in missing)


def test_fig1_compares_like_with_like():
    """PARX on other nodes (clustered placement) or at another node count is not Fig 1: the
    PARX verdict is "not run", never a comparison of unlike data, and not a failure."""
    for other in (_fig1(3000.0, 1100.0, 1800.0, placement="clustered"),
                  pd.concat([_fig1(3000.0, 1100.0, 1800.0).query("routing != 'parx'"),
                             _fig1(3000.0, 1100.0, 1800.0, nodes=112).query(
                                 "routing == 'parx'")])):
        out = fig1_verdicts(other)
        assert out[0].startswith("ok  ")
        assert out[1].startswith("not run") and "hyperx/parx/linear" in out[1]


def test_compare_reports_largest_difference(tmp_path):
    old = _fig1(3000.0, 1000.0, 1500.0)
    old.to_parquet(tmp_path / "old.parquet")
    new = old.copy()
    new.loc[new["routing"] == "parx", "value"] *= 1.1
    text = compare(new, tmp_path / "old.parquet")
    assert "3 cases" in text and "10.00%" in text and "hyperx-parx" in text


def test_fig1_is_checked_for_seed_000s_study_only(mini, monkeypatch):
    """Fig 1 compares FT and HX: reproducing seed 001's study must not report it failed."""
    monkeypatch.delenv("T2HX_STUDY", raising=False)
    assert seed_000(Options(system=mini))
    assert not seed_000(Options(system=mini, study="shortcut-topologies-thesis"))


def test_each_study_writes_its_own_committed_log_by_default() -> None:
    """`run/reproduce --study X` wrote seed 000's log/reference whatever X was: seed 001's
    quick run replaced seed 000's committed log. Each study's ``logs:`` names its logs."""
    from t2hx import ROOT
    from t2hx.commands.reproduce import default_campaign
    from t2hx.study import load_study

    seen = {}
    for path in sorted((ROOT / "conf" / "studies").glob("*.yaml")):
        study = load_study(path)
        for profile, log in study.logs.items():
            prov = json.loads((ROOT / "log" / log / "provenance.json").read_text())
            assert (prov["study"], prov["profile"]) == (study.name, profile), log
            assert default_campaign(study, profile) == log
            assert seen.setdefault(log, study.name) == study.name
        assert default_campaign(study, "nosuch") == f"{study.name}-nosuch"
    assert default_campaign(load_study("shortcut-topologies-thesis"), "quick") == "shortcut-npb"


def test_a_log_of_another_study_is_refused(tmp_path) -> None:
    import pytest

    from t2hx.commands.reproduce import check_log_study
    from t2hx.errors import T2hxError

    log = tmp_path / "reference"
    check_log_study(log, "shortcut-topologies-thesis")         # no log yet: fine
    log.mkdir()
    (log / "provenance.json").write_text(json.dumps({"study": "hyperx-vs-fattree-sc19"}))
    check_log_study(log, "hyperx-vs-fattree-sc19")
    with pytest.raises(T2hxError) as err:
        check_log_study(log, "shortcut-topologies-thesis")
    line = err.value.line()
    assert "hyperx-vs-fattree-sc19" in line and "--campaign" in line and "study" in line


def test_a_logs_entry_must_name_a_profile(tmp_path) -> None:
    import pytest
    import yaml

    from t2hx import ROOT
    from t2hx.errors import ConfError
    from t2hx.study import load_study

    data = yaml.safe_load((ROOT / "conf/studies/shortcut-topologies-thesis.yaml").read_text())
    data["logs"] = {"quik": "x"}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="logs.quik"):
        load_study(path)
    data["logs"] = {"quick": "a/b"}
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match="logs"):
        load_study(path)
