"""The scorecard: every quantitative statement of seed 000 (Fig 1 and §5) beside ours, with a
verdict. The statements are data (``conf/claims/hyperx-vs-fattree-sc19.yaml``); this module
reads a campaign's tidy results (the same ingest as ``run/replay``), computes each claim's number
like for like, and judges it. Nothing here is tuned toward a published number: the
tolerances are fixed in the claims file and apply to every campaign alike.

Computing ours (``compute`` of a claim)
---------------------------------------
* **Selection, like for like.** Rows of the claim's benchmark(s) and metric, at the claim's node
  counts and message sizes only (a claim about 28 nodes ignores every other count), for combos
  matched by topology/routing/placement. Hostfiles depend on (system, placement, node count)
  only, so the same placement and node count means the same nodes on both planes (linear 28 is
  rack r01 on t2hx). A claim that names message sizes never uses rows without one; perflog rows
  without a size are dropped where raw rows of the same case carry it.
* **Cells and best of N.** A cell is (benchmark, metric, nodes, msg_size). Per cell and combo the
  best repetition counts (max for higher-is-better, min for lower-is-better), as the paper's
  relative gain: lower-is-better gain = t_base/t − 1, higher-is-better gain = x/x_base − 1
  (t2hx.post.gain). A gain exists only for cells both the subject and the base have. A subject
  listing several combos takes, per cell, the best gain among them ("with either routing or
  placement"). ``sum_metrics`` adds the metrics up per combo first (all apps' finished runs).
* **Aggregate** over the cells: median (default), max ("up to …") or min.
* Kinds: ``gain`` (the aggregate gain), ``value`` (the subject's best — or with ``of: worst``
  its worst — run, times ``scale``), ``rank`` (the subject's place among ``combos`` by median
  gain vs the baseline over the cells every ranked combo has; 1 = best), ``trend`` (median gain
  on the largest third of ``along`` values minus that on the smallest third), ``spread`` (the
  base's median run-to-run spread (max−min)/best minus the subject's: positive = the subject
  varies less), ``unmeasured`` (no campaign records it).

Verdicts
--------
``dir(x)`` is +1 above the dead band, −1 below minus it, 0 inside ("no effect"; the band is the
paper's own "within ±1 %", §5.2). ``tol(p) = max(abs, rel·|p|)`` from the claims file.

* ``not run`` — no like-for-like data: a combo, node count or message size of the claim is
  missing, a requirement (e.g. the 3 h capacity window) is not met, a ``spread`` claim meets
  only identical repetitions or only simulated ones (the noise model gives every combo the
  same spread, so it says nothing about which fabric varies less), or the claim is
  ``unmeasured``. The verdict names what is missing.
* ``gain: g`` / ``ratio: r`` (= gain r − 1): **agrees** if |ours − g| ≤ tol(g); else **same
  direction** if dir(ours) = dir(g); else **contradicts** (opposite sign, or no effect where the
  paper reports one).
* ``range: [lo, hi]``: **agrees** if every cell's gain lies in [lo − tol, hi + tol] with tol =
  tol(midpoint); else **same direction** if dir(median) = dir(midpoint); else **contradicts**.
* ``sign: ±1``: **agrees** if dir(ours) equals it, else **contradicts** (no magnitude to miss).
* ``par: true``: **agrees** if |ours| ≤ par_band, else **contradicts**.
* ``at_least: b`` / ``at_most: b``: **agrees** if the bound holds, else **contradicts**.
* ``value: v``: **agrees** if |ours/v − 1| ≤ value_tolerance, else **contradicts** (an absolute
  number has no direction).
* ``rank: r`` (−1 = last): **agrees** if ours is the same place, else **contradicts**.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from t2hx import ROOT
from t2hx.errors import T2hxError
from t2hx.post.gain import DEFAULT_BASELINE, gain

CLAIMS_DIR = ROOT / "conf" / "claims"          # <study name>.yaml: that study's seed claims
DEFAULT_CLAIMS_STUDY = "hyperx-vs-fattree-sc19"   # logs from before studies were recorded
CLAIMS = CLAIMS_DIR / f"{DEFAULT_CLAIMS_STUDY}.yaml"
VERDICTS = ("agrees", "same direction", "contradicts", "not run")
SPEC_KEYS = ("topology", "routing", "placement", "combo")   # combo: by name (seed 003)
BASE_SPEC = dict(zip(SPEC_KEYS, DEFAULT_BASELINE))
CELL = ["benchmark", "metric", "nodes", "msg_size"]
WINDOW_RE = re.compile(r"^# t2hx-simulated: capacity .*\bwindow=([0-9.]+)")


@dataclass
class Verdict:
    id: str
    source: str
    statement: str
    published: str
    ours: str
    verdict: str
    note: str = ""


class NotRun(Exception):
    """No like-for-like data; the message says what is missing."""


# --- claims -----------------------------------------------------------------------------------

# A portable claim states an ordering (better/worse, a rank, on par), never a magnitude
# or an absolute number: magnitudes belong to the seed's machine.
PORTABLE_FORMS = ("sign", "rank", "par")


def load_claims(path: Path = CLAIMS) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise T2hxError(f"claims file unreadable: {err}", file=path) from err
    claims = data.get("claims") or []
    ids = [c.get("id") for c in claims]
    if len(set(ids)) != len(ids) or not all(ids):
        raise T2hxError("claim ids must be present and unique", file=path)
    for c in claims:
        if "compute" not in c or "published" not in c or "source" not in c:
            raise T2hxError(f"claim {c['id']}: needs source, published and compute", file=path)
        _check_portable(c, path)
    return data.get("defaults") or {}, claims


def _check_portable(claim: dict[str, Any], path: Path) -> None:
    """``portable: true`` is scored on any system; only an ordering over no fixed node
    counts or campaign conditions can be (node counts and windows are the seed's)."""
    flag = claim.get("portable", False)
    where = f"claims[{claim['id']}].portable"
    if not isinstance(flag, bool):
        raise T2hxError(f"portable is {flag!r}", file=path, field=where, fix="true or false")
    if not flag:
        return
    comp = claim["compute"]
    if not any(k in claim["published"] for k in PORTABLE_FORMS) or \
            comp.get("kind") in ("value", "unmeasured"):
        raise T2hxError("a portable claim states an ordering", file=path, field=where,
                        fix="publish it as sign, rank or par, or drop portable")
    for key in ("nodes", "requires"):
        if comp.get(key) is not None:
            raise T2hxError(f"a portable claim has compute.{key} (the seed machine's)",
                            file=path, field=where, fix=f"drop compute.{key} or portable")


# --- selection --------------------------------------------------------------------------------

def _listed(v: Any) -> list:
    return v if isinstance(v, list) else [v]


def _bounded(col: pd.Series, want: Any) -> pd.Series:
    if want is None:
        return pd.Series(True, index=col.index)
    if isinstance(want, dict):
        ok = col.notna()
        if "min" in want:
            ok &= col >= want["min"]
        if "max" in want:
            ok &= col <= want["max"]
        return ok.fillna(False).astype(bool)
    return col.isin(_listed(want)).fillna(False).astype(bool)


def select(results: pd.DataFrame, comp: dict[str, Any]) -> pd.DataFrame:
    """The rows a claim may use: its benchmark(s), metric, node counts and message sizes."""
    df = results[results["benchmark"].isin(_listed(comp["benchmark"]))]
    if comp.get("metric", "*") != "*":
        df = df[df["metric"].isin(_listed(comp["metric"]))]
    df = df[_bounded(df["nodes"], comp.get("nodes"))]
    df = df[_bounded(df["msg_size"], comp.get("msg_size"))]
    if comp.get("msg_size") is None and len(df):
        # perflog rows without a size duplicate raw rows that carry one: keep the sized ones
        case = ["benchmark", "metric", "topology", "routing", "placement", "nodes"]
        sized = df["msg_size"].notna()
        has = df[sized][case].drop_duplicates().assign(_sized=True)
        df = df.merge(has, on=case, how="left")
        df = df[sized.to_numpy() | df["_sized"].isna().to_numpy()].drop(columns="_sized")
    return df


def matches(df: pd.DataFrame, spec: dict[str, str]) -> pd.Series:
    ok = pd.Series(True, index=df.index)
    for k in SPEC_KEYS:
        if k in spec:
            ok &= df[k] == spec[k]
    return ok.fillna(False).astype(bool)


def label(spec: dict[str, str]) -> str:
    if "combo" in spec:
        return spec["combo"]
    return "/".join(spec.get(k, "*") for k in SPEC_KEYS[:3])


def best(df: pd.DataFrame, spec: dict[str, str], sum_metrics: bool = False,
         worst: bool = False) -> pd.DataFrame:
    """Best (or worst) of N per cell and combo of the rows matching ``spec``: columns CELL +
    combo, better, value, runs, spread."""
    sub = df[matches(df, spec)]
    if sub.empty:
        return pd.DataFrame(columns=CELL + ["combo", "better", "value", "runs", "spread"])
    rows = []
    for key, g in sub.groupby(CELL + ["combo", "better"], dropna=False, sort=True):
        v = g["value"].to_numpy(dtype=float)
        higher = key[-1] == "higher"
        b = (v.min() if higher else v.max()) if worst else (v.max() if higher else v.min())
        spread = (v.max() - v.min()) / abs(b) if len(v) > 1 and b else math.nan
        rows.append(dict(zip(CELL + ["combo", "better"], key), value=b, runs=len(v),
                         spread=spread))
    out = pd.DataFrame(rows)
    if sum_metrics:
        out = out.groupby(["benchmark", "nodes", "msg_size", "combo", "better"], dropna=False,
                          as_index=False).agg(value=("value", "sum"), runs=("runs", "min"),
                                              spread=("spread", "max"))
        out["metric"] = "*"
    return out


def cell_gains(df: pd.DataFrame, subject: Any, base: dict[str, str],
               sum_metrics: bool) -> pd.DataFrame:
    """Per cell: the subject's gain vs the base (best gain among several subject combos)."""
    b = best(df, base, sum_metrics)
    if b.empty:
        raise NotRun(f"no {label(base)} runs")
    per = []
    for spec in _listed(subject):
        s = best(df, spec, sum_metrics)
        if s.empty:
            continue
        m = s.merge(b[CELL + ["value"]].rename(columns={"value": "base"}), on=CELL, how="inner")
        if len(m):
            m["gain"] = gain(m["value"].to_numpy(), m["base"].to_numpy(), m["better"].to_numpy())
            per.append(m)
    if not per:
        raise NotRun(f"no {' or '.join(label(s) for s in _listed(subject))} runs in the cells "
                     f"{label(base)} has")
    allg = pd.concat(per, ignore_index=True).dropna(subset=["gain"])
    if allg.empty:
        raise NotRun("no gain computable (unknown metric direction)")
    return allg.groupby(CELL, dropna=False, as_index=False)["gain"].max()


def _agg(values: pd.Series, how: str) -> float:
    return float({"median": values.median, "max": values.max, "min": values.min}[how]())


def where(comp: dict[str, Any], cells: pd.DataFrame | None = None) -> str:
    """What the number was computed over (or would be): benchmark, nodes, sizes."""
    benches = _listed(comp["benchmark"])
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
    specs = [comp["subject"]] if isinstance(comp.get("subject"), dict) else \
        list(comp.get("subject") or [])
    if comp["kind"] == "rank":
        specs = list(comp["combos"])
    elif comp["kind"] != "value":
        specs.append(comp.get("base", BASE_SPEC))
    metric = comp.get("metric", "*")
    text = (f"{','.join(_listed(comp['benchmark']))} "
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
    return ",".join(fmt(x) for x in _listed(w))


# --- requirements -----------------------------------------------------------------------------

def capacity_windows(logdir: Path | None) -> set[float]:
    """Capacity windows [s] a campaign's raw capacity outputs declare (simulated header)."""
    found: set[float] = set()
    if logdir is None:
        return found
    for path in sorted(Path(logdir).glob("capacity/**/rfm_job.out")):
        try:
            with open(path, errors="replace") as fh:
                m = WINDOW_RE.match(fh.readline())
        except OSError:
            continue
        if m:
            found.add(float(m.group(1)))
    return found


def check_requires(comp: dict[str, Any], context: dict[str, Any]) -> str:
    """A note on requirements met unverified; raises NotRun when one is known to fail."""
    need = (comp.get("requires") or {}).get("capacity_window_s")
    if need is None:
        return ""
    windows = context.get("capacity_windows") or set()
    if not windows:
        return "capacity window not recorded"
    if windows != {float(need)}:
        have = ", ".join(f"{w:g} s" for w in sorted(windows))
        raise NotRun(f"capacity window {have}; the claim is about a {need:g} s window")
    return ""


# --- computing and judging --------------------------------------------------------------------

@dataclass
class Ours:
    value: float | None = None          # gain, value, trend, spread difference
    cells: list[float] | None = None    # range claims: every cell's gain
    rank: int | None = None
    of: int | None = None
    where: str = ""


def compute(results: pd.DataFrame, claim: dict[str, Any], context: dict[str, Any]) -> Ours:
    comp = claim["compute"]
    kind = comp["kind"]
    if kind == "unmeasured":
        raise NotRun(comp.get("needs", "no campaign records it"))
    check_requires(comp, context)
    df = select(results, comp)
    if df.empty:
        raise NotRun("no such runs in the log")
    base = comp.get("base", BASE_SPEC)
    sm = bool(comp.get("sum_metrics"))
    if kind == "gain":
        g = cell_gains(df, comp["subject"], base, sm)
        return Ours(_agg(g["gain"], comp.get("aggregate", "median")), list(g["gain"]),
                    where=where(comp, g))
    if kind == "value":
        b = best(df, comp["subject"], sm, worst=comp.get("of") == "worst")
        if b.empty:
            raise NotRun(f"no {label(comp['subject'])} runs")
        return Ours(_agg(b["value"], comp.get("aggregate", "median")) * comp.get("scale", 1.0),
                    where=where(comp, b))
    if kind == "rank":
        combos = comp["combos"]
        scores, common = {}, None
        per = {}
        for spec in combos:
            if not matches(df, spec).any():
                raise NotRun(f"no {label(spec)} runs")
            per[label(spec)] = (cell_gains(df, spec, base, sm) if spec != base else
                                best(df, base, sm)[CELL].assign(gain=0.0))
            keys = set(map(tuple, per[label(spec)][CELL].astype(str).to_numpy()))
            common = keys if common is None else common & keys
        if not common:
            raise NotRun("the ranked combos share no cell")
        for name, g in per.items():
            keep = [tuple(r) in common for r in g[CELL].astype(str).to_numpy()]
            scores[name] = float(g.loc[keep, "gain"].median())
        order = sorted(scores, key=lambda k: -scores[k])
        any_g = next(iter(per.values()))
        return Ours(scores[label(comp["subject"])], rank=order.index(label(comp["subject"])) + 1,
                    of=len(order), where=where(comp, any_g))
    if kind == "trend":
        g = cell_gains(df, comp["subject"], base, sm)
        along = comp.get("along", "msg_size")
        xs = sorted(g[along].dropna().unique())
        if len(xs) < 3:
            raise NotRun(f"fewer than 3 {along} values for a trend")
        third = max(1, len(xs) // 3)
        lo = g[g[along].isin(xs[:third])]["gain"].median()
        hi = g[g[along].isin(xs[-third:])]["gain"].median()
        return Ours(float(hi - lo), where=where(comp, g))
    if kind == "spread":
        s, b = best(df, comp["subject"], sm), best(df, base, sm)
        m = s.merge(b[CELL + ["spread"]], on=CELL, suffixes=("", "_base")).dropna(
            subset=["spread", "spread_base"])
        if m.empty:
            raise NotRun(f"no cells with ≥ 2 runs of {label(comp['subject'])} and {label(base)}")
        if (m["spread"] == 0).all() and (m["spread_base"] == 0).all():
            raise NotRun("every repetition identical (deterministic campaign): variability "
                         "needs real runs")
        if "simulated" in df and df["simulated"].fillna(False).astype(bool).all():
            # The noise model draws every combo's factors from the same distribution
            # (docs/modelling.md#run-to-run-noise): a difference in spread is chance.
            raise NotRun("simulated runs only: their spread is the noise model's, the same "
                         "for every combo; which fabric varies less needs real runs")
        return Ours(float(m["spread_base"].median() - m["spread"].median()), where=where(comp, m))
    if kind in ("interference", "throughput"):
        return _workload_kind(df, comp, base, kind)
    raise T2hxError(f"claim {claim['id']}: unknown compute kind {kind!r}",
                    fix="one of gain, value, rank, trend, spread, interference, throughput, "
                    "unmeasured")


WORKLOAD_METRIC = re.compile(r"^j(\d+)-(.+?)(-alone)?$")


def workload_jobs(df: pd.DataFrame) -> pd.DataFrame:
    """Per (combo, workload, job): app, step time in the workload (mix) and alone, from the
    perf variables of checks/workload.py (``j<k>-<app>``, ``j<k>-<app>-alone``)."""
    rows: dict[tuple, dict] = {}
    for r in df.itertuples(index=False):
        m = WORKLOAD_METRIC.match(str(r.metric))
        if not m:
            continue
        key = (r.combo, int(r.repetition) if pd.notna(r.repetition) else 0, int(m.group(1)))
        rows.setdefault(key, {"combo": key[0], "workload": key[1], "job": key[2],
                              "app": m.group(2)})["alone" if m.group(3) else "mix"] = r.value
    return pd.DataFrame(list(rows.values()), columns=["combo", "workload", "job", "app",
                                                      "mix", "alone"]).dropna()


def _workload_kind(df: pd.DataFrame, comp: dict[str, Any], base: dict[str, str],
                   kind: str) -> Ours:
    """Seed 003 §6 from the workload records. ``interference``: the base's median slowdown
    (step time in the workload / alone - 1) minus the subject's (positive: the subject
    suffers less). ``throughput``: the subject's total normalised performance (Fig 10: sum
    over jobs of the step rate over the best configuration's, mean over workloads) over
    the base's, minus 1."""
    jobs = workload_jobs(df)
    subject = comp["subject"]
    pick = {}
    for name, spec in (("subject", subject), ("base", base)):
        combos = set(df[matches(df, spec)]["combo"])
        pick[name] = jobs[jobs["combo"].isin(combos)]
        if pick[name].empty:
            raise NotRun(f"no workload records of {label(spec)}")
    text = f"{len(jobs[['workload', 'job']].drop_duplicates())} jobs"
    if kind == "interference":
        slow = {k: float((v["mix"] / v["alone"] - 1).median()) for k, v in pick.items()}
        return Ours(slow["base"] - slow["subject"], where=f"workload, {text}")
    rate = jobs.assign(rate=1.0 / jobs["mix"])
    rate["norm"] = rate["rate"] / rate.groupby(["workload", "job"])["rate"].transform("max")
    total = rate.groupby(["combo", "workload"])["norm"].sum().groupby("combo").mean()
    perf = {k: float(total[total.index.isin(set(v["combo"]))].mean()) for k, v in pick.items()}
    return Ours(perf["subject"] / perf["base"] - 1.0, where=f"workload, {text}")


def _dir(x: float, dead: float) -> int:
    return 1 if x > dead else -1 if x < -dead else 0


def judge(pub: dict[str, Any], ours: Ours, settings: dict[str, Any]) -> str:
    dead = float(settings.get("dead_band", 0.01))
    tol = settings.get("tolerance", {"abs": 0.05, "rel": 0.25})

    def tol_of(p: float) -> float:
        return max(float(tol.get("abs", 0.0)), float(tol.get("rel", 0.0)) * abs(p))

    o = ours.value
    if "rank" in pub:
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


def published_text(pub: dict[str, Any], comp: dict[str, Any] | None = None) -> str:
    kind = (comp or {}).get("kind")
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
        return f"{_pct(pub['range'][0])} … {_pct(pub['range'][1])}"
    if "sign" in pub:
        return "better than base" if pub["sign"] > 0 else "worse than base"
    if "par" in pub:
        return "on par"
    if "at_least" in pub:
        return f"≥ {_pct(pub['at_least'])}" if "unit" not in pub else \
            f"≥ {pub['at_least']:g} {pub['unit']}"
    if "at_most" in pub:
        return f"≤ {pub['at_most']:g} {pub.get('unit', '')}".strip()
    if "value" in pub:
        return f"{pub['value']:g} {pub.get('unit', '')}".strip()
    if "rank" in pub:
        return "last" if pub["rank"] == -1 else f"#{pub['rank']}"
    return "?"


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


def ours_text(pub: dict[str, Any], comp: dict[str, Any], ours: Ours) -> str:
    o = ours.value
    if comp["kind"] == "rank":
        text = f"#{ours.rank} of {ours.of} (median gain {_pct(o)})"
    elif comp["kind"] == "value":
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


def score(results: pd.DataFrame, claims: list[dict[str, Any]] | None = None,
          defaults: dict[str, Any] | None = None, logdir: Path | None = None,
          context: dict[str, Any] | None = None) -> list[Verdict]:
    """One verdict per claim, in the claims file's order."""
    if claims is None:
        defaults, claims = load_claims()
    defaults = defaults or {}
    ctx = dict(context or {})
    ctx.setdefault("capacity_windows", capacity_windows(logdir))
    out = []
    for c in claims:
        settings = {**defaults, **{k: c[k] for k in ("dead_band", "tolerance",
                                                     "value_tolerance", "par_band") if k in c}}
        pub = c["published"]
        try:
            ours = compute(results, c, ctx)
            if ours.value is None or not math.isfinite(ours.value):
                raise NotRun("no finite value")
            note = check_requires(c["compute"], ctx)
            out.append(Verdict(c["id"], c["source"], c["statement"],
                               published_text(pub, c["compute"]),
                               ours_text(pub, c["compute"], ours), judge(pub, ours, settings),
                               note))
        except NotRun as why:
            out.append(Verdict(c["id"], c["source"], c["statement"],
                               published_text(pub, c["compute"]), "–",
                               "not run", f"{why}; needs {needs(c['compute'])}"
                               if c["compute"]["kind"] != "unmeasured" else str(why)))
    return out


def counts(verdicts: list[Verdict]) -> dict[str, int]:
    return {v: sum(1 for x in verdicts if x.verdict == v) for v in VERDICTS}


def contract(verdicts: list[Verdict]) -> dict[str, Any]:
    """``bench/results/scorecard.json``: {claims: [{id, source, published, ours, verdict}],
    counts: {verdict: n}} (plus statement and note per claim for a reader)."""
    return {"claims": [{k: v for k, v in asdict(x).items()} for x in verdicts],
            "counts": counts(verdicts)}


def frame(verdicts: list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame([[v.id, v.source, v.statement, v.published, v.ours, v.verdict, v.note]
                         for v in verdicts],
                        columns=["claim", "source", "statement", "published", "ours",
                                 "verdict", "note"])


def counts_line(verdicts: list[Verdict]) -> str:
    c = counts(verdicts)
    return f"scorecard: {len(verdicts)} claims: " + ", ".join(f"{c[v]} {v}" for v in VERDICTS)


def table_text(verdicts: list[Verdict]) -> str:
    rows = [(v.id, v.published, v.ours, v.verdict) for v in verdicts]
    head = ("claim", "published", "ours", "verdict")
    w = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    lines = [f"{head[0]:{w[0]}}  {head[1]:{w[1]}}  {head[2]:{w[2]}}  {head[3]}",
             "-" * (sum(w) + 6 + 14)]
    lines += [f"{a:{w[0]}}  {b:{w[1]}}  {c:{w[2]}}  {d}" for a, b, c, d in rows]
    return "\n".join(lines) + "\n"


@dataclass
class SystemScore:
    """The verdicts about one system's runs: the study's own systems (``own``: every claim,
    their runs pooled, e.g. seed 003's six configurations) or another system, a port, where
    only the claims marked ``portable`` are scored (none: an empty list, no scorecard)."""
    system: str
    own: bool
    verdicts: list[Verdict]


def portable_claims(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in claims if c.get("portable")]


def by_system(results: pd.DataFrame, claims: list[dict[str, Any]], defaults: dict[str, Any],
              systems: pd.Series, own: list[str] | None,
              logdir: Path | None = None) -> list[SystemScore]:
    """Score a seed's claims only on the seed's systems (``own``: the study's ``system:`` and
    those its combos name; None: the study is unknown here, every row is its own), and on
    any other system only its portable claims. ``systems`` is every row's conf system
    (t2hx.post.ingest.row_systems; '' = the log does not say, counted as the study's own,
    as logs from before ports were). Own systems first."""
    mine = pd.Series(True, index=results.index) if own is None else \
        (systems.isin(own) | (systems == ""))
    out = []
    if mine.any() or results.empty:
        names = list(dict.fromkeys(n for n in systems[mine] if n)) or list(own or [])
        out.append(SystemScore(", ".join(names), True,
                               score(results[mine], claims, defaults, logdir=logdir)))
    for name in dict.fromkeys(systems[~mine]):
        out.append(SystemScore(name, False, score(results[systems == name],
                                                  portable_claims(claims), defaults,
                                                  logdir=logdir)))
    return out


def study_systems(prov: dict[str, Any]) -> list[str] | None:
    """The systems the study that produced a log was written for (None: not known here)."""
    from t2hx.study import load_study, study_names

    name, file = prov.get("study") or DEFAULT_CLAIMS_STUDY, prov.get("study_file")
    if name in study_names():
        where = name
    elif file and (Path(file).is_file() or (ROOT / file).is_file()):
        where = file if Path(file).is_file() else str(ROOT / file)   # a study kept elsewhere
    else:
        return None
    try:
        return load_study(where, "full").own_systems()
    except T2hxError:
        return None


def claims_of(study: str | None) -> Path | None:
    """The claims file of the study that produced a log (conf/claims/<study>.yaml), if any."""
    path = CLAIMS_DIR / f"{study or ''}.yaml"
    return path if study and path.is_file() else None


def scorecards(logdir: Path, claims_path: Path | None = None) -> list[SystemScore]:
    """Ingest a log directory (as run/replay does) and score the claims of the study that
    produced it (or of ``claims_path``) per system (:func:`by_system`); a study without a
    claims file has none."""
    from t2hx.post.ingest import ingest, known_systems, row_systems

    data = ingest(Path(logdir))
    path = claims_path or claims_of(data.provenance.get("study") or DEFAULT_CLAIMS_STUDY)
    if path is None:
        return []
    defaults, claims = load_claims(path)
    systems = row_systems(data.results, known_systems(data.provenance))
    return by_system(data.results, claims, defaults, systems, study_systems(data.provenance),
                     logdir=Path(logdir))


def scorecard(logdir: Path, claims_path: Path | None = None) -> list[Verdict]:
    """The verdicts of the log's first scored system (:func:`scorecards`: the study's own
    when the log has its runs, else a port's portable claims)."""
    scores = scorecards(logdir, claims_path)
    return scores[0].verdicts if scores else []
