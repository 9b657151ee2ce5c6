"""Judging ours against a published statement (the rules are in the package docstring)."""

from __future__ import annotations

from typing import Any

import numpy as np

from t2hx.errors import T2hxError
from t2hx.post.scorecard.selection import Ours

def _dir(x: float, dead: float) -> int:
    return 1 if x > dead else -1 if x < -dead else 0


def judge(pub: dict[str, Any], ours: Ours, settings: dict[str, Any]) -> str:
    dead = float(settings.get("dead_band", 0.01))
    tol = settings.get("tolerance", {"abs": 0.05, "rel": 0.25})

    def tol_of(p: float) -> float:
        return max(float(tol.get("abs", 0.0)), float(tol.get("rel", 0.0)) * abs(p))

    o = ours.value
    if "rank" in pub:
        if ours.rank is None or ours.of is None:
            raise T2hxError("a published rank is judged against a computed one",
                            field="compute.kind", fix="compute a rank claim with kind: rank")
        want = pub["rank"] if pub["rank"] > 0 else ours.of + 1 + pub["rank"]
        return "agrees" if ours.rank == want else "contradicts"
    if "value" in pub:
        ok = abs(o / float(pub["value"]) - 1.0) <= float(settings.get("value_tolerance", 0.1))
        return "agrees" if ok else "contradicts"
    if "at_least" in pub:
        return "agrees" if o >= float(pub["at_least"]) else "contradicts"
    if "at_most" in pub:
        return "agrees" if o <= float(pub["at_most"]) else "contradicts"
    if "par" in pub:
        return "agrees" if abs(o) <= float(settings.get("par_band", 0.05)) else "contradicts"
    if "sign" in pub:
        return "agrees" if _dir(o, dead) == int(pub["sign"]) else "contradicts"
    if "range" in pub:
        lo, hi = (float(x) for x in pub["range"])
        mid = (lo + hi) / 2
        t = tol_of(mid)
        cells = ours.cells if ours.cells else [o]
        if all(lo - t <= c <= hi + t for c in cells):
            return "agrees"
        return "same direction" if _dir(float(np.median(cells)), dead) == _dir(mid, dead) \
            else "contradicts"
    g = float(pub["gain"]) if "gain" in pub else float(pub["ratio"]) - 1.0
    if abs(o - g) <= tol_of(g):
        return "agrees"
    return "same direction" if _dir(o, dead) == _dir(g, dead) else "contradicts"
