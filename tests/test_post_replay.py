"""Replay: figures (PNG/PDF + data files with the expected numbers), byte-identical tables
from a copied log directory, and a damaged log directory that still yields everything else."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from t2hx.wire import PERFLOG_HEADER as HEADER
from t2hx.post.replay import REPO, default_out, replay
from t2hx.post.synth import perflog_line, write_campaign
from t2hx.cli import main
from t2hx.errors import T2hxError
from t2hx.post import archive

FIX = Path(__file__).parent / "data" / "post" / "fixtures"
PNG = b"\x89PNG\r\n\x1a\n"
COMBOS = {"ft": ("fattree", "ftree", "linear"), "hx": ("hyperx", "dfsssp", "linear")}


def add_run(log: Path, name: str, meta: dict, files: list[Path | tuple[str, str]]) -> None:
    run = log / "runs" / name
    run.mkdir(parents=True)
    for f in files:
        if isinstance(f, tuple):
            (run / f[0]).write_text(f[1])
        else:
            shutil.copy(f, run / f.name)
    (run / "t2hx-run.json").write_text(json.dumps(meta))


def hand_campaign(log: Path) -> None:
    """Small hand-checked numbers: IMB Allreduce and eBB, two combos."""
    lines = [HEADER]
    values = {  # (combo, nodes, size) -> t_min per repetition [us]
        ("ft", 4, 8): [10.0, 12.0, 11.0], ("hx", 4, 8): [28.0, 30.0],
        ("ft", 4, 1024): [20.0], ("hx", 4, 1024): [10.0],
        ("ft", 8, 8): [40.0], ("hx", 8, 1024): [5.0],    # (hx,8,8) and (ft,8,1024) missing
    }
    for (c, n, s), vs in values.items():
        topo, rt, pl = COMBOS[c]
        for rep, v in enumerate(vs):
            lines.append(perflog_line(benchmark="imb-allreduce", perf_var="t_min",
                                      perf_value=v, perf_unit="us", num_nodes=n, msg_size=s,
                                      repetition=rep, combo=c, topology=topo, routing=rt,
                                      placement=pl, system="t2hx", simulated="true"))
    for c, vs in {"ft": [100.0, 120.0, 80.0, 90.0, 110.0], "hx": [150.0, 140.0]}.items():
        topo, rt, pl = COMBOS[c]
        for rep, v in enumerate(vs):
            lines.append(perflog_line(benchmark="ebb", perf_var="bandwidth", perf_value=v,
                                      perf_unit="MiB/s", num_nodes=14, msg_size=1048576,
                                      repetition=rep, combo=c, topology=topo, routing=rt,
                                      placement=pl, system="t2hx", simulated="true"))
    (log / "perflogs" / "t2hx").mkdir(parents=True)
    (log / "perflogs" / "t2hx" / "hand.log").write_text("\n".join(lines) + "\n")
    (log / "provenance.json").write_text(json.dumps({
        "campaign": "hand", "conf_hash": "c0ffee", "git_hash": "0123abc", "date": "2026-11-21",
        "versions": {"openmpi": "4.1.4", "opensm": "3.3.23"}, "baseline": "ft"}))


def data_rows(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text().splitlines()
            if line and not line.startswith("#")]


def assert_figure(files: dict[str, Path], stem: str) -> None:
    assert files[stem + ".png"].read_bytes()[:8] == PNG
    pdf = files[stem + ".pdf"].read_bytes()
    assert pdf[:5] == b"%PDF-" and b"/CreationDate (D:19700101000000Z)" in pdf
    assert files[stem + ".dat"].stat().st_size > 0


def test_hand_checked_figures(tmp_path: Path) -> None:
    log = tmp_path / "hand"
    hand_campaign(log)
    res = replay(log, tmp_path / "out", quiet=True)
    files = {p.name: p for p in (tmp_path / "out" / "figures").iterdir()}
    assert_figure(files, "gain-grid-imb-allreduce")
    grid = {(int(r[0]), int(r[1])): r for r in data_rows(files["gain-grid-imb-allreduce.dat"])}
    # columns: (4,8) (4,1024) (8,8) (8,1024); one row (hx) below the baseline ft
    assert len(grid) == 4
    assert float(grid[(0, 0)][2]) == pytest.approx(10 / 28 - 1)     # 2.8x slower -> -0.64
    assert round(float(grid[(0, 0)][2]), 2) == -0.64
    assert float(grid[(1, 0)][2]) == pytest.approx(1.0)             # 2x faster -> +1
    assert grid[(2, 0)][2] == "NaN" and grid[(3, 0)][2] == "NaN"   # missing stay missing
    assert [grid[(i, 0)][3:5] for i in range(4)] == [["4", "8"], ["4", "1024"], ["8", "8"],
                                                     ["8", "1024"]]
    assert_figure(files, "whisker-ebb-bandwidth")
    wh = data_rows(files["whisker-ebb-bandwidth.dat"])
    ft, hx = wh[0], wh[1]
    assert [float(v) for v in ft[3:8]] == [80.0, 90.0, 100.0, 110.0, 120.0]
    assert ft[8] == "NaN"                                   # the baseline gets no label
    assert [float(v) for v in hx[3:8]] == [140.0, 142.5, 145.0, 147.5, 150.0]
    assert float(hx[8]) == pytest.approx(150 / 120 - 1) and hx[10] == "+25%"
    assert_figure(files, "ebb-bandwidth")
    eb = pd.read_csv(files["ebb-bandwidth.dat"], sep="\t", comment="#")
    assert eb.to_dict("list") == {"nodes": [14], "ft": [120.0], "hx": [150.0]}
    md = (tmp_path / "out" / "report.md").read_text()
    for text in ("c0ffee", "0123abc", "openmpi=4.1.4", "2026-11-21", "| baseline | ft |",
                 "figures/gain-grid-imb-allreduce.png", "2.26", "Nothing was skipped"):
        assert text in md, text
    html = (tmp_path / "out" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "gain-grid-imb-allreduce.png" in html
    assert res.summary["skipped"] == []


def full_campaign(log: Path) -> None:
    write_campaign(log, rows=900, reps=2, nodes=(4, 8), sizes=(8, 1024))
    (log / "provenance.json").write_text(json.dumps({"git_hash": "0123abc"}))
    for i, (c, src, n) in enumerate([("ft", "mpigraph-np4-1MiB-10x10.out", 4),
                                     ("hx", "mpigraph-np4-1MiB-10x10.out", 4),
                                     ("hx", "mpigraph-np2-1MiB-10x10.out", 2)]):
        topo, rt, pl = COMBOS[c]
        add_run(log, f"mpigraph-{i}", dict(benchmark="mpigraph", combo=f"{c}-mpigraph",
                                           topology=topo, routing=rt, placement=pl, nodes=n,
                                           repetition=0), [FIX / "mpigraph" / src])
    add_run(log, "imb-0", dict(benchmark="imb", combo="ft-ftree-linear", topology="fattree",
                               routing="ftree", placement="linear", repetition=5),
            [FIX / "imb/imb-mpi1-np4-collectives-msglog0-16.out"])


EXPECTED = {"capacity", "ebb-bandwidth", "routing-dark-fiber", "routing-efi-histogram",
            "mpigraph-ft-mpigraph-4", "mpigraph-hx-mpigraph-4", "mpigraph-hx-mpigraph-2",
            "gain-grid-ring-allreduce", "ring-allreduce-4", "ring-allreduce-8",
            "whisker-hpl-gflops", "whisker-amg-solver_walltime", "whisker-ebb-bandwidth",
            "whisker-imb-barrier-t_min", "whisker-mpigraph-send_avg"} | \
    {f"gain-grid-imb-{c}" for c in ("bcast", "gather", "scatter", "reduce", "allreduce",
                                     "alltoall")}


def test_every_figure_kind_and_byte_identical_replay(tmp_path: Path) -> None:
    log = tmp_path / "a" / "quick"
    full_campaign(log)
    res = replay(log, None, quiet=True)
    assert res.out == log / "paper"
    names = {f.name for f in res.figures}
    assert EXPECTED <= names, EXPECTED - names
    figdir = log / "paper" / "figures"
    files = {p.name: p for p in figdir.iterdir()}
    for stem in names:
        assert_figure(files, stem)
    heat = data_rows(files["mpigraph-ft-mpigraph-4.dat"])
    assert len(heat) == 16 and heat[1] == ["0", "1", format(1235.530 / 1024, ".10g")]
    assert "average 1.08 GiB/s" in files["mpigraph-ft-mpigraph-4.dat"].read_text()
    cap = pd.read_csv(files["capacity.dat"], sep="\t", comment="#").set_index("app")
    assert cap.loc["amg", "ft-ftree-linear"] == 20 and cap.loc["mupp", "hx-parx-clustered"] == 34
    dark = data_rows(files["routing-dark-fiber.dat"])
    assert dark == [["hyperx-dfsssp", "5", "5.0%"], ["hyperx-sar", "12", "12.0%"]]
    efi = pd.read_csv(files["routing-efi-histogram.dat"], sep="\t", comment="#")
    assert efi["hyperx-dfsssp"].sum() == 200 and efi.loc[0, "hyperx-sar"] >= 24
    md = (log / "paper" / "report.md").read_text()
    assert "Seeds' reference numbers beside ours" in md and "≈1.9×" in md
    # every seed-000 figure has its equivalent named in the report
    for key in ("Fig 1", "Fig 4", "Fig 5", "Fig 6", "Fig 7"):
        row = next(line for line in md.splitlines() if line.startswith(f"| {key} |"))
        assert not row.endswith("| – |"), row
    assert "| Fig 7 | capacity run: finished runs per app and combo | capacity |" in md
    # what an evaluator reads first: simulated or measured, how, and the scorecard's counts
    glance = md[md.index("## At a glance"):md.index("## Systems")]
    assert "all simulated" in glance and "noise model" in glance and "Scorecard (" in glance
    # provenance: each key once, the runs as a table of their own
    prov = md[md.index("## Provenance"):md.index("## Inputs")]
    keys = [ln.split("|")[1].strip() for ln in prov.splitlines() if ln.startswith("| ")]
    assert len(keys) == len(set(keys)) and "runs" not in keys and "{" not in prov
    # replay of a copy elsewhere, its raw outputs packed as a large campaign is committed:
    # byte-identical data tables
    copy = tmp_path / "b" / "quick"
    shutil.copytree(log, copy, ignore=shutil.ignore_patterns("paper"))
    twin = tmp_path / "c" / "quick"
    shutil.copytree(copy, twin)
    assert main(["-q", "replay", str(copy), "--out", str(tmp_path / "elsewhere"), "--pack"]) == 0
    assert not (copy / "runs").exists() and (copy / "runs.tar.xz").is_file()
    assert archive.pack(twin, "runs") is not None          # the same outputs, the same bytes
    assert (twin / "runs.tar.xz").read_bytes() == (copy / "runs.tar.xz").read_bytes()
    assert archive.unpack(twin, "runs")        # what `campaign run` does before it appends
    assert not (twin / "runs.tar.xz").exists()
    assert sorted(p.relative_to(twin).as_posix() for p in (twin / "runs").rglob("*")) == \
        sorted(p.relative_to(log).as_posix() for p in (log / "runs").rglob("*"))
    # a large archive is committed as numbered parts, read and resumed as the whole one
    whole = (copy / "runs.tar.xz").read_bytes()
    third = len(whole) // 3 - 1
    parts = archive.pack(twin, "runs", part_bytes=third)
    assert [p.name for p in parts] == [f"runs.tar.xz.{i:03d}" for i in range(4)]
    assert b"".join(p.read_bytes() for p in parts) == whole and not (twin / "runs.tar.xz").exists()
    assert all(p.stat().st_size <= third for p in parts)
    assert replay(twin, tmp_path / "from-parts", quiet=True).summary["skipped"] == []
    assert (tmp_path / "from-parts/data/results.csv").read_bytes() == \
        (log / "paper/data/results.csv").read_bytes()
    assert archive.unpack(twin, "runs") and not list(twin.glob("runs.tar.xz*"))
    archive.pack(twin, "runs", part_bytes=len(whole) // 2 - 1)      # repacked: stale parts go
    assert len(list(twin.glob("runs.tar.xz.*"))) == 3
    (twin / "runs.tar.xz").write_bytes(whole)
    with pytest.raises(T2hxError, match="both runs.tar.xz and its parts"):
        replay(twin, tmp_path / "refused", quiet=True)
    (copy / "runs").mkdir()                      # both a folder and its archive: refused
    with pytest.raises(T2hxError, match="both runs/ and runs.tar.xz"):
        replay(copy, tmp_path / "refused", quiet=True)
    for name in ("results", "matrices", "stats"):
        for ext in ("parquet", "csv"):
            a = (log / "paper" / "data" / f"{name}.{ext}").read_bytes()
            b = (tmp_path / "elsewhere" / "data" / f"{name}.{ext}").read_bytes()
            assert a == b, f"{name}.{ext}"
    assert (log / "paper/data/summary.json").read_bytes() == \
        (tmp_path / "elsewhere/data/summary.json").read_bytes()
    # ... and byte-identical figures (PNG, PDF without cairo's wall-clock date, data)
    for fig in sorted(figdir.iterdir()):
        assert fig.read_bytes() == (tmp_path / "elsewhere" / "figures" / fig.name).read_bytes(), \
            fig.name
    df = pd.read_parquet(log / "paper" / "data" / "results.parquet")
    assert len(df) == len(pd.read_csv(log / "paper" / "data" / "results.csv"))
    assert df["simulated"].any()
    # a figure an earlier replay drew and this one does not is removed, nothing else
    stale = {"collective-old-512-large.png", "collective-old-512-large.dat"}
    for name in stale:
        (figdir / name).write_text("drawn by an older t2hx\n")
    before = {p.name for p in figdir.iterdir()}
    replay(log, None, quiet=True)
    assert {p.name for p in figdir.iterdir()} == before - stale


def test_damaged_log_dir_yields_the_rest(tmp_path: Path) -> None:
    log = tmp_path / "damaged"
    full_campaign(log)
    good = replay(log, tmp_path / "good", quiet=True)
    # truncate the perflog in the middle of a line, add an empty output and an unknown benchmark
    perflog = log / "perflogs" / "sim" / "campaign.log"
    text = perflog.read_text()
    perflog.write_text(text[: len(text) - 37])
    add_run(log, "empty", dict(benchmark="mpigraph", combo="ft-mpigraph", nodes=8),
            [("mpigraph.out", "")])
    add_run(log, "weird", dict(benchmark="linpack-xyz", combo="ft"), [("out.txt", "1 2 3\n")])
    res = replay(log, tmp_path / "out", quiet=True)
    assert {f.name for f in res.figures} == {f.name for f in good.figures}
    skipped = {(s["what"], s["path"]): s["reason"] for s in res.summary["skipped"]}
    assert "unterminated" in skipped[("perflog line", "perflogs/sim/campaign.log:901")]
    assert skipped[("raw output", "runs/empty/mpigraph.out")] == "empty output"
    assert skipped[("run", "runs/empty")] == "no result in any output file"
    assert skipped[("run", "runs/weird")] == "unknown benchmark 'linpack-xyz'"
    assert len(skipped) == 4
    md = (tmp_path / "out" / "report.md").read_text()
    assert "### Skipped (4)" in md and "unknown benchmark 'linpack-xyz'" in md
    assert "runs/empty/mpigraph.out | empty output" in md


def test_default_out_and_run_replay_script(tmp_path: Path) -> None:
    assert default_out(REPO / "log" / "reference") == REPO / "paper"
    assert default_out(tmp_path / "x") == tmp_path / "x" / "paper"
    log = tmp_path / "hand"
    hand_campaign(log)
    env = dict(os.environ, T2HX_QUIET="1")
    proc = subprocess.run([str(REPO / "run" / "replay"), str(log), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "report:" in proc.stdout and (tmp_path / "o" / "report.html").is_file()
    bad = subprocess.run([str(REPO / "run" / "replay"), str(tmp_path / "missing")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "log directory not found" in bad.stderr


def test_replay_refuses_what_is_not_one_campaign(tmp_path, capsys) -> None:
    """The log root (a folder of campaigns) and an empty folder end in one line, exit 2,
    naming what was found and a campaign to replay instead."""
    root = tmp_path / "log"
    for name in ("alpha", "beta"):
        (root / name / "perflogs").mkdir(parents=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    for path, words in ((root, ("a folder of 2 campaigns (alpha, beta)", "log/alpha")),
                        (empty, ("no campaign here",))):
        assert main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and all(w in err for w in words), err
        assert not (path / "paper").exists()
