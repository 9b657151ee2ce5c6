"""``t2hx scorecard LOGDIR [--json OUT]``: seed 000's quantitative statements (Fig 1, §5) beside
ours from a campaign's log directory, with a verdict each (agrees / same direction /
contradicts / not run; rules in t2hx.scorecard). Prints the table and the verdict counts."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scorecard", help="seed 000's claims vs a campaign: published, ours, "
                       "verdict", description=__doc__)
    p.add_argument("logdir", type=Path, metavar="LOGDIR", help="log/<campaign> directory")
    p.add_argument("--json", type=Path, metavar="OUT", default=None,
                   help="also write {claims: [...], counts: {...}} to OUT (atomically)")
    p.add_argument("--claims", type=Path, metavar="YAML", default=None,
                   help="claims file (default: conf/claims/<study>.yaml of the study that "
                   "produced the log)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print each claim's statement and what a 'not run' needs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx import scorecard as S
    from t2hx.atomic import atomic_write

    verdicts = S.scorecard(args.logdir, args.claims)
    print(S.table_text(verdicts), end="")
    if args.verbose:
        for v in verdicts:
            print(f"\n{v.id} ({v.source}): {v.statement}" + (f"\n  {v.note}" if v.note else ""))
    print(S.counts_line(verdicts))
    if args.json is not None:
        atomic_write(args.json, json.dumps(S.contract(verdicts), indent=2, ensure_ascii=False)
                     + "\n")
        print(f"wrote {args.json}")
    return 0
