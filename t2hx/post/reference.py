"""The seeds' reference numbers (docs/modelling.md#reference-numbers) and ours from the tidy tables.

Shown beside our numbers in the report of a simulated campaign. They are targets to compare
against, never test constants. Ours are like for like: seed 000's Fig 1 is the same 28 nodes
of one rack (linear placement, rack r01 on t2hx) under each fabric/routing, best of N; its
eBB ratio compares the paper's combos (HX/PARX/clustered vs HX/DFSSSP/linear) at 14 nodes;
seed 004's Table 1 numbers are SAR vs another engine on the same plane. A row whose like-for-
like data the campaign lacks says "not run". The full list of seed 000's statements with
verdicts is the scorecard (t2hx.post.scorecard).
"""

from __future__ import annotations

import pandas as pd

from t2hx.post.scorecard.selection import best, select

GIB = 1024.0


FIG1_NODES, FIG1_SIZE = 28, 1048576
NOT_RUN = "not run"


def _best(results: pd.DataFrame, bench: str, metric: str, nodes: int, size: int,
          topology: str, routing: str, placement: str) -> float | None:
    sel = select(results, {"benchmark": bench, "metric": metric, "nodes": [nodes],
                           "msg_size": [size]})
    b = best(sel, {"topology": topology, "routing": routing, "placement": placement})
    return float(b["value"].max()) if len(b) else None


def _mpigraph_avg(results: pd.DataFrame, topology: str, routing: str) -> float | None:
    """Fig 1: mpiGraph average send bandwidth [GiB/s] on the rack's 28 nodes, best of N."""
    v = _best(results, "mpigraph", "send_avg", FIG1_NODES, FIG1_SIZE, topology, routing,
              "linear")
    return None if v is None else v / GIB


def _ebb_ratio(results: pd.DataFrame, nodes: int) -> float | None:
    parx = _best(results, "ebb", "bandwidth", nodes, FIG1_SIZE, "hyperx", "parx", "clustered")
    dfs = _best(results, "ebb", "bandwidth", nodes, FIG1_SIZE, "hyperx", "dfsssp", "linear")
    return parx / dfs if parx is not None and dfs else None


def _labels(table: pd.DataFrame | None, engine: str) -> dict[str, pd.Series]:
    """Rows of an analysis table per plane for one engine (labels are ``plane-engine``)."""
    if table is None or table.empty:
        return {}
    parts = table["routing"].str.rsplit("-", n=1, expand=True)
    if parts.shape[1] < 2:
        return {}
    return {plane: row for plane, eng, (_, row) in zip(parts[0], parts[1], table.iterrows())
            if eng == engine}


def _sar_efi(efi_table: pd.DataFrame | None) -> float | None:
    """Largest relative reduction of the max EFI by SAR vs DFSSSP on the same plane."""
    sar, dfs = _labels(efi_table, "sar"), _labels(efi_table, "dfsssp")
    vals = [1.0 - sar[p]["max_efi"] / dfs[p]["max_efi"] for p in sar
            if p in dfs and dfs[p]["max_efi"] > 0]
    return max(vals) if vals else None


def _dark_drop(dark_table: pd.DataFrame | None, other: str) -> float | None:
    """Points by which SAR lowers the dark-fiber share vs ``other`` on the same plane."""
    sar, ref = _labels(dark_table, "sar"), _labels(dark_table, other)
    vals = [ref[p]["dark_fiber_percent"] - sar[p]["dark_fiber_percent"] for p in sar if p in ref]
    return max(vals) if vals else None


def comparison(results: pd.DataFrame, efi_table: pd.DataFrame | None,
               dark_table: pd.DataFrame | None) -> pd.DataFrame:
    """Rows: what, seed (published), ours (this campaign, like for like; "not run" if absent)."""
    def r(v: float | None, nd: int = 2) -> str:
        return NOT_RUN if v is None else f"{v:.{nd}f}"

    def pct(v: float | None) -> str:
        return NOT_RUN if v is None else f"{v:+.0%}".replace("%", " %")

    ft = _mpigraph_avg(results, "fattree", "ftree")
    dfs = _mpigraph_avg(results, "hyperx", "dfsssp")
    parx = _mpigraph_avg(results, "hyperx", "parx")
    rack = f"{FIG1_NODES} nodes of one rack (linear), best of N"
    ebb = _ebb_ratio(results, 14)
    sar_efi = _sar_efi(efi_table)
    rows = [
        (f"000 Fig 1: mpiGraph avg, {rack}, FT/ftree [GiB/s]", "2.26", r(ft)),
        (f"000 Fig 1: mpiGraph avg, {rack}, HX/DFSSSP [GiB/s]", "0.84", r(dfs)),
        (f"000 Fig 1: mpiGraph avg, {rack}, HX/PARX [GiB/s]", "1.39", r(parx)),
        ("000 Fig 1: HX/DFSSSP vs FT/ftree on the same rack", "0.37×",
         NOT_RUN if dfs is None or not ft else f"{dfs / ft:.2f}×"),
        ("000 Fig 1: HX/PARX vs HX/DFSSSP on the same rack", "+66 %",
         pct(None if parx is None or not dfs else parx / dfs - 1)),
        ("000 §5.1: eBB 1 MiB, 14 nodes, HX/PARX/clustered ÷ HX/DFSSSP/linear", "≈1.9×",
         NOT_RUN if ebb is None else f"{ebb:.2f}×"),
        ("004 Table 1: SAR lowers the max EFI vs DFSSSP (job-mix replay; avg–max, both "
         "systems)", "23–61 %", NOT_RUN if sar_efi is None else f"{sar_efi:.0%}".replace(
             "%", " %")),
        ("004 Table 1: SAR lowers the dark-fiber share vs DFSSSP [points] (avg–max, both "
         "systems)", "6.0–12.1", r(_dark_drop(dark_table, "dfsssp"), 1)),
        ("004 Table 1: SAR lowers the dark-fiber share vs fat-tree routing, Tsubame2.5 "
         "[points] (avg, max)", "10.0, 17.74", r(_dark_drop(dark_table, "ftree"), 1)),
    ]
    return pd.DataFrame(rows, columns=["reference", "seed", "ours"])
