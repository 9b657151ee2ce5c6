"""Like-for-like selection of a campaign's tidy results for a claim, and best of N per cell
(the rules are in the package docstring, t2hx/post/scorecard/__init__.py)."""

from __future__ import annotations

import contextvars
import math
import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from t2hx.post.gain import DEFAULT_BASELINE, gain

SPEC_KEYS = ("topology", "routing", "placement", "combo")   # combo: by name (seed 003)
BASE_SPEC = dict(zip(SPEC_KEYS, DEFAULT_BASELINE))
CELL = ["benchmark", "metric", "nodes", "msg_size"]


class NotRun(Exception):
    """No like-for-like data; the message says what is missing."""


@dataclass
class Ours:
    """Our number for a claim, and what it was computed over."""
    value: float                        # gain, value, trend, spread difference
    cells: list[float] | None = None    # every cell's gain (rank: every ranked combo's score)
    rank: int | None = None
    of: int | None = None
    where: str = ""
    control: float | None = None        # the largest effect any contrast of the cells shows
    rungs: dict[int, Ours] = field(default_factory=dict)   # per node count, when several
    draws: list[float] = field(default_factory=list)       # the value draw by draw (paired)
    draw_cells: list[list[float]] = field(default_factory=list)   # rank: every combo's score
    #                                                                 draw by draw (paired)
    identical: list[int] = field(default_factory=list)     # rungs equal by construction


def listed(v: Any) -> list:
    return v if isinstance(v, list) else [v]


def _bounded(col: pd.Series, want: Any) -> pd.Series:
    if want is None:
        return pd.Series(True, index=col.index)
    if isinstance(want, dict):
        ok = col.notna()
        if "min" in want:
            ok &= col >= want["min"]
        if "max" in want:
            ok &= col <= want["max"]
        return ok.fillna(False).astype(bool)
    return col.isin(listed(want)).fillna(False).astype(bool)


def select(results: pd.DataFrame, comp: dict[str, Any]) -> pd.DataFrame:
    """The rows a claim may use: its benchmark(s), metric, node counts and message sizes."""
    df = results[results["benchmark"].isin(listed(comp["benchmark"]))]
    if comp.get("metric", "*") != "*":
        df = df[df["metric"].isin(listed(comp["metric"]))]
    df = df[_bounded(df["nodes"], comp.get("nodes"))]
    df = df[_bounded(df["msg_size"], comp.get("msg_size"))]
    if comp.get("msg_size") is None and len(df):
        # perflog rows without a size duplicate raw rows that carry one: keep the sized ones
        case = ["benchmark", "metric", "topology", "routing", "placement", "nodes"]
        sized = df["msg_size"].notna()
        has = df[sized][case].drop_duplicates().assign(_sized=True)
        df = df.merge(has, on=case, how="left")
        df = df[sized.to_numpy() | df["_sized"].isna().to_numpy()].drop(columns="_sized")
    return df


def matches(df: pd.DataFrame, spec: dict[str, str]) -> pd.Series:
    ok = pd.Series(True, index=df.index)
    for k in SPEC_KEYS:
        if k in spec:
            ok &= df[k] == spec[k]
    return ok.fillna(False).astype(bool)


def label(spec: dict[str, str]) -> str:
    if "combo" in spec:
        return spec["combo"]
    return "/".join(spec.get(k, "*") for k in SPEC_KEYS[:3])


#: How a cell's runs become its one value, as the paper reads its figure: "best" of N (seed
#: 000 reports the best of its ten runs) or "median" (seed 001's box plots over mapping
#: draws). A claims file's ``defaults: {runs: median}`` or a claim's own ``runs:``; score()
#: sets it around each claim.
RUNS = contextvars.ContextVar("runs", default="best")
RUNS_STATS = ("best", "median")


def best(df: pd.DataFrame, spec: dict[str, str], sum_metrics: bool = False,
         worst: bool = False) -> pd.DataFrame:
    """Best (or worst) of N per cell and combo of the rows matching ``spec`` — their median
    where the claim reads runs by their median (``RUNS``): columns CELL + combo, better,
    value, runs, spread."""
    sub = df[matches(df, spec)]
    if sub.empty:
        return pd.DataFrame(columns=CELL + ["combo", "better", "value", "runs", "spread"])
    rows = []
    for key, g in sub.groupby(CELL + ["combo", "better"], dropna=False, sort=True):
        v = g["value"].to_numpy(dtype=float)
        higher = key[-1] == "higher"
        b = (v.min() if higher else v.max()) if worst else (v.max() if higher else v.min())
        if RUNS.get() == "median":
            b = float(pd.Series(v).median())
        spread = (v.max() - v.min()) / abs(b) if len(v) > 1 and b else math.nan
        rows.append(dict(zip(CELL + ["combo", "better"], key), value=b, runs=len(v),
                         spread=spread))
    out = pd.DataFrame(rows)
    if sum_metrics:
        out = out.groupby(["benchmark", "nodes", "msg_size", "combo", "better"], dropna=False,
                          as_index=False).agg(value=("value", "sum"), runs=("runs", "min"),
                                              spread=("spread", "max"))
        out["metric"] = "*"
    return out


