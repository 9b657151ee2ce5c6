"""Deterministic table files: same rows in → same bytes out (parquet and CSV).

Rows are sorted on every column, the index is dropped, dtypes are fixed per column, and files
are written to a temp name in the same directory and renamed (never half-written).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from t2hx.atomic import atomic_with


def _atomic(path: Path, write) -> None:
    atomic_with(path, lambda tmp: write(str(tmp)))


def canonical(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Columns in the given order, rows sorted by all of them, fresh index."""
    df = df[columns]
    return df.sort_values(columns, kind="mergesort", na_position="first").reset_index(drop=True)


def write_table(df: pd.DataFrame, stem: Path) -> None:
    """Write ``stem.parquet`` and ``stem.csv``."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    # pandas' schema metadata embeds library versions only; keep it so pandas round-trips
    # dtypes, but it is stable for a given environment (requirements.lock pins it).
    _atomic(stem.with_suffix(".parquet"),
            lambda p: pq.write_table(table, p, compression="zstd", write_statistics=False))
    # pyarrow's CSV writer: ~10x faster than DataFrame.to_csv and just as deterministic.
    _atomic(stem.with_suffix(".csv"), lambda p: pacsv.write_csv(table, p))


def write_text(path: Path, text: str) -> None:
    def write(p: str) -> None:
        with open(p, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    _atomic(path, write)


def write_json(path: Path, data: object) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
