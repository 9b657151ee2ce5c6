"""The reproduce pipeline's own steps (t2hx.reproduce): routing analysis with real OpenSM into
the post-processing inputs, campaign restart/resume rules, the Fig 1 verdicts and the
comparison with the previous run. The whole pipeline is `run/reproduce` itself."""

from __future__ import annotations

import json

import pandas as pd

from t2hx.post.ingest import Summary
from t2hx.post.routing import read_dark_fiber, read_efi
from t2hx.progress import Progress
from t2hx.reproduce import COMPLETE, FIG1, Options, compare, fig1_verdicts, routing_analysis, \
    start


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


def _fig1(ft: float, dfsssp: float, parx: float) -> pd.DataFrame:
    rows = [{"benchmark": "mpigraph", "nodes": FIG1["nodes"], "metric": "send_avg",
             "unit": "MiB/s", "combo": FIG1[k], "value": v, "msg_size": None}
            for k, v in (("ft", ft), ("dfsssp", dfsssp), ("parx", parx)) for _ in range(2)]
    return pd.DataFrame(rows)


def test_fig1_verdicts():
    ok = fig1_verdicts(_fig1(3000.0, 1100.0, 1800.0))
    assert [v[:4] for v in ok] == ["ok  ", "ok  "] and "+64%" in ok[1]
    bad = fig1_verdicts(_fig1(1000.0, 1100.0, 900.0))
    assert [v[:4] for v in bad] == ["FAIL", "FAIL"]
    missing = fig1_verdicts(_fig1(1.0, 1.0, 1.0).query("combo != @FIG1['parx']"))
    assert missing[0].startswith("FAIL") and "parx missing" in missing[0]


def test_compare_reports_largest_difference(tmp_path):
    old = _fig1(3000.0, 1000.0, 1500.0)
    old.to_parquet(tmp_path / "old.parquet")
    new = old.copy()
    new.loc[new["combo"] == FIG1["parx"], "value"] = 1650.0
    text = compare(new, tmp_path / "old.parquet")
    assert "3 cases" in text and "10.00%" in text and FIG1["parx"] in text
