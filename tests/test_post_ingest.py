"""Perflog format and reader, and ingest of a log directory into the tidy table."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from t2hx.post.ingest import COLUMNS, ingest
from t2hx.post.perflog import read_perflog
from t2hx.reframe_site import perflog_handler
from t2hx.wire import PERFLOG_FIELDS, PERFLOG_FORMAT, perflog_line
from t2hx.wire import PERFLOG_HEADER as HEADER

FIX = Path(__file__).parent / "data" / "post" / "fixtures"


def test_format_has_every_field_once_and_matches_reframe_header() -> None:
    specs = re.findall(r"%\((\w+)\)s", PERFLOG_FORMAT)
    # ReFrame's perflog header = the specifiers with 'check_' stripped, joined by the delimiter
    assert [s[6:] if s.startswith("check_") else s for s in specs] == list(PERFLOG_FIELDS)
    assert HEADER == "|".join(PERFLOG_FIELDS)
    for param in ("combo", "topology", "routing", "placement", "benchmark", "num_nodes",
                  "repetition", "msg_size", "campaign", "git_hash", "simulated"):
        assert f"%(check_{param})s" in PERFLOG_FORMAT
    h = perflog_handler("log/x")
    assert h["format"] == PERFLOG_FORMAT and h["basedir"] == "log/x/perflogs"


def test_reader_header_order_and_bad_lines(tmp_path: Path) -> None:
    names = list(reversed(PERFLOG_FIELDS))   # an older file with another field order
    good = {"benchmark": "ebb", "perf_var": "bandwidth", "perf_value": "123.5",
            "perf_unit": "MiB/s", "num_nodes": "14", "combo": "a"}
    lines = ["|".join(names), "|".join(good.get(n, "null") for n in names),
             "x|y|z",                                               # wrong field count
             "|".join({**good, "perf_value": "null"}.get(n, "null") for n in names),
             "|".join(good.get(n, "null") for n in names)[:-3]]     # unterminated tail
    path = tmp_path / "a.log"
    path.write_text("\n".join(lines))
    read = read_perflog(path)
    assert read.rows == 1 and read.lines == 4
    reasons = dict(read.skipped)
    assert "fields" in reasons[3] and "empty" in reasons[4] and "unterminated" in reasons[5]
    frame = read.frames[0]
    assert frame["perf_value"].tolist() == ["123.5"] and frame["_line"].tolist() == [2]
    assert frame["num_nodes"].tolist() == ["14"] and frame["routing"].isna().all()


def make_run(root: Path, name: str, meta: dict, files: list[Path]) -> Path:
    run = root / "runs" / name
    run.mkdir(parents=True)
    for f in files:
        shutil.copy(f, run / f.name)
    (run / "t2hx-run.json").write_text(json.dumps(meta))
    return run


def test_ingest_raw_and_perflog(tmp_path: Path) -> None:
    log = tmp_path / "camp"
    (log / "perflogs").mkdir(parents=True)
    common = dict(combo="hx-parx-clustered", topology="hyperx", routing="parx",
                  placement="clustered", system="t2hx", partition="hyperx")
    (log / "perflogs" / "hpl.log").write_text("\n".join([
        HEADER,
        perflog_line(benchmark="hpl", perf_var="gflops", perf_value="99.5", perf_unit="Gflop/s",
                     num_nodes=4, repetition=0, git_hash="abc", simulated="false",
                     job_completion_time="2026-11-21T15:51:44+00:00", **common),
        perflog_line(benchmark="hpl", perf_var="gflops", perf_value="n/a",
                     perf_unit="Gflop/s", num_nodes=4, repetition=1, **common)]) + "\n")
    meta = dict(benchmark="hpl", nodes=4, repetition=0, timestamp="t0", **common)
    make_run(log, "hpl-0", meta, [FIX / "hpl/hpl-np4-N1000_2000-NB64_128-P2xQ2.out"])
    make_run(log, "hpcc-1", dict(meta, benchmark="hpcc", repetition=1),
             [FIX / "hpcc/hpcc-np4-N1000-NB64-P2xQ2.hpccoutf.txt"])
    make_run(log, "hpcg-0", dict(meta, benchmark="hpcg"),
             [FIX / "hpcg/hpcg-np4-16x16x16-rt10.out",
              FIX / "hpcg/hpcg-np4-16x16x16-rt10.HPCG-Benchmark.txt"])
    make_run(log, "g500-0", dict(meta, benchmark="graph500", nodes=None),
             [FIX / "graph500/graph500-bfs-np2-scale12.out",
              FIX / "graph500/graph500-bfs-np2-scale12.err"])
    ing = ingest(log)
    df = ing.results
    assert list(df.columns) == COLUMNS
    gf = df[(df["benchmark"] == "hpl") & (df["metric"] == "gflops")].set_index("repetition")
    # rep 0: the perflog value wins over the raw file's; rep 1: raw best of the HPCC run
    assert gf.loc[0, "value"] == 99.5 and gf.loc[0, "source"] == "perflogs/hpl.log"
    assert gf.loc[0, "timestamp"] == "2026-11-21T15:51:44+00:00"
    assert gf.loc[1, "value"] == 1.123 and gf.loc[1, "source"].endswith("hpccoutf.txt")
    t = df[(df["benchmark"] == "hpl") & (df["metric"] == "time")].set_index("repetition")
    assert t.loc[0, "value"] == 0.10        # best (lowest) of the 4 N/NB runs in the file
    hpcg = df[df["benchmark"] == "hpcg"]
    assert hpcg.set_index("metric").loc["gflops", "value"] == 1.4657
    g5 = df[df["benchmark"] == "graph500"].set_index("metric")
    assert g5.loc["bfs_harmonic_mean_teps", "value"] == 1.8786e7
    assert g5.loc["bfs_harmonic_mean_teps", "nodes"] == 2     # from the output's ranks
    assert (df["campaign"] == "camp").all() and (df["combo"] == "hx-parx-clustered").all()
    assert not df["simulated"].any()
    s = ing.summary.as_dict()
    assert s["runs_used"] == 4 and s["perflog_rows"] == 1
    assert [x["reason"] for x in s["skipped"]] == ["perf_value is not a number"]
    assert {x["path"] for x in s["ignored"]} == {"runs/hpcg-0/hpcg-np4-16x16x16-rt10.out"}


def test_a_failed_cases_line_is_no_result(tmp_path: Path) -> None:
    """ReFrame logs a case a second time, ``fail``, when a stage after its performance fails
    (its cleanup on a full disk); resume reruns it. Results hold the passing line of each
    case and skip the others, as resume does (t2hx/checks/resume.py)."""
    log = tmp_path / "camp"
    (log / "perflogs").mkdir(parents=True)
    case = dict(benchmark="mpigraph", combo="hx-dfsssp-linear", num_nodes=7, perf_var="send_avg",
                perf_unit="MB/s")
    (log / "perflogs" / "mpigraph.log").write_text("\n".join([
        HEADER,
        perflog_line(repetition=0, perf_value="100.0", result="fail", **case),
        perflog_line(repetition=1, perf_value="90.0", result="fail", **case),
        perflog_line(repetition=0, perf_value="101.0", result="pass", **case)]) + "\n")
    ing = ingest(log)
    df = ing.results
    assert df[["repetition", "value"]].values.tolist() == [[0, 101.0]]
    skipped = [x["reason"] for x in ing.summary.as_dict()["skipped"]]
    assert skipped == ["result fail, not pass"] * 2


def test_ingest_simulated_header_and_missing_combo(tmp_path: Path) -> None:
    log = tmp_path / "sim"
    run = log / "runs" / "r"
    run.mkdir(parents=True)
    text = (FIX / "netgauge/netgauge-ebb-np4-1MiB.out").read_text()
    (run / "ebb.out").write_text("# t2hx-simulated: fabric=hyperx routing=parx\n" + text)
    (run / "t2hx-run.json").write_text(json.dumps(
        {"benchmark": "ebb", "topology": "hyperx", "routing": "parx", "placement": "linear"}))
    df = ingest(log).results
    row = df[df["metric"] == "bandwidth"].iloc[0]
    assert row["simulated"] and row["combo"] == "hyperx/parx/linear" and row["nodes"] == 4
    assert row["value"] == 1225.911362 and row["msg_size"] == 1048576
    assert pd.isna(row["repetition"])


def test_line_written_by_reframes_own_formatter_is_ingested(tmp_path: Path) -> None:
    import logging

    from reframe.core.logging import CheckFieldFormatter

    fmt = CheckFieldFormatter(fmt=PERFLOG_FORMAT)
    rec = logging.LogRecord("rfm", logging.INFO, "x", 1, "msg", None, None)
    fields = dict(check_job_completion_time_unix=1.7e9, check_system="t2hx",
                  check_partition="hyperx", check_environ="gnu", check_info="IMB", version="4.10.4",
                  check_campaign="c", check_combo="hx-parx-clustered", check_topology="hyperx",
                  check_routing="parx", check_placement="clustered",
                  check_benchmark="imb-allreduce", check_num_nodes=28, check_repetition=3,
                  check_msg_size=None, check_git_hash="abc", check_simulated=True,
                  check_perf_var="t_min", check_perf_value=12.5, check_perf_unit="us",
                  check_perf_ref=0, check_perf_lower_thres=None, check_perf_upper_thres=None,
                  check_result="pass")
    for key, value in fields.items():
        setattr(rec, key, value)
    rec.__rfm_check__ = None
    rec.__rfm_loggable_attrs__ = []
    log = tmp_path / "c"
    (log / "perflogs").mkdir(parents=True)
    (log / "perflogs" / "IMB.log").write_text(HEADER + "\n" + fmt.formatMessage(rec) + "\n")
    row = ingest(log).results.iloc[0]
    assert (row["combo"], row["benchmark"], row["metric"], row["unit"], row["better"]) == \
        ("hx-parx-clustered", "imb-allreduce", "t_min", "us", "lower")
    assert (row["nodes"], row["repetition"], row["value"], row["simulated"]) == (28, 3, 12.5, True)
    assert pd.isna(row["msg_size"]) and row["system"] == "t2hx" and row["git_hash"] == "abc"


def test_raw_records_take_the_runs_registry_name(tmp_path: Path) -> None:
    """MuPP's IMB output says Multi-PingPong, qb@ll's parser says qbox: the rows carry the
    run's registry name, so a benchmark gets one figure, not one per name."""
    from t2hx.benchmarks import imbtext
    from t2hx.wire import WALLTIME_FORMAT

    log = tmp_path / "camp"
    mupp = tmp_path / "mupp.out"
    mupp.write_text(imbtext.render_multi_pingpong(imbtext.MultiPingPongOutput(
        "IMB-MPI1 -multi 0 PingPong", 4, [imbtext.PingPongRow(1024, 1000, 2.5, 2.5, 2.5, 409.6)])))
    qball = tmp_path / "qball.out"
    qball.write_text(WALLTIME_FORMAT.format(seconds=12.5) + "\n")
    common = dict(combo="c", topology="hyperx", routing="dfsssp", placement="linear",
                  nodes=4, repetition=0)
    make_run(log, "mupp-0", dict(common, benchmark="mupp"), [mupp])
    make_run(log, "qball-0", dict(common, benchmark="qball"), [qball])
    # An output of several IMB collectives keeps each collective's name.
    make_run(log, "bcast-0", dict(common, benchmark="imb-bcast"),
             [FIX / "imb/imb-mpi1-np4-collectives-msglog0-16.out"])
    df = ingest(log).results
    assert set(df[df["source"].str.contains("mupp")]["benchmark"]) == {"mupp"}
    assert set(df[df["source"].str.contains("qball")]["benchmark"]) == {"qball"}
    assert {"imb-bcast", "imb-allreduce"} <= set(df[df["source"].str.contains("bcast-0")][
        "benchmark"])
