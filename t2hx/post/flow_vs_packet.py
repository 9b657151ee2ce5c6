"""Flow model and packet engine side by side (docs/modelling.md#packet-engine).

A study may simulate a benchmark on the packet engine (``engine: packet``); each such case
is also simulated on the flow model, and that companion run is kept under
``log/<campaign>/companion/flow/`` (t2hx/checks/base.py). This module sets the two beside
each other, case by case, and scores the seed's claims twice: on the campaign as it ran,
and on the same campaign with every companion row in place of the packet row of its case.
The claims whose verdict differs are the effect of the engine alone: same inputs, same
repetitions, same noise draws, same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from t2hx import benchmarks
from t2hx.post.ingest import KEY
from t2hx.post.records import better_for
from t2hx.post.scorecard.text import Verdict

#: One table cell of the side-by-side: a case's metric at one message size.
CELL = ["benchmark", "metric", "unit", "combo", "nodes", "msg_size"]
SIDE_COLUMNS = [*CELL, "flow", "packet", "packet_vs_flow"]
CHANGE_COLUMNS = ["claim", "source", "published", "ours_flow", "verdict_flow",
                  "ours_packet", "verdict_packet"]


@dataclass(frozen=True)
class ModelComparison:
    cases: int                  # companion runs' rows matched to the campaign's
    side_by_side: pd.DataFrame  # SIDE_COLUMNS, the largest message size of each case
    changes: pd.DataFrame       # CHANGE_COLUMNS, the claims whose verdict the engine changes
    scored: int                 # claims scored both ways


def as_dict(cmp: ModelComparison) -> dict[str, object]:
    """The comparison as plain data (the report's data/engines.json)."""
    side = cmp.side_by_side.astype(object).where(cmp.side_by_side.notna(), None)
    return {"companion_rows": cmp.cases, "claims_scored": cmp.scored,
            "verdicts_changed": len(cmp.changes),
            "changes": cmp.changes.to_dict(orient="records"),
            "side_by_side": side.to_dict(orient="records")}


def compare(results: pd.DataFrame, flow: pd.DataFrame,
            score: Callable[[pd.DataFrame], list[Verdict]]) -> ModelComparison:
    """The side-by-side table and the verdicts ``score`` gives the campaign as it ran and
    with the flow model's rows in place of the packet engine's."""
    packet_verdicts, flow_verdicts = score(results), score(on_flow(results, flow))
    return ModelComparison(len(flow), side_by_side(results, flow),
                            verdict_changes(packet_verdicts, flow_verdicts),
                            len(packet_verdicts))


def on_flow(results: pd.DataFrame, flow: pd.DataFrame) -> pd.DataFrame:
    """The campaign's rows with each case the flow model also ran replaced by its flow row."""
    if flow.empty:
        return results
    keys = pd.MultiIndex.from_frame(flow[KEY].astype(str))
    mine = pd.MultiIndex.from_frame(results[KEY].astype(str)).isin(keys)
    return pd.concat([results[~mine], flow[results.columns]], ignore_index=True)


def side_by_side(results: pd.DataFrame, flow: pd.DataFrame) -> pd.DataFrame:
    """Best of the repetitions per cell on each engine, at each case's largest message size
    (the benchmark's metric as the perflog records it)."""
    if flow.empty:
        return pd.DataFrame(columns=SIDE_COLUMNS)
    keys = pd.MultiIndex.from_frame(flow[KEY].astype(str))
    packet = results[pd.MultiIndex.from_frame(results[KEY].astype(str)).isin(keys)]
    both = pd.concat([packet.assign(engine="packet"), flow.assign(engine="flow")])
    both = both[[primary_metric(bench) in (None, metric) for bench, metric in
                 zip(both["benchmark"], both["metric"])]]
    both = both.assign(msg_size=both["msg_size"].fillna(-1))
    largest = both.groupby(["benchmark", "metric", "combo", "nodes"])["msg_size"].transform("max")
    both = both[both["msg_size"] == largest]
    rows = []
    for cell, grp in both.groupby(CELL, dropna=False, sort=True):
        pick = max if better_for(str(cell[2])) == "higher" else min
        best = {e: pick(g["value"]) for e, g in grp.groupby("engine")}
        if set(best) == {"flow", "packet"}:
            rows.append([*cell, best["flow"], best["packet"], best["packet"] / best["flow"]
                         if best["flow"] else float("nan")])
    out = pd.DataFrame(rows, columns=SIDE_COLUMNS)
    out["msg_size"] = out["msg_size"].where(out["msg_size"] >= 0)
    return out


def primary_metric(benchmark: str) -> str | None:
    """The seed's Table 2 metric of a benchmark (None: the registry does not know it)."""
    hit = benchmarks.find(benchmark)
    return hit[0].metric if hit else None


def verdict_changes(packet: list[Verdict], flow: list[Verdict]) -> pd.DataFrame:
    """The claims whose verdict differs between the two scorings, in claims-file order."""
    by_id = {v.id: v for v in flow}
    rows = [[p.id, p.source, p.published, by_id[p.id].ours, by_id[p.id].verdict,
             p.ours, p.verdict] for p in packet
            if p.id in by_id and by_id[p.id].verdict != p.verdict]
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)
