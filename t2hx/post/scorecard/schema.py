"""What one claim of a claims file must hold (docs/formats.md#claims), checked when the file is
loaded and before any log is read: a mistake is one line naming the file, the claim, the field
and the fix, not a traceback after a long ingest, nor a claim silently scored "not run"
because it names a benchmark no campaign records."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from t2hx import benchmarks
from t2hx.errors import T2hxError
from t2hx.post.scorecard.kinds import KINDS
from t2hx.post.scorecard.selection import SPEC_KEYS, listed
from t2hx.wire import NETWORK_BENCHMARK

#: Benchmarks a campaign records that are no registry entry: the capacity mix
#: (checks/capacity.py), the multi-job workload (checks/workload.py) and seed 001's
#: generated-network analyses.
CAMPAIGN_BENCHMARKS = ("capacity", "workload", NETWORK_BENCHMARK)

#: The fields each compute kind reads besides ``kind`` (t2hx.post.scorecard.kinds).
REQUIRED: dict[str, tuple[str, ...]] = {
    "gain": ("benchmark", "subject"), "value": ("benchmark", "subject"),
    "rank": ("benchmark", "subject", "combos"), "trend": ("benchmark", "subject"),
    "spread": ("benchmark", "subject"), "extremes": ("benchmark", "subject", "of_benchmark"),
    "app_gain": ("benchmark", "subject", "app"), "interference": ("benchmark", "subject"),
    "throughput": ("benchmark", "subject"), "scaling": ("benchmark", "subject", "nodes"),
    "routing": ("plane", "engine", "field"), "history": ("combo", "metric", "stat", "vs"),
    "network": ("metric", "subject"), "unmeasured": (),
}
AGGREGATES = ("median", "max", "min")
CLAIM_TEXT = ("id", "source", "statement")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _range(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(map(_number, v)) and v[0] <= v[1]


#: Published forms: what a valid value is, and how to write one.
PUBLISHED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "gain": (_number, "a number, 0.66 for +66 %"),
    "ratio": (_number, "a number, 0.37 for 0.37x"),
    "range": (_range, "[lo, hi] with lo <= hi"),
    "sign": (lambda v: v in (1, -1) and not isinstance(v, bool), "+1 or -1"),
    "par": (lambda v: v is True, "true"),
    "at_least": (_number, "a number"),
    "at_most": (_number, "a number"),
    "value": (lambda v: _number(v) and v != 0, "a non-zero number in the claim's unit"),
    "rank": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v != 0,
             "a place: 1 = best, -1 = last"),
}


def _counts(v: Any) -> bool:
    def whole(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    if isinstance(v, dict):
        return bool(v) and set(v) <= {"min", "max"} and all(map(_number, v.values()))
    return bool(listed(v)) and all(map(whole, listed(v)))


def _names(v: Any) -> bool:
    return bool(listed(v)) and all(isinstance(m, str) and m for m in listed(v))


#: Optional compute fields of the kinds that select rows (``requires``: of every kind).
OPTIONAL: dict[str, tuple[Callable[[Any], bool], str]] = {
    "requires": (lambda v: isinstance(v, dict) and set(v) <= {"capacity_window_s"}
                 and all(map(_number, v.values())), "{capacity_window_s: seconds}"),
    "nodes": (_counts, "a whole number, a list of them, or {min: a, max: b}"),
    "msg_size": (_counts, "a whole number of bytes, a list of them, or {min: a, max: b}"),
    "metric": (_names, 'a metric name, a list of them, or "*" for all'),
    "aggregate": (lambda v: v in AGGREGATES, "one of " + ", ".join(AGGREGATES)),
    "of": (lambda v: v in ("best", "worst"), "best or worst"),
    "along": (lambda v: v in ("nodes", "msg_size"), "nodes or msg_size"),
    "scale": (_number, "a number"),
    "sum_metrics": (lambda v: isinstance(v, bool), "true or false"),
    "per": (lambda v: v == "app", "app (the statement is per application: each app's own "
            "number, their median judged)"),
    "most": (_names, "the app(s) a statement says suffer most (interference)"),
}


def known_benchmarks() -> list[str]:
    """The names a claim may select: how campaigns name each registry benchmark's rows
    (``imb-bcast``, never the bare ``imb`` or an alias), then :data:`CAMPAIGN_BENCHMARKS`."""
    names = [b.name(v) for b in benchmarks.REGISTRY for v in (b.variants or (None,))]
    return list(dict.fromkeys([*names, *CAMPAIGN_BENCHMARKS]))


class Where:
    """The file and claim being checked, so each error names both."""

    def __init__(self, path: Path, claim: str) -> None:
        self.path, self.claim = path, claim

    def error(self, field: str, message: str, fix: str) -> T2hxError:
        return T2hxError(message, file=self.path, field=f"claims[{self.claim}].{field}",
                         fix=fix)


def claim_name(claim: Any, index: int) -> str:
    """How errors name a claim: its id when it has a usable one, else its position."""
    cid = claim.get("id") if isinstance(claim, dict) else None
    return cid if isinstance(cid, str) and cid.strip() else str(index)


def check_claim(claim: Any, index: int, path: Path) -> None:
    """Raise one line for the first thing wrong with claim number ``index`` of ``path``."""
    at = Where(path, claim_name(claim, index))
    if not isinstance(claim, dict):
        raise T2hxError(f"claim is a {type(claim).__name__}, not a mapping", file=path,
                        field=f"claims[{index}]",
                        fix="write each claim as id:, source:, statement:, mechanism:, "
                        "published: and compute:")
    for key in CLAIM_TEXT:
        if not isinstance(claim.get(key), str) or not claim[key].strip():
            raise at.error(key, f"{key} is missing or not text" if key in claim
                           else f"no {key}", f"give the claim a {key}: line")
    _check_published(claim.get("published"), at)
    _check_compute(claim.get("compute"), at)


def _check_published(pub: Any, at: Where) -> None:
    if not isinstance(pub, dict):
        raise at.error("published", "no published statement" if pub is None else
                       f"published is a {type(pub).__name__}, not a mapping",
                       "one of " + ", ".join(f"{{{k}: ...}}" for k in PUBLISHED))
    forms = [k for k in PUBLISHED if k in pub]
    if not forms:
        raise at.error("published", f"no published form among {sorted(pub)}",
                       "one of " + ", ".join(PUBLISHED))
    for form in forms:
        ok, what = PUBLISHED[form]
        if not ok(pub[form]):
            raise at.error(f"published.{form}", f"{form} is {pub[form]!r}", what)


def _check_compute(comp: Any, at: Where) -> None:
    if not isinstance(comp, dict):
        raise at.error("compute", "no compute section" if comp is None else
                       f"compute is a {type(comp).__name__}, not a mapping",
                       "say how ours is computed: compute: {kind: gain, benchmark: ..., "
                       "subject: ...}")
    kind = comp.get("kind")
    if kind not in REQUIRED:
        raise at.error("compute.kind", f"kind is {kind!r}", "one of " + ", ".join(REQUIRED))
    for key in REQUIRED[kind]:
        if comp.get(key) in (None, "", [], {}):
            raise at.error(f"compute.{key}", f"a {kind} claim needs compute.{key}",
                           f"add compute.{key}: the claims file's header lists each kind's fields")
    if kind == "scaling" and not (isinstance(comp["nodes"], list) and len(comp["nodes"]) == 2
                                  and len(set(comp["nodes"])) == 2):
        raise at.error("compute.nodes", f"nodes is {comp['nodes']!r}",
                       "two node counts, the speedup's from and to, e.g. nodes: [256, 1024]")
    _check_optional(comp, at, ("requires",))
    if kind not in KINDS:
        return      # log kinds read files of the log; their fields are not selections
    _check_benchmarks(comp, at)
    _check_specs(comp, at)
    _check_optional(comp, at, tuple(OPTIONAL))


def _check_optional(comp: dict[str, Any], at: Where, keys: tuple[str, ...]) -> None:
    for key in keys:
        ok, what = OPTIONAL[key]
        if key in comp and not ok(comp[key]):
            raise at.error(f"compute.{key}", f"{key} is {comp[key]!r}", what)


def _check_benchmarks(comp: dict[str, Any], at: Where) -> None:
    names, known = listed(comp["benchmark"]), known_benchmarks()
    for name in names:
        if not isinstance(name, str):
            raise at.error("compute.benchmark", f"benchmark {name!r} is not a name",
                           "a benchmark name or a list of them")
        if name in known:
            continue
        hit = benchmarks.find(name)
        if hit is not None and not hit[0].variants:
            fix = f"write {hit[0].name()!r}, the name its runs are recorded under"
        else:
            close = difflib.get_close_matches(name.lower(), known, n=1)
            fix = f"did you mean {close[0]!r}?" if close else \
                "a benchmark as its runs record it: " + ", ".join(known)
        raise at.error("compute.benchmark", f"unknown benchmark {name!r}", fix)
    target = comp.get("of_benchmark")
    if target is not None and target not in names:
        raise at.error("compute.of_benchmark", f"of_benchmark {target!r} is not among the "
                       "claim's benchmarks", "name one of " + ", ".join(map(str, names)))


def _check_specs(comp: dict[str, Any], at: Where) -> None:
    """Combo specs select rows by topology/routing/placement (or combo name): a misspelt key
    would select every row, a misspelt value none."""
    groups = {"subject": listed(comp["subject"]), "base": [comp["base"]] if "base" in comp
              else [], "combos": comp.get("combos", [])}
    for key, specs in groups.items():
        if not isinstance(specs, list):
            raise at.error(f"compute.{key}", f"{key} is {specs!r}", "a list of combo specs")
        for spec in specs:
            bad = not isinstance(spec, dict) or not spec or \
                any(k not in SPEC_KEYS or not isinstance(v, str) for k, v in spec.items())
            if bad:
                raise at.error(f"compute.{key}", f"{key} has {spec!r}",
                               "a combo spec: {topology: ..., routing: ..., placement: ...} "
                               "(or {combo: name}), names as text")
