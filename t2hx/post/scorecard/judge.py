"""Judging ours against a published statement (the rules are in the package docstring)."""

from __future__ import annotations

from typing import Any

import numpy as np

from t2hx.errors import T2hxError
from t2hx.post.scorecard.selection import Ours

#: "Same direction" needs the magnitude within this factor of the published one.
MAGNITUDE = 3.0


def _dir(x: float, dead: float) -> int:
    return 1 if x > dead else -1 if x < -dead else 0


def _direction(o: float, g: float, dead: float) -> str:
    """Beyond the tolerance: same sign and magnitude within MAGNITUDE, weaker, stronger, or
    contradicts (opposite sign, or no effect where the paper reports one)."""
    if _dir(o, dead) != _dir(g, dead) or _dir(o, dead) == 0:
        return "contradicts"
    if abs(o) * MAGNITUDE < abs(g):
        return "weaker"
    if abs(o) > MAGNITUDE * abs(g):
        return "stronger"
    return "same direction"


def _bounded(holds: bool, ours: Ours, dead: float) -> str:
    """A bound or "on par" that holds says something only if the same cells show an effect
    somewhere: otherwise the model could not have failed it."""
    if not holds:
        return "contradicts"
    return "agrees" if ours.control is not None and ours.control > dead else "vacuous"


#: The absolute part of a tolerance is at most this share of the quantity judged, unless the
#: claim's own sentence gives one (``tolerance: {abs: ..., stated: "<its words>"}``): an
#: absolute 5 points judged a 3.6-point effect "agrees" at a fifth of its size.
ABS_SHARE = 0.1


def tolerance(tol: dict[str, Any], p: float) -> float:
    """How far ours may sit from the published ``p`` and still agree:
    max(min(abs, |p|/10), rel·|p|), or max(abs, rel·|p|) with a ``stated`` tolerance."""
    absolute = float(tol.get("abs", 0.0))
    if not tol.get("stated"):
        absolute = min(absolute, ABS_SHARE * abs(p))
    return max(absolute, float(tol.get("rel", 0.0)) * abs(p))


#: The share of draws left out at each end before asking whether the draws agree on a
#: direction: one draw in ten may disagree (a noisy run, an unlucky mapping).
DRAW_TAIL = 0.1


def draw_band(ours: Ours) -> tuple[float, float] | None:
    """The middle of the paired draws (DRAW_TAIL to 1 - DRAW_TAIL quantiles), or None
    below two draws."""
    if len(ours.draws) < 2:
        return None
    q = np.quantile(np.asarray(ours.draws, dtype=float), [DRAW_TAIL, 1.0 - DRAW_TAIL])
    return float(q[0]), float(q[1])


def unresolved(ours: Ours, dead: float) -> bool:
    """The draws disagree on the ordering: the middle of them reaches from one side of the
    dead band to the other (or into it), so which combo is better is a matter of the draw."""
    band = draw_band(ours)
    return band is not None and _dir(band[0], dead) != _dir(band[1], dead)


#: Published forms that state an ordering, which repeated draws can leave unresolved.
ORDERINGS = ("gain", "ratio", "sign")


def is_ordering(pub: dict[str, Any]) -> bool:
    return any(k in pub for k in ORDERINGS)


def judge(pub: dict[str, Any], ours: Ours, settings: dict[str, Any]) -> str:
    dead = float(settings.get("dead_band", 0.01))
    if is_ordering(pub) and unresolved(ours, dead):
        return "unresolved"
    tol = settings.get("tolerance", {"abs": 0.05, "rel": 0.25})

    def tol_of(p: float) -> float:
        return tolerance(tol, p)

    o = ours.value
    if "rank" in pub:
        if ours.rank is None or ours.of is None:
            raise T2hxError("a published rank is judged against a computed one",
                            field="compute.kind", fix="compute a rank claim with kind: rank")
        want = pub["rank"] if pub["rank"] > 0 else ours.of + 1 + pub["rank"]
        held = rank_held(ours, want, dead)
        if held is not None and DRAW_TAIL < held < 1.0 - DRAW_TAIL:
            return "unresolved"
        first, last = rank_span(ours, dead)
        if first == last == want:
            return "agrees"
        return "weaker" if first <= want <= last else "contradicts"     # tied with neighbours
    if "value" in pub:
        ok = abs(o / float(pub["value"]) - 1.0) <= float(settings.get("value_tolerance", 0.1))
        return "agrees" if ok else "contradicts"
    if "at_least" in pub:
        return _bounded(o >= float(pub["at_least"]), ours, dead)
    if "at_most" in pub:
        return _bounded(o <= float(pub["at_most"]), ours, dead)
    if "par" in pub:
        return _bounded(abs(o) <= float(settings.get("par_band", 0.05)), ours, dead)
    if "sign" in pub:
        return "agrees" if _dir(o, dead) == int(pub["sign"]) else "contradicts"
    if "range" in pub:
        lo, hi = (float(x) for x in pub["range"])
        mid = (lo + hi) / 2
        t = tol_of(mid)
        cells = ours.cells if ours.cells else [o]
        if all(lo - t <= c <= hi + t for c in cells):
            return "agrees"
        return _direction(float(np.median(cells)), mid, dead)
    g = float(pub["gain"]) if "gain" in pub else float(pub["ratio"]) - 1.0
    if abs(o - g) <= tol_of(g):
        return "agrees"
    return _direction(o, g, dead)


def rank_held(ours: Ours, want: int, dead: float) -> float | None:
    """The share of the paired draws in which the subject may hold place ``want`` (ties
    within the dead band count), or None below two draws. A rank is "unresolved" when more
    than one draw in ten holds it and more than one in ten does not."""
    if len(ours.draw_cells) < 2:
        return None
    spans = [rank_span(Ours(v, cells), dead) for v, cells in zip(ours.draws, ours.draw_cells)]
    return sum(first <= want <= last for first, last in spans) / len(spans)


def rank_span(ours: Ours, dead: float) -> tuple[int, int]:
    """The places the subject may hold: combos within the dead band of its score tie."""
    o, scores = ours.value, ours.cells or [ours.value]
    return (1 + sum(s > o + dead for s in scores), sum(s >= o - dead for s in scores))


def rung_verdicts(pub: dict[str, Any], ours: Ours, settings: dict[str, Any]
                  ) -> dict[int, str]:
    """The claim judged at each node count on its own (bounds keep the claim's control)."""
    out = {}
    for n, rung in sorted(ours.rungs.items()):
        rung.control = ours.control
        out[n] = "identical" if n in ours.identical else judge(pub, rung, settings)
    return out
