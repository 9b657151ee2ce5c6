#!/usr/bin/env python3
"""An independent count of each committed log's scorecard (#47 item 5): findings agreeing in
direction, and in direction and within 3× of the published number, out of the informative
findings. Read from the published and our numbers, not from the verdict, wherever both are
effects of one kind (a % change or a × ratio); claims without a magnitude (orderings, "on
par", ranks) count by their verdict. Informative: any verdict but not run, vacuous and
unresolved.

Direction: the effects have one sign (for a ratio, one side of 1). Within 3×: our effect is a
third to three times the published one (for ratios, of their logarithms). A range counts by
its middle. ``scorecard-before.json`` beside a scorecard (the contract it replaced) is
counted too, so a rerun's note can give both.

Writes bench/results/independent_count.json; ``--smoke DIR``: the smallest log with a
scorecard, into DIR/independent_count.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.atomic import atomic_write  # noqa: E402

NOT_INFORMATIVE = ("not run", "vacuous", "unresolved")
AGREEING = ("agrees", "same direction")
DIRECTION_ONLY = ("weaker", "stronger")


def _numbers(text: str) -> list[float]:
    head = text.split("[", 1)[0].replace("−", "-").replace(",", "")
    return [float(x) for x in re.findall(r"[+-]?\d+(?:\.\d+)?", head)]


def _kind(text: str) -> str | None:
    head = text.split("[", 1)[0]
    if head.lstrip().startswith(("≥", "≤", "#")):
        return None                      # a bound or a rank: no effect to compare
    return "ratio" if "×" in head else "pct" if "%" in head else None


def judge(published: str, ours: str, verdict: str) -> tuple[bool, bool]:
    """(agrees in direction, and within 3×) for one informative finding."""
    kind = _kind(published)
    pub, own = _numbers(published), _numbers(ours)
    if kind and kind == _kind(ours) and pub and own:
        p, o = sum(pub) / len(pub), sum(own) / len(own)
        if kind == "ratio":
            if p <= 0 or o <= 0:
                return False, False
            p, o = math.log(p), math.log(o)
        if p == 0:                       # "no change" published: the verdict's tolerance
            return verdict in AGREEING, verdict in AGREEING
        same = p * o > 0
        return same, same and 1 / 3 <= o / p <= 3
    return verdict in AGREEING + DIRECTION_ONLY, verdict in AGREEING


def count(path: Path) -> dict:
    claims = [c for c in json.loads(path.read_text())["claims"] if c.get("finding", True)]
    informative = [c for c in claims if c["verdict"] not in NOT_INFORMATIVE]
    judged = [judge(str(c["published"]), str(c["ours"]), c["verdict"]) for c in informative]
    return {"findings": len(claims), "informative": len(informative),
            "direction": sum(d for d, _ in judged),
            "direction_within_3x": sum(w for _, w in judged)}


def log_counts(logdir: Path) -> dict:
    out = {"after": count(logdir / "scorecard.json")}
    if (logdir / "scorecard-before.json").is_file():
        out["before"] = count(logdir / "scorecard-before.json")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", type=Path, default=None, help="smallest log only, into DIR")
    args = ap.parse_args()
    logs = sorted((p.parent for p in (ROOT / "log").glob("*/scorecard.json")),
                  key=lambda d: (d / "scorecard.json").stat().st_size)
    if args.smoke:
        logs = logs[:1]
    doc = {"method": __doc__.split("\n\n")[0].replace("\n", " "),
           "logs": {d.name: log_counts(d) for d in logs}}
    out = (args.smoke or ROOT / "bench" / "results") / "independent_count.json"
    atomic_write(out, json.dumps(doc, indent=1) + "\n")
    for name, c in doc["logs"].items():
        print(name, c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
