"""mpiGraph v1.5: ``Send``/``Recv`` bandwidth matrices in MiB/s plus their max/avg.

:func:`parse` gives the summary records (``send_avg``, ``send_max``, ``recv_avg``,
``recv_max``); :func:`matrices` gives every matrix cell for the heatmaps. In the ``Send``
matrix row = sender, column = receiver; in the ``Recv`` matrix row = receiver, column = sender
(mpiGraph prints ``host:rank to`` / ``host:rank from`` rows). A matrix with missing rows or
cells (truncated output) is rejected as a whole.
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

KV_RE = re.compile(r"^(MsgSize|Times|Window|Procs)\s+(\d+)\s*$")
SUMMARY_RE = re.compile(r"^(Send|Recv) (max|avg)\s+([0-9.eE+-]+)\s*$")
ROW_RE = re.compile(r"^(\S+) (to|from)\s+(.*)$")


def _header(text: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for line in text.splitlines()
            if (m := KV_RE.match(line.strip()))}


def parse(text: str) -> list[Record]:
    if "START mpiGraph" not in text:
        raise ParseError("not an mpiGraph output (no 'START mpiGraph' line)")
    if "END mpiGraph" not in text:
        raise ParseError("mpiGraph output is truncated (no 'END mpiGraph' line)")
    head = _header(text)
    params = {"ranks": head.get("Procs"), "msg_size": head.get("MsgSize"),
              "times": head.get("Times"), "window": head.get("Window")}
    recs = [record("mpigraph", f"{m.group(1).lower()}_{m.group(2)}", "MiB/s",
                   to_float(m.group(3)), **params)
            for line in text.splitlines() if (m := SUMMARY_RE.match(line.strip()))]
    if not recs:
        raise ParseError("mpiGraph output has no 'Send avg' / 'Recv avg' lines")
    return recs


def matrices(text: str) -> list[dict]:
    """Every cell: {kind: send|recv, row, col, value} with ranks as indices."""
    procs = _header(text).get("Procs")
    cells: list[dict] = []
    kind = None
    rows: list[list[float]] = []
    for line in text.splitlines() + [""]:
        stripped = line.rstrip()
        if stripped.startswith("Send\t") or stripped.startswith("Recv\t") \
                or stripped in ("Send", "Recv"):
            kind, rows = stripped.split()[0].lower(), []
            continue
        m = ROW_RE.match(stripped)
        if kind and m:
            rows.append([to_float(v) for v in m.group(3).split()])
            continue
        if kind:
            cells.extend(_matrix_cells(kind, rows, procs))
            kind = None
    return cells


def _matrix_cells(kind: str, rows: list[list[float]], procs: int | None) -> list[dict]:
    n = procs or len(rows)
    if len(rows) != n or any(len(r) != n for r in rows):
        raise ParseError(f"mpiGraph {kind} matrix is incomplete ({len(rows)} of {n} rows)")
    return [{"kind": kind, "row": i, "col": j, "value": v}
            for i, r in enumerate(rows) for j, v in enumerate(r)]
