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
  A claims file whose paper reads its runs by their median (seed 001's box plots over
  mapping draws) says ``defaults: {runs: median}`` (or a claim ``runs: median``): then a
  cell's value is the median of its runs instead of the best.
* **Aggregate** over the cells: median (default), max ("up to …") or min.
* Kinds: ``gain`` (the aggregate gain), ``value`` (the subject's best — or with ``of: worst``
  its worst — run, times ``scale``), ``rank`` (the subject's place among ``combos`` by median
  gain vs the baseline over the cells every ranked combo has; 1 = best), ``trend`` (median gain
  on the largest third of ``along`` values minus that on the smallest third), ``spread`` (the
  base's median run-to-run spread (max−min)/best minus the subject's: positive = the subject
  varies less), ``routing`` (a field of the campaign's routing analysis), ``history`` (a cell
  of seed 004's Table 1 from the campaign's job-history rows: SAR's improvement over an
  oblivious routing, its maximum or mean over the samples, percentages as fractions),
  ``unmeasured`` (no campaign records it).

Verdicts (docs/modelling.md#scorecard)
--------
``dir(x)`` is +1 above the dead band, −1 below minus it, 0 inside ("no effect"; the band is the
paper's own "within ±1 %", §5.2). ``tol(p) = max(min(abs, |p|/10), rel·|p|)`` from the
claims file: an absolute part never above a tenth of the quantity judged, unless the
claim's sentence states one (``stated``).

* **Rungs.** A gain claim over several node counts is also judged at each (``rungs`` of the
  verdict: "28: agrees · 112: weaker"). A node count of at most ``one_switch`` (claims file
  defaults: every placement puts that many nodes on one switch of either plane) at which
  every cell's gain is exactly 0 is the same fabric twice by construction: it is left out of
  the headline and marked ``identical``. A zero gain at a larger count is a result and stays.
* ``not run`` — no like-for-like data: a combo, node count or message size of the claim is
  missing, a requirement (e.g. the 3 h capacity window) is not met, a ``spread`` claim meets
  only identical repetitions or only simulated ones (the noise model gives every combo the
  same spread, so it says nothing about which fabric varies less), or the claim is
  ``unmeasured``. The verdict names what is missing.
* ``gain: g`` / ``ratio: r`` (= gain r − 1): **agrees** if |ours − g| ≤ tol(g); else, with
  dir(ours) = dir(g) ≠ 0, **same direction** if |ours| is within 3× of |g|, **weaker** if
  more than 3× smaller, **stronger** if more than 3× larger; else **contradicts** (opposite
  sign, or no effect where the paper reports one).
* ``range: [lo, hi]``: **agrees** if every cell's gain lies in [lo − tol, hi + tol] with tol =
  tol(midpoint); else the median cell against the midpoint as for a gain.
* ``sign: ±1``: **agrees** if dir(ours) equals it, else **contradicts** (no magnitude to miss).
* **unresolved** (before any of the three above): the claim's number recomputed draw by draw
  — repetition r of the subject against repetition r of the base, the way the study draws
  its noise, eBB's bisections and seed 001's mappings: the same draw under every combo — and
  the middle 80 % of those draws (10th to 90th percentile) do not share one direction
  (dir). Which combo is better then depends on the draw, and best of N alone would pick
  one. The band is printed in the note whenever the draws differ.
* ``par: true`` / ``at_least: b`` / ``at_most: b``: **contradicts** if it fails; if it holds,
  **agrees** only when the claim's cells show an effect beyond the dead band somewhere (any
  combo's gain over the base in a cell, the subject's gain changing between cells, or for
  values any combo's difference from the subject's), else **vacuous**: a model that shows
  no difference anywhere passes every "on par" and could not have failed.
* ``value: v``: **agrees** if |ours/v − 1| ≤ value_tolerance, else **contradicts** (an absolute
  number has no direction).
* ``rank: r`` (−1 = last): combos whose median gains lie within the dead band of each other
  tie; **agrees** if ours is that place alone, **weaker** if it shares it in a tie,
  **contradicts** otherwise. With several draws, every combo's score is recomputed draw by
  draw (paired by repetition) and the rank is **unresolved** when more than one draw in ten
  lets the subject hold the place (ties count) and more than one in ten does not; the places
  the draws give are printed in the note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from t2hx import ROOT
from t2hx.errors import T2hxError
from t2hx.post.scorecard.claims import (CLAIMS, CLAIMS_DIR, DEFAULT_CLAIMS_STUDY, claims_of,
                                        is_check, load_claims, portable_claims)
from t2hx.post.scorecard.judge import judge, rung_verdicts
from t2hx.post.scorecard.kinds import KINDS, Ours, capacity_windows, check_requires, compute
from t2hx.post.scorecard.selection import (BASE_SPEC, CELL, RUNS, NotRun, best, cell_gains, label,
                                           matches, select, workload_jobs)
from t2hx.post.scorecard.text import (VERDICTS, Verdict, contract, counts, counts_line,
                                      draws_text, frame, rungs_text,
                                      mechanism_lines, needs, ours_text, published_text,
                                      table_text, where)

__all__ = ["BASE_SPEC", "CELL", "CLAIMS", "CLAIMS_DIR", "DEFAULT_CLAIMS_STUDY", "KINDS",
           "NotRun", "Ours", "SystemScore", "VERDICTS", "Verdict", "best", "by_system",
           "capacity_windows", "cell_gains", "claims_for_log", "claims_of", "compute",
           "contract", "counts", "counts_line", "profile_label", "frame", "judge", "mechanism_lines", "label",
           "load_claims", "matches", "needs",
           "ours_text", "portable_claims", "published_text", "score", "scorecard",
           "scorecards", "select", "study_systems", "table_text", "where", "workload_jobs"]


def score(results: pd.DataFrame, claims: list[dict[str, Any]] | None = None,
          defaults: dict[str, Any] | None = None, logdir: Path | None = None,
          context: dict[str, Any] | None = None) -> list[Verdict]:
    """One verdict per claim, in the claims file's order."""
    if claims is None:
        defaults, claims = load_claims()
    defaults = defaults or {}
    ctx = dict(context or {})
    ctx.setdefault("capacity_windows", capacity_windows(logdir))
    ctx.setdefault("logdir", logdir)
    out = []
    for c in claims:
        settings: dict[str, Any] = {**defaults, **{k: c[k] for k in ("dead_band", "tolerance", "value_tolerance",
                                                                     "par_band") if k in c}}
        pub = c["published"]
        runs = RUNS.set(c.get("runs", defaults.get("runs", "best")))
        try:
            ours = compute(results, c, {**ctx, "one_switch": int(settings.get("one_switch", 0))})
            if not math.isfinite(ours.value):
                raise NotRun("no finite value")
            note = "; ".join(filter(None, [check_requires(c["compute"], ctx),
                                           draws_text(ours, float(settings.get("dead_band", 0.01)))]))
            if ours.identical:
                note = "; ".join(filter(None, [note, "left out: n=" + ",".join(
                    map(str, ours.identical)) + " (the same fabric for both by construction)"]))
            rungs = rung_verdicts(pub, ours, settings)
            out.append(Verdict(c["id"], c["source"], c["statement"],
                               published_text(pub, c["compute"]),
                               ours_text(pub, c["compute"], ours,
                                         float(settings.get("dead_band", 0.01))),
                               judge(pub, ours, settings), note,
                               rungs_text(rungs),
                               c.get("mechanism", ""), not is_check(c)))
        except NotRun as why:
            out.append(Verdict(c["id"], c["source"], c["statement"],
                               published_text(pub, c["compute"]), "–",
                               "not run", f"{why}; needs {needs(c['compute'])}"
                               if c["compute"]["kind"] != "unmeasured" else str(why),
                               mechanism=c.get("mechanism", ""), finding=not is_check(c)))
        finally:
            RUNS.reset(runs)
    return out


@dataclass
class SystemScore:
    """The verdicts about one system's runs: the study's own systems (``own``: every claim,
    their runs pooled, e.g. seed 003's six configurations) or another system, a port, where
    only the claims marked ``portable`` are scored (none: an empty list, no scorecard)."""
    system: str
    own: bool
    verdicts: list[Verdict]


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


def scorecards(logdir: Path, claims_path: Path | None = None) -> list[SystemScore]:
    """Score the claims of the study that produced a log directory (or of ``claims_path``)
    per system (:func:`by_system`), its results ingested as run/replay does. The claims are
    checked first, before the log is read; a log with no claims file to score it, or with
    no result, is one line (T2hxError)."""
    from t2hx.post.ingest import (ingest, known_systems, require_logdir, require_results,
                                  row_systems)

    logdir = require_logdir(Path(logdir))
    defaults, claims = load_claims(claims_path or claims_for_log(logdir))
    data = ingest(logdir)
    require_results(data, logdir)
    systems = row_systems(data.results, known_systems(data.provenance))
    return by_system(data.results, claims, defaults, systems, study_systems(data.provenance),
                     logdir=logdir)


def claims_for_log(logdir: Path) -> Path:
    """The claims file of the study the log's provenance names (seed 000's for logs from
    before studies were recorded), or one line saying why there is none."""
    from t2hx.post.ingest import PROVENANCE, Summary, load_provenance
    from t2hx.study import study_names

    where, read = Path(logdir) / PROVENANCE, Summary()
    prov = load_provenance(Path(logdir), read)
    if read.skipped:       # unreadable: which study's claims apply is unknown
        raise T2hxError(read.skipped[0]["reason"], file=where,
                        fix="restore it from the campaign, or pass --claims FILE")
    study = prov.get("study") or DEFAULT_CLAIMS_STUDY
    path = claims_of(str(study))
    if path is not None:
        return path
    known = study in study_names() or study_systems(prov) is not None
    raise T2hxError(f"the log's study {study!r} " + ("has no claims file" if known else
                    "is not known here: no conf/studies/ file and no claims file"),
                    file=where, field="study",
                    fix=f"pass --claims FILE, or add conf/claims/{study}.yaml")


def scorecard(logdir: Path, claims_path: Path | None = None) -> list[Verdict]:
    """The verdicts of the log's first scored system (:func:`scorecards`: the study's own
    when the log has its runs, else a port's portable claims)."""
    scores = scorecards(logdir, claims_path)
    return scores[0].verdicts if scores else []
