"""HPL 2.x ``HPL.out`` and HPCC's ``hpccoutf.txt`` (same HPL block plus a summary section).

Result rows follow the ``T/V N NB P Q Time Gflops`` header: ``WR11C2R4 1000 64 1 2 0.06
1.0505e+01``. Each row is followed by its residual check (``... PASSED`` / ``FAILED``); a row
whose check FAILED is not a result and is dropped. HPCC's summary (``HPL_Tflops=…``) is used
only when no HPL row survives (e.g. an HPCC build that prints the summary only).
"""

from __future__ import annotations

import re

from t2hx.post.records import ParseError, Record, record, to_float

NUM = r"([0-9.]+(?:[eE][+-]?[0-9]+)?)"
ROW_RE = re.compile(rf"^(W\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+{NUM}\s+{NUM}\s*$")
CHECK_RE = re.compile(r"\.{3,}\s*(PASSED|FAILED)\s*$")
SUMMARY_RE = re.compile(r"^(HPL_Tflops|HPL_time|HPL_N|HPL_NB|HPL_nprow|HPL_npcol|"
                        r"CommWorldProcs)=(\S+)\s*$")


def parse(text: str) -> list[Record]:
    lines = text.splitlines()
    source = "hpcc" if "Begin of Summary section" in text or "HPCC" in text[:2000] else "hpl"
    recs: list[Record] = []
    pending: list[Record] = []
    for line in lines:
        if m := ROW_RE.match(line.strip()):
            n, nb, p, q = (int(m.group(i)) for i in range(2, 6))
            params = {"N": n, "NB": nb, "P": p, "Q": q, "ranks": p * q,
                      "variant": m.group(1), "source": source}
            pending = [record("hpl", "gflops", "Gflop/s", to_float(m.group(7)), **params),
                       record("hpl", "time", "s", to_float(m.group(6)), **params)]
        elif (m := CHECK_RE.search(line)) and pending:
            if m.group(1) == "PASSED":
                recs.extend(pending)
            pending = []
    recs.extend(pending)  # a row without a residual line (check disabled) still counts
    if not recs:
        recs = _summary(lines, source)
    if not recs:
        raise ParseError("no HPL result row that passed its residual check",
                         fix="the run failed or was cut short; see 'End of Tests.'")
    return recs


def _summary(lines: list[str], source: str) -> list[Record]:
    kv = {m.group(1): m.group(2) for line in lines if (m := SUMMARY_RE.match(line.strip()))}
    if "HPL_Tflops" not in kv:
        return []
    try:
        params = {"N": int(kv["HPL_N"]), "NB": int(kv["HPL_NB"]), "P": int(kv["HPL_nprow"]),
                  "Q": int(kv["HPL_npcol"]), "ranks": int(kv.get("CommWorldProcs", 0)) or None,
                  "source": source}
        return [record("hpl", "gflops", "Gflop/s", to_float(kv["HPL_Tflops"]) * 1000.0, **params),
                record("hpl", "time", "s", to_float(kv["HPL_time"]), **params)]
    except (KeyError, ValueError):
        return []
