"""The report's summary pictures (#50): the scorecard picture (claims × node counts in
verdict colours), the packet/flow ratio grid, and seed 000 Fig 1's mpiGraph pair. Each is
drawn by the real gnuplot; the data file beside it carries what the picture shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from t2hx.post import tiles
from t2hx.post.figures import mpigraph_pairs
from t2hx.post.ingest import ingest
from t2hx.post.scorecard.text import VERDICT_COLOURS, rungs_of, rungs_text

PNG = b"\x89PNG\r\n\x1a\n"
FIX = Path(__file__).parent / "data" / "post" / "fixtures" / "mpigraph"


def cells(dat: Path) -> dict[tuple[int, int], tuple[int, str]]:
    rows = [ln.split("\t") for ln in dat.read_text().splitlines() if ln and not ln.startswith("#")]
    return {(int(c), int(r)): (int(rgb), text) for c, r, rgb, text in rows}


def test_rungs_text_round_trips() -> None:
    rungs = {7: "identical", 28: "agrees", 112: "same direction"}
    assert rungs_of(rungs_text(rungs)) == rungs and rungs_of("") == {}


def test_scorecard_picture_colours_each_claim_and_node_count(tmp_path: Path) -> None:
    sc = pd.DataFrame({"claim": ["a", "b", "c"], "verdict": ["agrees", "contradicts", "not run"],
                       "per node count": ["7: identical · 28: agrees", "28: contradicts", ""],
                       "finding": [True, True, False]})
    fig = tiles.scorecard_picture(sc, tmp_path)
    assert fig is not None and fig.files[0].read_bytes().startswith(PNG)
    got = cells(fig.data)
    colour = {v: int(c[1:], 16) for v, c in VERDICT_COLOURS.items()}
    # columns: verdict, 7 nodes, 28 nodes; rows in the claims' order
    assert got == {(0, 0): (colour["agrees"], "✓"), (1, 0): (colour["identical"], "="),
                   (2, 0): (colour["agrees"], "✓"), (0, 1): (colour["contradicts"], "✗"),
                   (2, 1): (colour["contradicts"], "✗"), (0, 2): (colour["not run"], "–")}
    assert tiles.scorecard_picture(sc.iloc[0:0], tmp_path) is None


def test_ratio_grid_reads_every_metric_as_speed(tmp_path: Path) -> None:
    side = pd.DataFrame([
        # a time twice as long on the packet engine: half the speed
        {"benchmark": "imb-bcast", "combo": "hx", "nodes": 4, "unit": "us", "packet_vs_flow": 2.0},
        # a bandwidth at 0.8 of the flow model's: 0.8 the speed
        {"benchmark": "ebb", "combo": "ft", "nodes": 4, "unit": "MB/s", "packet_vs_flow": 0.8},
        {"benchmark": "ebb", "combo": "hx", "nodes": 8, "unit": "MB/s", "packet_vs_flow": 1.0},
        {"benchmark": "odd", "combo": "ft", "nodes": 4, "unit": "MB/s", "packet_vs_flow": float("nan")},
    ])
    fig = tiles.ratio_grid(side, ["ft", "hx"], tmp_path)
    assert fig is not None and fig.files[0].read_bytes().startswith(PNG)
    got = cells(fig.data)
    # rows: ebb, imb-bcast; columns: ft·4, hx·4, hx·8 (the combos' order, then nodes)
    assert {k: t for k, (_, t) in got.items()} == {(0, 0): "0.80", (2, 0): "1.00", (1, 1): "0.50"}
    assert got[(2, 0)][0] == 0xf7f7f7                          # equal: white
    slower = got[(1, 1)][0]
    assert slower == (0xb3 << 16 | 0x58 << 8 | 0x06)           # half: saturated orange
    assert fig.table["speed ratio"].tolist() == [0.8, 1.0, 0.5]


def mpigraph_log(tmp_path: Path, combos: list[str]):
    """A log of one mpiGraph run (a real 4-rank output) per combo, ingested."""
    log = tmp_path / "log"
    for i, combo in enumerate(combos):
        run = log / "runs" / f"mpigraph-{i}"
        run.mkdir(parents=True)
        shutil.copy(FIX / "mpigraph-np4-1MiB-10x10.out", run)
        (run / "t2hx-run.json").write_text(json.dumps(dict(
            benchmark="mpigraph", combo=combo, topology="t", routing="r", placement="p",
            nodes=4, repetition=0)))
    return ingest(log)


def test_mpigraph_pair_puts_the_baseline_beside_the_last_combo(tmp_path: Path) -> None:
    data = mpigraph_log(tmp_path, ["ft", "mid", "hx"])
    figs = mpigraph_pairs(data.results, data.matrices, ["ft", "mid", "hx"], tmp_path)
    assert [f.name for f in figs] == ["mpigraph-pair-4"]
    fig = figs[0]
    assert fig.table["combo"].tolist() == ["ft", "hx"] and fig.files[0].read_bytes().startswith(PNG)
    body = fig.data.read_text().split("\n\n\n")          # gnuplot's data sets (index 0, 1)
    assert len(body) == 2 and all(len([ln for ln in b.splitlines() if ln and ln[0] != "#"]) == 16
                                  for b in body)
    assert mpigraph_pairs(data.results, data.matrices, ["mid"], tmp_path) == []


def test_no_pair_without_the_baseline(tmp_path: Path) -> None:
    data = mpigraph_log(tmp_path, ["mid", "hx"])
    assert mpigraph_pairs(data.results, data.matrices, ["ft", "mid", "hx"], tmp_path) == []


def test_figure_axes_print_sizes_with_iec_prefixes() -> None:
    from t2hx.post.figures import bytes_label

    assert [bytes_label(s) for s in (0, 8, 1024, 65536, 1 << 20, 3 << 30, 1536)] == \
        ["0 B", "8 B", "1 KiB", "64 KiB", "1 MiB", "3 GiB", "1536 B"]


def test_history_lines_go_logarithmic_when_one_routing_dwarfs_the_others() -> None:
    from t2hx.post.histories import spread_apart

    near = pd.DataFrame({"updn": [900.0, 1000.0], "sar": [500.0, 600.0]})
    apart = pd.DataFrame({"updn": [3000.0, 3100.0], "sar": [800.0, 0.0], "ftree": [0.0, 0.0]})
    assert not spread_apart(near) and spread_apart(apart)


def test_message_size_lines_get_a_ratio_panel(tmp_path: Path) -> None:
    from t2hx.post.figures import lines

    g = pd.DataFrame([{"benchmark": "imb-bcast", "metric": "t_max", "unit": "us", "msg_size": s,
                       "combo": c, "nodes": 4, "best": s * f}
                      for s in (65536, 262144) for c, f in (("a", 1.0), ("b", 1.01))])
    fig = lines(g, "imb-bcast", "t_max", "msg_size", ["a", "b"], tmp_path, "x", "t")
    assert fig is not None and all(f.stat().st_size > 0 for f in fig.files)
    assert fig.table.columns.tolist() == ["msg_size", "a", "b"]


def test_every_study_figure_set_has_a_drawing() -> None:
    """A study's ``figures:`` names a set replay draws (one table, no branches on names)."""
    from t2hx.post.replay import FIGURE_SETS
    from t2hx.study import FIGURE_SETS as NAMES

    assert set(FIGURE_SETS) == set(NAMES)
