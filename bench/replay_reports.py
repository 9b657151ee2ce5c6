#!/usr/bin/env python3
"""Committed reports are what their logs replay to (#49 item 5): every committed campaign log
is replayed into a temporary folder by `t2hx replay` and its report (report.md, report.html)
compared byte for byte with the committed one. Records per log whether each matches and the
seconds the replay took. Writes bench/results/replay_reports.json.

Contract: {logs: {name: {report_md, report_html (true when byte-identical), seconds}},
all_identical}.

``--smoke DIR``: the smallest log with a report only, the result in DIR.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.cli import main as t2hx

ROOT = Path(__file__).resolve().parent.parent
REPORTS = ("report.md", "report.html")


def committed() -> dict[str, Path]:
    """Each committed log with a report, and the folder its report is in (the reference
    campaign's is the top-level paper/)."""
    out = {}
    for log in sorted(p for p in (ROOT / "log").iterdir() if p.is_dir()):
        paper = ROOT / "paper" if log.name == "reference" else log / "paper"
        if (paper / "report.md").is_file():
            out[log.name] = paper
    return out


def smallest(logs: dict[str, Path]) -> str:
    return min(logs, key=lambda n: sum(f.stat().st_size for f in (ROOT / "log" / n).rglob("*")
                                       if f.is_file()))


def replayed(name: str, paper: Path, work: Path) -> dict:
    out = work / name
    t0 = time.monotonic()
    code = t2hx(["-q", "replay", str(ROOT / "log" / name), "--out", str(out)])
    seconds = round(time.monotonic() - t0, 1)
    same = {r.replace(".", "_"): code == 0 and (out / r).is_file() and
            (out / r).read_bytes() == (paper / r).read_bytes() for r in REPORTS}
    return {**same, "seconds": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", type=Path, metavar="DIR", help="the smallest log; result in DIR")
    args = ap.parse_args()
    logs = committed()
    if args.smoke:
        logs = {n: logs[n] for n in [smallest(logs)]}
    with tempfile.TemporaryDirectory(prefix="replay-reports-") as work:
        found = {n: replayed(n, p, Path(work)) for n, p in logs.items()}
    result = {"logs": found, "all_identical": all(
        r["report_md"] and r["report_html"] for r in found.values())}
    out = (args.smoke or ROOT / "bench" / "results") / "replay_reports.json"
    atomic_write(out, json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))
    return 0 if result["all_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
