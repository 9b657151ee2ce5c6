"""Verdicts before and after a model change: the claims whose verdict or number moved between
two scorecard contracts (``scorecard.json`` of a campaign, or ``bench/results/scorecard.json``).

A rerun of a committed campaign keeps the contract it replaces as ``scorecard-before.json`` in
the new log (:func:`keep_before`), so the report and ``t2hx scorecard --before`` can say, per
claim, what the model change did to it. The reason a verdict moved is the reader's to give (the
session note, docs/); this module only lines the two up.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2hx.errors import T2hxError

BEFORE = "scorecard-before.json"


@dataclass(frozen=True)
class Move:
    id: str
    mechanism: str
    before: str             # verdict; "absent" when the claim is new
    after: str
    ours_before: str
    ours_after: str

    @property
    def verdict_moved(self) -> bool:
        return self.before != self.after


def read_contract(path: Path) -> dict[str, dict[str, Any]]:
    """Claim id → claim of a contract file, or one line naming the file."""
    try:
        data = json.loads(Path(path).read_text())
        return {c["id"]: c for c in data["claims"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise T2hxError(f"not a scorecard contract ({type(e).__name__}: {e})", file=path,
                        field="claims", fix="pass a scorecard.json written by t2hx scorecard "
                        "--json or by a campaign") from None


def moves(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Move]:
    """Claims (in the after contract's order, then those it lost) whose verdict or number
    differs."""
    out = []
    for cid in [*after, *(c for c in before if c not in after)]:
        a, b = after.get(cid, {}), before.get(cid, {})
        move = Move(cid, str(a.get("mechanism") or b.get("mechanism") or ""),
                    str(b.get("verdict", "absent")), str(a.get("verdict", "absent")),
                    str(b.get("ours", "")), str(a.get("ours", "")))
        if move.verdict_moved or move.ours_before != move.ours_after:
            out.append(move)
    return out


def summary(ms: list[Move], total: int) -> str:
    moved = sum(m.verdict_moved for m in ms)
    return (f"against the previous contract: {moved} of {total} verdicts moved, "
            f"{len(ms) - moved} more claims changed their number only")


def table_text(ms: list[Move]) -> str:
    rows = [(m.id, f"{m.before} → {m.after}" if m.verdict_moved else m.after,
             f"{m.ours_before} → {m.ours_after}") for m in ms]
    head = ("claim", "verdict", "ours (before → after)")
    w = [max(len(r[i]) for r in [*rows, head]) for i in range(2)]
    return "".join(f"{a:{w[0]}}  {b:{w[1]}}  {c}\n" for a, b, c in [head, *rows])


def keep_before(logdir: Path, previous: list[Path]) -> Path | None:
    """Keep the first existing contract of ``previous`` as the log's before-contract, once per
    campaign directory (a resumed campaign must not replace it with its own partial one)."""
    from t2hx.atomic import atomic_write

    target = Path(logdir) / BEFORE
    if target.is_file():
        return target
    for path in previous:
        if Path(path).is_file():
            atomic_write(target, Path(path).read_text())
            return target
    return None
