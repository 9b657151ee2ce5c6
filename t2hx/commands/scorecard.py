"""``t2hx scorecard LOGDIR [--json OUT]``: seed 000's quantitative statements (Fig 1, §5) beside
ours from a campaign's log directory, with a verdict each (agrees / same direction / weaker /
stronger / vacuous / contradicts / not run; rules in docs/modelling.md#scorecard), and for a
claim over several node counts the verdict at each. Prints the table and the verdict counts.
Every claim is scored on the runs of the study's own system; runs of another system (a port)
only on the claims marked ``portable`` (docs/studies.md#ports-and-the-seeds-claims)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from t2hx import argtypes as A
from t2hx.errors import T2hxError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("scorecard", help="seed 000's claims vs a campaign: published, ours, "
                       "verdict", description=__doc__)
    p.add_argument("logdir", type=Path, metavar="LOGDIR", help="log/<campaign> directory")
    p.add_argument("--json", type=A.as_path(A.output_file), metavar="OUT", default=None,
                   help="also write {claims: [...], counts: {...}} to OUT (atomically)")
    p.add_argument("--claims", type=A.as_path(A.input_file), metavar="YAML", default=None,
                   help="claims file (default: conf/claims/<study>.yaml of the study that "
                   "produced the log)")
    p.add_argument("--before", type=A.as_path(A.input_file), metavar="JSON", default=None,
                   help="a previous contract (default: LOGDIR/scorecard-before.json when a "
                   "rerun kept one): list the claims whose verdict or number moved")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print each claim's statement and what a 'not run' needs")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from t2hx.atomic import atomic_write
    from t2hx.post import scorecard as S
    from t2hx.post.ingest import Summary, load_provenance

    from t2hx.post.freshness import freshness

    scores = S.scorecards(args.logdir, args.claims)
    if not any(score.verdicts for score in scores):
        raise nothing_to_score(args.logdir, [score.system for score in scores])
    print(freshness(args.logdir).line)      # today's scorer over which model's runs
    profile = load_provenance(args.logdir, Summary()).get("profile")
    for k, score in enumerate(scores):
        verdicts = score.verdicts
        if not score.own or len(scores) > 1:
            what = "every claim" if score.own else "portable claims only"
            print(f"{'' if k == 0 else chr(10)}{score.system or 'the log'}: {what}")
        if not verdicts:
            print("no claim is marked portable: nothing to score")
            continue
        print(S.table_text(verdicts), end="")
        if args.verbose:
            for v in verdicts:
                print(f"\n{v.id} ({v.source}): {v.statement}" + (f"\n  {v.note}" if v.note else ""))
        print(S.counts_line(verdicts, profile))
        print("\n".join(["by mechanism:", *S.mechanism_lines(verdicts)]))
    print_moves(args, scores[0].verdicts)
    # The contract file holds the first system's verdicts: the study's own when scored.
    if args.json is not None:
        atomic_write(args.json, json.dumps(S.contract(scores[0].verdicts), indent=2,
                                           ensure_ascii=False) + "\n")
        print(f"wrote {args.json}")
    return 0


def print_moves(args: argparse.Namespace, verdicts: list) -> None:
    from t2hx.post.scorecard import moves, text

    before = args.before or args.logdir / moves.BEFORE
    if args.before is None and not before.is_file():
        return
    ms = moves.moves(moves.read_contract(before), {c["id"]: c for c in
                                                  text.contract(verdicts)["claims"]})
    print(f"\n{moves.summary(ms, len(verdicts))} ({before})")
    if ms:
        print(moves.table_text(ms), end="")


def nothing_to_score(logdir: Path, systems: list[str]) -> T2hxError:
    """Only runs of systems the study was not written for, and no portable claim: a table
    of nothing would exit 0 and say nothing."""
    names = ", ".join(name for name in systems if name) or "other systems"
    return T2hxError(f"nothing to score: the log's runs are of {names}, not the study's own "
                     "systems, and none of its claims is marked portable", file=logdir,
                     fix="score a log of the study's own systems, or pass --claims with "
                     "portable claims")
