"""Gains and statistics from small hand-checked tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from t2hx.post.gain import choose_baseline, gain, gains
from t2hx.post.stats import summarize


def test_gain_formula_design_section_6() -> None:
    # 2.8x slower than the baseline -> -0.64, for times and for rates alike.
    assert gain(28.0, 10.0, "lower") == pytest.approx(1 / 2.8 - 1)
    assert round(gain(28.0, 10.0, "lower"), 2) == -0.64
    assert round(gain(10.0, 28.0, "higher"), 2) == -0.64
    assert gain(5.0, 10.0, "lower") == pytest.approx(1.0)      # twice as fast
    assert gain(15.0, 10.0, "higher") == pytest.approx(0.5)    # 1.5x the bandwidth
    assert gain(10.0, 10.0, "lower") == 0.0
    assert math.isnan(gain(10.0, float("nan"), "lower"))       # no baseline: missing
    assert math.isnan(gain(10.0, 5.0, None))                   # unknown direction: missing
    assert math.isnan(gain(0.0, 5.0, "lower"))                 # division by zero: missing


def table() -> pd.DataFrame:
    rows = []
    # baseline "base": times 10, 12, 11 (best 10); "slow": 28, 30 (best 28); "fast": 5.
    for combo, values in {"base": [10, 12, 11], "slow": [28, 30], "fast": [5]}.items():
        for rep, v in enumerate(values):
            rows.append(dict(benchmark="imb-bcast", metric="t_min", unit="us", better="lower",
                             combo=combo, nodes=4, msg_size=1024, value=float(v),
                             topology="hyperx", routing="x", placement="y", repetition=rep))
    # a rate metric; "slow" has no run at all at 8 nodes -> stays missing
    for combo, v in {"base": 100.0, "fast": 150.0}.items():
        rows.append(dict(benchmark="ebb", metric="bandwidth", unit="MiB/s", better="higher",
                         combo=combo, nodes=8, msg_size=None, value=v,
                         topology="t", routing="r", placement="p", repetition=0))
    df = pd.DataFrame(rows)
    df.loc[df["combo"] == "base", ["topology", "routing", "placement"]] = \
        ["fattree", "ftree", "linear"]
    df["nodes"] = df["nodes"].astype("Int64")
    df["msg_size"] = df["msg_size"].astype("Int64")
    return df


def test_stats_best_and_quartiles() -> None:
    st = summarize(table())
    base = st[(st["combo"] == "base") & (st["benchmark"] == "imb-bcast")].iloc[0]
    assert (base["runs"], base["best"], base["min"], base["max"]) == (3, 10.0, 10.0, 12.0)
    assert (base["q1"], base["median"], base["q3"]) == (10.5, 11.0, 11.5)
    ebb = st[(st["benchmark"] == "ebb") & (st["combo"] == "fast")].iloc[0]
    assert ebb["best"] == 150.0 and pd.isna(ebb["msg_size"])   # NaN key kept, not dropped


def test_gains_table() -> None:
    df = table()
    assert choose_baseline(df) == "base"
    assert choose_baseline(df, {"baseline": "fast"}) == "fast"
    g = gains(summarize(df), "base").set_index(["benchmark", "combo"])
    assert g.loc[("imb-bcast", "slow"), "gain"] == pytest.approx(10 / 28 - 1)
    assert g.loc[("imb-bcast", "fast"), "gain"] == pytest.approx(1.0)
    assert g.loc[("imb-bcast", "base"), "gain"] == 0.0
    assert g.loc[("ebb", "fast"), "gain"] == pytest.approx(0.5)
    assert ("ebb", "slow") not in g.index        # no row invented for a missing cell
    assert np.isnan(gains(summarize(df), "nonexistent")["gain"]).all()
