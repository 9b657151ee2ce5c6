"""The reader of t2hx's ReFrame perflogs.

The format is a wire format (t2hx/wire.py: :data:`~t2hx.wire.PERFLOG_FIELDS`, written by
ReFrame with :data:`~t2hx.wire.PERFLOG_FORMAT` through the handler of
t2hx/reframe_site.py): every test parameter is its own ``|``-separated field, so a perflog
line is a complete, self-describing measurement (docs/formats.md#perflogs), one line per
performance variable (``perflog_multiline``; the reader relies on it: one line = one value).

Check attributes the fields read (``%(check_<name>)s``); a check that lacks one logs ``null``:

=================  ==========================================================================
``campaign``       campaign name (``log/<campaign>/``)
``combo``          combo label, e.g. ``hx-parx-clustered``
``topology``       plane / topology: ``fattree`` or ``hyperx``
``routing``        OpenSM engine: ``ftree``, ``sssp``, ``dfsssp``, ``parx``, ``sar`` …
``placement``      ``linear``, ``clustered``, ``random``, ``two-opt``
``benchmark``      benchmark family / name (``imb-allreduce``, ``ebb``, ``hpl`` …)
``num_nodes``      node count of the run
``repetition``     repetition index 0…N-1
``msg_size``       message size in bytes (``null`` for non-message benchmarks)
``git_hash``       t2hx git commit of the campaign
``simulated``      ``true`` on the simulated cluster
=================  ==========================================================================

ReFrame writes a header line of field names (``check_`` stripped) at the top of each file and
renames a file whose header changed to ``<name>.log.h<N>``; the reader maps fields by that
header, so old files with another field order still read correctly.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from t2hx.wire import PERFLOG_DELIM as DELIM
from t2hx.wire import PERFLOG_FIELDS
from t2hx.wire import PERFLOG_NULLS as NULLS

if TYPE_CHECKING:        # pandas costs 0.6 s: the checks import the parsers next to this
    import pandas as pd

REQUIRED = ("benchmark", "perf_var", "perf_value")


@dataclass
class PerflogRead:
    """Good lines as DataFrames (one per header, all values str, nulls NaN, ``_line`` = line
    number) and what was skipped, per line."""
    frames: list[pd.DataFrame] = field(default_factory=list)
    lines: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line number, reason)

    @property
    def rows(self) -> int:
        return sum(len(f) for f in self.frames)


def _is_header(line: str) -> bool:
    parts = line.split(DELIM)
    return "perf_var" in parts and "benchmark" in parts and "perf_value" in parts


def _frame(names: list[str], good: list[str], numbers: list[int]) -> tuple[pd.DataFrame,
                                                                         pd.Series]:
    import pandas as pd

    # pandas' C parser does the splitting: ~10x faster than building rows in Python.
    # Lines were split at "\n" only: a stray "\r" inside a line is data, not a new row.
    frame = pd.read_csv(io.StringIO("\n".join(good)), sep=DELIM, header=None, names=names,
                        dtype=str, keep_default_na=False, na_values=sorted(NULLS),
                        quoting=csv.QUOTE_NONE, engine="c", lineterminator="\n")
    frame["_line"] = numbers
    if all(k in frame for k in REQUIRED):
        missing = frame[list(REQUIRED)].isna().any(axis=1)
    else:
        missing = pd.Series(True, index=frame.index)
    return frame, missing


def read_perflog(path: Path) -> PerflogRead:
    """Read one perflog file; corrupt or truncated lines are skipped and listed, never fatal.

    Values stay strings here; :mod:`t2hx.post.ingest` converts them column-wise.
    """
    out = PerflogRead()
    raw = Path(path).read_bytes()
    lines = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
    unterminated = bool(lines) and lines[-1] != ""
    if not unterminated:
        lines.pop()
    names = list(PERFLOG_FIELDS)
    good: list[str] = []
    numbers: list[int] = []

    def flush() -> None:
        if good:
            frame, missing = _frame(names, good, numbers)
            for no in frame.loc[missing, "_line"]:
                out.skipped.append((int(no), "empty " + "/".join(REQUIRED)))
            out.frames.append(frame[~missing])

    want = len(names) - 1
    last = len(lines)
    bad_header = ""
    for no, line in enumerate(lines, start=1):
        if "perf_value" in line and _is_header(line):
            flush()
            good, numbers = [], []
            names = line.split(DELIM)
            want = len(names) - 1
            twice = sorted({n for n in names if names.count(n) > 1})
            bad_header = f"header line {no} repeats field {twice[0]!r}" if twice else ""
            continue
        if not line.strip():
            continue
        out.lines += 1
        if bad_header:      # its lines cannot be mapped to fields
            out.skipped.append((no, bad_header))
        elif unterminated and no == last:
            # The run died while ReFrame was writing this line: never trust it.
            out.skipped.append((no, "unterminated last line (truncated file)"))
        elif line.count(DELIM) != want:
            out.skipped.append((no, f"{line.count(DELIM) + 1} fields, header has {want + 1}"))
        else:
            good.append(line)
            numbers.append(no)
    flush()
    out.skipped.sort()
    return out


#: What identifies a capability case in a campaign (ReFrame's test parameters).
CASE_KEY: tuple[str, ...] = ("benchmark", "combo", "num_nodes", "repetition")


def recorded_cases(folder: Path, key: tuple[str, ...] = CASE_KEY) -> frozenset[tuple[str, ...]]:
    """The cases under ``folder`` that are *recorded*: a complete perflog line with a value
    and, when ReFrame logged one, result ``pass``. Resume skips exactly these, and
    ``t2hx campaign status`` counts them."""
    keys: set[tuple[str, ...]] = set()
    for path in sorted(folder.rglob("*.log*")) if folder.is_dir() else []:
        for frame in read_perflog(path).frames:   # complete lines only
            if any(k not in frame for k in key):
                continue
            good = frame["perf_value"].notna()
            if "result" in frame:
                good &= frame["result"].fillna("").str.strip() == "pass"
            for row in frame.loc[good, list(key)].itertuples(index=False):
                keys.add(tuple(str(v).strip() for v in row))
    return frozenset(keys)
