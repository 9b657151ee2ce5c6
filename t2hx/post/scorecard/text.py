"""How claims and verdicts read: what a number was computed over, what a claim needs, the
published and our values as text, and the scorecard table and contract."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from t2hx.post.scorecard.judge import DRAW_TAIL, draw_band, rank_span
from t2hx.post.scorecard.selection import BASE_SPEC, Ours, label, listed

VERDICTS = ("agrees", "same direction", "weaker", "stronger", "vacuous", "unresolved",
            "contradicts", "not run")
#: Verdict colours (report table cells and the scorecard picture): agreement green, partial
#: agreement amber, disagreement red, unresolved lilac, the rest grey.
VERDICT_COLOURS = {"agrees": "#c8e6c9", "same direction": "#dcedc8", "weaker": "#fff3c4",
                   "stronger": "#fff3c4", "vacuous": "#eeeeee", "unresolved": "#e1d5f0",
                   "contradicts": "#ffcdd2", "not run": "#f5f5f5", "identical": "#eeeeee"}


@dataclass
class Verdict:
    id: str
    source: str
    statement: str
    published: str
    ours: str
    verdict: str
    note: str = ""
    rungs: str = ""          # per node count: "28: agrees · 112: weaker" (several counts)
    mechanism: str = ""      # what the paper says the effect comes from (claims.MECHANISMS)
    finding: bool = True     # False: a generator check (claims.is_check)


def where(comp: dict[str, Any], cells: pd.DataFrame | None = None) -> str:
    """What the number was computed over (or would be): benchmark, nodes, sizes."""
    benches = listed(comp["benchmark"])
    parts = [",".join(benches) if len(benches) <= 2 else f"{len(benches)} benchmarks"]
    if cells is not None and len(cells):
        nodes = sorted(int(n) for n in cells["nodes"].dropna().unique())
        if nodes:
            parts.append("n=" + ",".join(map(str, nodes)))
        sizes = sorted(int(s) for s in cells["msg_size"].dropna().unique())
        if sizes:
            parts.append(f"{len(sizes)} sizes {_size(sizes[0])}–{_size(sizes[-1])}"
                         if len(sizes) > 1 else _size(sizes[0]))
    else:
        if comp.get("nodes") is not None:
            parts.append(f"nodes {_want(comp['nodes'])}")
        if comp.get("msg_size") is not None:
            parts.append(f"msg {_want(comp['msg_size'], _size)}")
    return ", ".join(parts)


def needs(comp: dict[str, Any]) -> str:
    """The study case a claim needs: benchmark, metric, combos, nodes, sizes, conditions."""
    if comp["kind"] == "routing":
        return f"the routing analysis of {comp['plane']} with {comp['engine']} (t2hx reproduce)"
    if comp["kind"] == "network":
        return (f"the analysis of generated {comp['subject']['kind']} networks "
                "(checks/network.py)")
    if comp["kind"] == "history":
        return (f"the job-history replay of {', '.join(listed(comp['combo']))} "
                "(checks/history.py)")
    specs = [comp["subject"]] if isinstance(comp.get("subject"), dict) else \
        list(comp.get("subject") or [])
    if comp["kind"] == "rank":
        specs = list(comp["combos"])
    elif comp["kind"] != "value":
        specs.append(comp.get("base", BASE_SPEC))
    metric = comp.get("metric", "*")
    text = (f"{','.join(listed(comp['benchmark']))} "
            f"{'(all metrics)' if metric == '*' else metric}"
            f" for {' + '.join(dict.fromkeys(label(s) for s in specs))}")
    text += f", nodes {_want(comp['nodes'])}" if comp.get("nodes") is not None else \
        ", any node count"
    if comp.get("msg_size") is not None:
        text += f", msg {_want(comp['msg_size'], _size)}"
    for k, v in (comp.get("requires") or {}).items():
        text += f", {k} = {v:g}"
    return text


def _size(n: int) -> str:
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return f"{n // f} {unit}"
    return f"{n} B"


def _want(w: Any, fmt=str) -> str:
    if isinstance(w, dict):
        lo, hi = w.get("min"), w.get("max")
        return (f"{fmt(lo)}–{fmt(hi)}" if lo is not None and hi is not None else
                f"≥ {fmt(lo)}" if lo is not None else f"≤ {fmt(hi)}")
    return ",".join(fmt(x) for x in listed(w))


def published_text(pub: dict[str, Any], comp: dict[str, Any] | None = None) -> str:
    comp = comp or {}
    kind = comp.get("kind")
    if kind == "trend":
        return (f"gain {'rises' if pub.get('sign', 1) > 0 else 'falls'} with "
                f"{comp.get('along', 'msg_size')}")
    if kind == "spread":
        return "less run-to-run spread than base" if pub.get("sign", 1) > 0 else \
            "more run-to-run spread than base"
    if "ratio" in pub:
        return f"{pub['ratio']:g}×"
    if "gain" in pub:
        return _pct(pub["gain"])
    if "range" in pub:
        lo, hi = pub["range"]
        return f"{_pct(lo)} … {_pct(hi)}" if "unit" not in pub else \
            f"{lo:g} … {hi:g} {pub['unit']}"
    if "sign" in pub:
        return "better than base" if pub["sign"] > 0 else "worse than base"
    if "par" in pub:
        return "on par"
    if "at_least" in pub:
        return f"≥ {_pct(pub['at_least'])}" if "unit" not in pub else \
            f"≥ {pub['at_least']:g} {pub['unit']}"
    if "at_most" in pub:
        return f"≤ {_pct(pub['at_most'])}" if "unit" not in pub else \
            f"≤ {pub['at_most']:g} {pub['unit']}"
    if "value" in pub:
        return f"{pub['value']:g} {pub.get('unit', '')}".strip()
    if "rank" in pub:
        return "last" if pub["rank"] == -1 else f"#{pub['rank']}"
    return "?"


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


def ours_text(pub: dict[str, Any], comp: dict[str, Any], ours: Ours, dead: float = 0.01) -> str:
    o = ours.value
    if comp["kind"] == "rank":
        lo, hi = rank_span(ours, dead)
        place = f"#{lo}" if lo == hi else f"#{lo}–{hi} (tied)"
        text = f"{place} of {ours.of} (median gain {_pct(o)})"
    elif comp["kind"] == "extremes":
        lo, hi = rank_span(ours, dead)
        place = f"#{lo}" if lo == hi else f"#{lo}–{hi} (tied)"
        text = f"{place} of {ours.of} (span of gains {_pct(o)})"
    elif comp["kind"] in ("value", "routing") or "value" in pub:
        text = f"{o:.3g} {pub.get('unit', '')}".strip()
    elif comp["kind"] == "spread":
        text = f"spread difference {_pct(o)}"
    elif comp["kind"] == "trend":
        text = f"gain rises {_pct(o)}" if o >= 0 else f"gain falls {_pct(o)}"
    elif "ratio" in pub:
        text = f"{1 + o:.3g}×"
    elif "range" in pub and ours.cells and len(ours.cells) > 1:
        text = f"{_pct(min(ours.cells))} … {_pct(max(ours.cells))}"
    else:
        text = _pct(o)
    return f"{text} [{ours.where}]" if ours.where else text


def draws_text(ours: Ours, dead: float = 0.01) -> str:
    """The spread of the paired draws beside the verdict ('' when every draw is the same)."""
    if ours.draw_cells:
        places = sorted(rank_span(Ours(v, c), dead)[0]
                        for v, c in zip(ours.draws, ours.draw_cells))
        if places[0] == places[-1]:
            return ""
        return (f"draws place it {places[0]} … {places[-1]} of {ours.of} (over "
                f"{len(places)} draws paired by repetition)")
    band = draw_band(ours)
    if band is None or _pct(band[0]) == _pct(band[1]):
        return ""
    return (f"draws {_pct(band[0])} … {_pct(band[1])} (middle {1 - 2 * DRAW_TAIL:.0%} of "
            f"{len(ours.draws)}, paired by repetition)")


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    return {v: sum(1 for x in verdicts if x.verdict == v) for v in VERDICTS}


def contract(verdicts: list[Verdict]) -> dict[str, Any]:
    """``bench/results/scorecard.json``: {claims: [{id, source, published, ours, verdict}],
    counts: {verdict: n}, mechanisms: {mechanism: {verdict: n}}} (plus statement, note,
    verdicts per node count and mechanism per claim for a reader)."""
    mechs = dict.fromkeys(v.mechanism for v in verdicts if v.mechanism)
    return {"claims": [{k: v for k, v in asdict(x).items()} for x in verdicts],
            "counts": counts(verdicts),
            "findings": counts([v for v in verdicts if v.finding]),
            "generator_checks": counts([v for v in verdicts if not v.finding]),
            "mechanisms": {m: counts([v for v in verdicts if v.mechanism == m]) for m in mechs}}


def frame(verdicts: list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame([[v.id, v.source, v.statement, v.published, v.ours, v.verdict, v.note,
                          v.rungs, v.mechanism, v.finding] for v in verdicts],
                        columns=["claim", "source", "statement", "published", "ours",
                                 "verdict", "note", "per node count", "mechanism", "finding"])


def rungs_text(rungs: dict[int, str]) -> str:
    """Per node count verdicts as the scorecard prints them: "28: agrees · 112: weaker"."""
    return " · ".join(f"{n}: {v}" for n, v in rungs.items())


def rungs_of(text: str) -> dict[int, str]:
    """The inverse of :func:`rungs_text` ("" gives {})."""
    out = {}
    for part in filter(None, (p.strip() for p in str(text or "").split("·"))):
        n, _, verdict = part.partition(":")
        out[int(n)] = verdict.strip()
    return out


#: What a campaign's profile means for its scorecard (printed beside the counts).
PROFILE_LABELS = {"paper": "paper profile: the seed's scales",
                  "quick": "quick profile: a subset of the seed's scales, not the paper's",
                  "full": "full profile: the study's whole matrix"}


def profile_label(profile: str | None) -> str:
    return PROFILE_LABELS.get(profile or "", f"{profile} profile") if profile else ""


def counts_line(verdicts: list[Verdict], profile: str | None = None) -> str:
    """The verdicts' counts, then the findings' and the generator checks' apart."""
    c = counts(verdicts)
    label = f" ({profile_label(profile)})" if profile else ""
    parts = []
    for name, mine in (("findings", [v for v in verdicts if v.finding]),
                       ("generator checks", [v for v in verdicts if not v.finding])):
        k = counts(mine)
        parts.append(f"{name} {len(mine)}: " + (", ".join(f"{k[v]} {v}" for v in VERDICTS if k[v])
                                                 or "none"))
    return f"scorecard{label}: {len(verdicts)} claims: " + ", ".join(
        f"{c[v]} {v}" for v in VERDICTS) + "\n  " + "; ".join(parts)


def mechanism_lines(verdicts: list[Verdict]) -> list[str]:
    """Per mechanism: the claims and their verdicts' counts (zero counts left out)."""
    out = []
    for mech in dict.fromkeys(v.mechanism for v in verdicts if v.mechanism):
        mine = [v for v in verdicts if v.mechanism == mech]
        c = counts(mine)
        out.append(f"  {mech} ({len(mine)}): " + ", ".join(f"{c[v]} {v}" for v in VERDICTS
                                                          if c[v]))
    return out


def table_text(verdicts: list[Verdict]) -> str:
    rows = [(v.id, v.published, v.ours, v.verdict) for v in verdicts]
    head = ("claim", "published", "ours", "verdict")
    w = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    lines = [f"{head[0]:{w[0]}}  {head[1]:{w[1]}}  {head[2]:{w[2]}}  {head[3]}",
             "-" * (sum(w) + 6 + 14)]
    for v, (a, b, c, d) in zip(verdicts, rows):
        lines.append(f"{a:{w[0]}}  {b:{w[1]}}  {c:{w[2]}}  {d}")
        if v.rungs:
            lines.append(f"{'':{w[0]}}  per node count: {v.rungs}")
    return "\n".join(lines) + "\n"
