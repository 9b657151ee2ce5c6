"""The seeds' reference numbers (docs/modelling.md#reference-numbers) and ours from the tidy tables.

Shown beside our numbers in the report of a simulated campaign. They are targets to compare
against, never test constants.
"""

from __future__ import annotations

import pandas as pd

GIB = 1024.0


def _mpigraph_avg(results: pd.DataFrame, topology: str, routing: str, nodes: int) -> float | None:
    sub = results[(results["benchmark"] == "mpigraph") & (results["metric"] == "send_avg")
                  & (results["topology"] == topology) & (results["routing"] == routing)
                  & (results["nodes"] == nodes)]
    return float(sub["value"].max()) / GIB if len(sub) else None


def _ebb_ratio(results: pd.DataFrame, nodes: int) -> float | None:
    sub = results[(results["benchmark"] == "ebb") & (results["metric"] == "bandwidth")
                  & (results["nodes"] == nodes) & (results["topology"] == "hyperx")]
    parx = sub.loc[sub["routing"] == "parx", "value"]
    dfs = sub.loc[sub["routing"] == "dfsssp", "value"]
    return float(parx.max() / dfs.max()) if len(parx) and len(dfs) and dfs.max() > 0 else None


def _sar_efi(efi_table: pd.DataFrame | None) -> float | None:
    if efi_table is None or efi_table.empty:
        return None
    sar = efi_table[efi_table["routing"].str.contains("sar", case=False)]
    dfs = efi_table[efi_table["routing"].str.contains("dfsssp", case=False)]
    if sar.empty or dfs.empty or dfs["max_efi"].max() <= 0:
        return None
    return float(1.0 - sar["max_efi"].min() / dfs["max_efi"].max())


def _sar_dark(dark_table: pd.DataFrame | None) -> float | None:
    if dark_table is None or dark_table.empty:
        return None
    sar = dark_table[dark_table["routing"].str.contains("sar", case=False)]
    dfs = dark_table[dark_table["routing"].str.contains("dfsssp", case=False)]
    if sar.empty or dfs.empty:
        return None
    return float(sar["dark_fiber_percent"].max() - dfs["dark_fiber_percent"].min())


def comparison(results: pd.DataFrame, efi_table: pd.DataFrame | None,
               dark_table: pd.DataFrame | None) -> pd.DataFrame:
    """Rows: what, seed (published), ours (this campaign, None = not measured)."""
    def r(v: float | None, nd: int = 2) -> str:
        return "n/a" if v is None else f"{v:.{nd}f}"
    ft = _mpigraph_avg(results, "fattree", "ftree", 28)
    dfs = _mpigraph_avg(results, "hyperx", "dfsssp", 28)
    parx = _mpigraph_avg(results, "hyperx", "parx", 28)
    gain = None if parx is None or dfs is None or dfs == 0 else parx / dfs - 1
    sar_efi, sar_dark = _sar_efi(efi_table), _sar_dark(dark_table)
    rows = [
        ("000 Fig 1: mpiGraph avg, 28 nodes, FT/ftree [GiB/s]", "2.26", r(ft)),
        ("000 Fig 1: mpiGraph avg, 28 nodes, HX/DFSSSP [GiB/s]", "0.84", r(dfs)),
        ("000 Fig 1: mpiGraph avg, 28 nodes, HX/PARX [GiB/s]", "1.39", r(parx)),
        ("000 Fig 1: PARX vs DFSSSP mpiGraph gain", "+66 %",
         "n/a" if gain is None else f"{gain:+.0%}".replace("%", " %")),
        ("000 §5.1: eBB PARX / DFSSSP at 14 nodes", "≈1.9×",
         "n/a" if _ebb_ratio(results, 14) is None else f"{_ebb_ratio(results, 14):.2f}×"),
        ("004 Table 1: SAR lowers max EFI vs DFSSSP", "23–61 %",
         "n/a" if sar_efi is None else f"{sar_efi:.0%}".replace("%", " %")),
        ("004 Table 1: dark fiber SAR − DFSSSP [points]", "+6…17",
         "n/a" if sar_dark is None else f"{sar_dark:+.1f}"),
    ]
    return pd.DataFrame(rows, columns=["reference", "seed", "ours"])
