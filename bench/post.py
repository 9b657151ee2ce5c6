#!/usr/bin/env python3
"""Post-processing benchmark: 10^6 perflog rows → tidy table → all figures and the report.

Writes bench/results/post.json with rows, seconds (replay only; generating the synthetic
perflog is not timed), per-stage seconds and peak RSS. Goal: < 60 s on 2 cores.
Usage: .venv/bin/python bench/post.py [--rows N] [--out FILE]

``--smoke DIR``: 2,000 rows, the result in DIR/post.json (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402
from t2hx.post.ingest import ingest  # noqa: E402
from t2hx.post.replay import replay  # noqa: E402
from t2hx.post.synth import write_campaign  # noqa: E402

GOAL_SECONDS = 60.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "post.json")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds: 2,000 rows; result in DIR (not bench/results/)")
    args = ap.parse_args()
    if args.smoke:
        args.rows, args.out = 2000, args.smoke / "post.json"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log" / "bench"
        t0 = time.perf_counter()
        write_campaign(log, rows=args.rows, reps=0, nodes=(7, 14, 28, 56, 112, 224, 448, 672),
                       sizes=(0, 8, 1024, 65536, 1 << 20, 1 << 24))
        # replay refuses a log without provenance; the synthetic perflogs' commit is this one
        (log / "provenance.json").write_text(json.dumps({"git_hash": "0123abc"}))
        gen = time.perf_counter() - t0
        t1 = time.perf_counter()
        ing = ingest(log)
        t_ingest = time.perf_counter() - t1
        t2 = time.perf_counter()
        res = replay(log, Path(tmp) / "out", quiet=True)
        seconds = time.perf_counter() - t2
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    result = {
        "benchmark": "post", "rows": args.rows, "table_rows": int(len(ing.results)),
        "seconds": round(seconds, 2), "ingest_seconds": round(t_ingest, 2),
        "generate_seconds": round(gen, 2), "figures": len(res.figures),
        "peak_rss_mib": round(rss_mib, 1), "goal_seconds": GOAL_SECONDS,
        "goal_met": seconds < GOAL_SECONDS,
        "note": "seconds = full replay (ingest + stats + tables + gnuplot figures + report)",
    }
    atomic_write(args.out, json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
