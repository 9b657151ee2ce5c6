"""Per-cell statistics over repetitions: best of N and min/q1/median/q3/max.

A cell is one (benchmark, metric, unit, better, combo, nodes, msg_size). Missing keys (e.g. no
msg_size for an app) are kept as their own group (``dropna=False``), never silently dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CELL = ["benchmark", "metric", "unit", "better", "combo", "nodes", "msg_size"]
STATS_COLUMNS = CELL + ["runs", "best", "min", "q1", "median", "q3", "max"]


def summarize(results: pd.DataFrame) -> pd.DataFrame:
    """One row per cell with runs, best, min, q1, median, q3, max (linear quantiles)."""
    if results.empty:
        return pd.DataFrame(columns=STATS_COLUMNS)
    g = results.groupby(CELL, dropna=False, sort=True)["value"]
    out = g.agg(runs="count", min="min", max="max", median="median")
    out["q1"] = g.quantile(0.25)
    out["q3"] = g.quantile(0.75)
    out = out.reset_index()
    higher = out["better"].eq("higher").fillna(False).to_numpy(dtype=bool)
    lower = out["better"].eq("lower").fillna(False).to_numpy(dtype=bool)
    out["best"] = np.where(higher, out["max"], np.where(lower, out["min"], np.nan))
    return out[STATS_COLUMNS]
