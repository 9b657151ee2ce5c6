"""Relative gain vs the baseline combo, exactly as docs/modelling.md#relative-gain (seed 000 §5).

* lower-is-better metrics: ``gain = t_base / t − 1``
* higher-is-better metrics: ``gain = x / x_base − 1``

so a run 2.8× slower than the baseline has gain 1/2.8 − 1 = −0.64 either way, and 0 means
"as good as the baseline". Gains are computed from the best of N runs per cell. A cell without
a value, without a baseline value, or of unknown direction has gain NaN (drawn empty).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from t2hx.post.stats import CELL

MATCH = [c for c in CELL if c != "combo"]
# docs/modelling.md#the-study: combo (1) FT/ftree/linear is the baseline.
DEFAULT_BASELINE = ("fattree", "ftree", "linear")


def gain(value: Any, base: Any, better: Any) -> Any:
    """Elementwise gain; works on scalars and numpy/pandas arrays."""
    value = np.asarray(value, dtype=float)
    base = np.asarray(base, dtype=float)
    better = np.asarray(better, dtype=object)
    with np.errstate(divide="ignore", invalid="ignore"):
        lower = base / value - 1.0
        higher = value / base - 1.0
    out = np.where(better == "lower", lower, np.where(better == "higher", higher, np.nan))
    out = np.where(np.isfinite(out), out, np.nan)
    return out.item() if out.ndim == 0 else out


def choose_baseline(results: pd.DataFrame, provenance: dict[str, Any] | None = None) -> str | None:
    """provenance['baseline'] if present in the data, else the FT/ftree/linear combo, else the
    first combo in sorted order (reported in the report so a reader can see the choice)."""
    combos = sorted(c for c in results["combo"].dropna().unique())
    if not combos:
        return None
    wanted = (provenance or {}).get("baseline")
    if wanted in combos:
        return str(wanted)
    labelled = results.dropna(subset=["combo"]).drop_duplicates("combo")
    for _, row in labelled.sort_values("combo").iterrows():
        if (row["topology"], row["routing"], row["placement"]) == DEFAULT_BASELINE:
            return str(row["combo"])
    return combos[0]


def gains(stats: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """``stats`` (from t2hx.post.stats.summarize) plus ``base`` and ``gain`` per cell."""
    base = stats.loc[stats["combo"] == baseline, MATCH + ["best"]].rename(columns={"best": "base"})
    out = stats.merge(base, on=MATCH, how="left", sort=False)
    out["gain"] = gain(out["best"].to_numpy(), out["base"].to_numpy(), out["better"].to_numpy())
    return out