def cell_gains(df: pd.DataFrame, subject: Any, base: dict[str, str],
               sum_metrics: bool) -> pd.DataFrame:
    """Per cell: the subject's gain vs the base (best gain among several subject combos)."""
    b = best(df, base, sum_metrics)
    if b.empty:
        raise NotRun(f"no {label(base)} runs")
    per = []
    for spec in listed(subject):
        s = best(df, spec, sum_metrics)
        if s.empty:
            continue
        m = s.merge(b[CELL + ["value"]].rename(columns={"value": "base"}), on=CELL, how="inner")
        if len(m):
            m["gain"] = gain(m["value"].to_numpy(), m["base"].to_numpy(), m["better"].to_numpy())
            per.append(m)
    if not per:
        raise NotRun(f"no {' or '.join(label(s) for s in listed(subject))} runs in the cells "
                     f"{label(base)} has")
    allg = pd.concat(per, ignore_index=True).dropna(subset=["gain"])
    if allg.empty:
        raise NotRun("no gain computable (unknown metric direction)")
    return allg.groupby(CELL, dropna=False, as_index=False)["gain"].max()


def _per_draw(df: pd.DataFrame, spec: dict[str, str], sum_metrics: bool) -> pd.Series:
    """Each repetition's value per cell of the rows matching ``spec`` (index CELL +
    repetition; duplicate rows of one run averaged)."""
    sub = df[matches(df, spec) & df["repetition"].notna()]
    keys = CELL + ["repetition", "better"]
    v = sub.groupby(keys, dropna=False)["value"].mean()
    if sum_metrics:
        v = v.groupby([k for k in keys if k != "metric"], dropna=False).sum()
        v = pd.concat({"*": v}, names=["metric"]).reorder_levels(keys)
    return v


def draw_gains(df: pd.DataFrame, subject: Any, base: dict[str, str], sum_metrics: bool
               ) -> pd.DataFrame:
    """Per cell and repetition r: the subject's run r against the base's run r (paired by
    repetition, as the study's noise and eBB's bisections are drawn: the same draw under
    every combo), the best gain among several subject combos. Columns CELL + repetition,
    gain; only repetitions every cell has."""
    if "repetition" not in df.columns:
        return pd.DataFrame(columns=CELL + ["repetition", "gain"])
    b = _per_draw(df, base, sum_metrics).rename("base")
    per = []
    for spec in listed(subject):
        m = pd.concat([_per_draw(df, spec, sum_metrics).rename("value"), b], axis=1,
                      join="inner").reset_index()
        if len(m):
            m["gain"] = gain(m["value"].to_numpy(), m["base"].to_numpy(), m["better"].to_numpy())
            per.append(m)
    if not per:
        return pd.DataFrame(columns=CELL + ["repetition", "gain"])
    g = pd.concat(per).dropna(subset=["gain"]).groupby(CELL + ["repetition"], dropna=False,
                                                        as_index=False)["gain"].max()
    if g.empty:
        return g
    ncells = len(g.groupby(CELL, dropna=False))
    shared = g.groupby("repetition")["gain"].transform("size") == ncells
    return g[shared]


def draws_of(g: pd.DataFrame, how: str) -> list[float]:
    """The claim's aggregate draw by draw (empty below two draws)."""
    if g.empty or g["repetition"].nunique() < 2:
        return []
    return [agg(r["gain"], how) for _, r in g.groupby("repetition")]


def agg(values: pd.Series, how: str) -> float:
    return float({"median": values.median, "mean": values.mean, "max": values.max,
                  "min": values.min}[how]())


WORKLOAD_METRIC = re.compile(r"^j(\d+)-(.+?)(-alone)?$")


def workload_jobs(df: pd.DataFrame) -> pd.DataFrame:
    """Per (combo, workload, job): app, step time in the workload (mix) and alone, from the
    perf variables of checks/workload.py (``j<k>-<app>``, ``j<k>-<app>-alone``)."""
    rows: dict[tuple, dict] = {}
    for r in df.itertuples(index=False):
        m = WORKLOAD_METRIC.match(str(r.metric))
        if not m:
            continue
        key = (r.combo, int(r.repetition) if pd.notna(r.repetition) else 0, int(m.group(1)))
        rows.setdefault(key, {"combo": key[0], "workload": key[1], "job": key[2],
                              "app": m.group(2)})["alone" if m.group(3) else "mix"] = r.value
    return pd.DataFrame(list(rows.values()), columns=["combo", "workload", "job", "app",
                                                      "mix", "alone"]).dropna()
