"""A campaign's log directory → one tidy results table (+ mpiGraph matrices) and a summary.

Log directory layout (``log/<campaign>/``)::

    provenance.json                campaign, conf_hash, git_hash, versions, date, baseline
                                   (combo label), simulated, seeds (see report.py); ingest
                                   reads a log without it, replay refuses one
    perflogs/**/*.log[.hN]         ReFrame perflogs in the format of t2hx.post.perflog
    runs/**/t2hx-run.json          one directory per run: its parameters (t2hx/wire.py); every
                                   other regular file in that directory is a raw output of
                                   the run, parsed by the family of ``benchmark``
    analysis/*.csv, analysis/*.json  fabric-engine routing analysis (t2hx.post.routing)

Rules (documented here because the tables' meaning depends on them):

* One row per measured value; columns :data:`COLUMNS`. ``nodes`` falls back to the ranks a
  raw output reports (one rank per node, docs/modelling.md#reference-system).
* Within one run, several values of the same (benchmark, metric, msg_size) — HPL's N/NB
  sweep, Graph500's per-root lines, repeated walltime lines — collapse to the run's best.
* A value both in a perflog and in a raw output of the same key is taken from the perflog.
* Nothing aborts a campaign: unreadable, truncated or unknown inputs are skipped and listed
  in the :class:`Summary` (written as ``summary.json`` and shown in the report).
* A log with nothing left (no result, or runs that all lost their outputs) is refused by
  replay and the scorecard (:func:`require_results`) rather than reported as empty.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from t2hx import benchmarks
from t2hx.errors import T2hxError
from t2hx.post import archive, parsers
from t2hx.post.parsers import mpigraph
from t2hx.post.perflog import read_perflog
from t2hx.post.records import better_for
from t2hx.post.store import canonical
from t2hx.wire import COMPANION_DIR, RUN_META, RUN_META_KEYS, parse_run_meta
PROVENANCE = "provenance.json"

STR_COLS = ["campaign", "system", "partition", "topology", "routing", "placement", "combo",
            "benchmark", "metric", "unit", "better", "timestamp", "git_hash", "source"]
INT_COLS = ["nodes", "msg_size", "repetition"]
COLUMNS = ["campaign", "system", "partition", "topology", "routing", "placement", "combo",
           "benchmark", "metric", "unit", "better", "nodes", "msg_size", "repetition", "value",
           "timestamp", "git_hash", "simulated", "source"]
KEY = ["campaign", "system", "topology", "routing", "placement", "combo", "benchmark", "metric",
       "nodes", "msg_size", "repetition"]
MATRIX_COLUMNS = ["campaign", "system", "topology", "routing", "placement", "combo", "nodes",
                  "repetition", "kind", "row", "col", "value", "source"]


@dataclass
class Summary:
    """What was read and what was skipped (paths relative to the log directory)."""
    perflog_files: int = 0
    perflog_lines: int = 0
    perflog_rows: int = 0
    run_dirs: int = 0
    runs_used: int = 0
    raw_files_parsed: int = 0
    raw_rows: int = 0
    rows: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)  # {what, path, reason}
    ignored: list[dict[str, str]] = field(default_factory=list)  # files with no result in
    #                                                             a run that had results

    def skip(self, what: str, path: str, reason: str) -> None:
        self.skipped.append({"what": what, "path": path, "reason": reason})

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skipped"] = sorted(self.skipped, key=lambda s: (s["path"], s["what"], s["reason"]))
        d["ignored"] = sorted(self.ignored, key=lambda s: (s["path"], s["reason"]))
        return d


@dataclass
class Ingested:
    results: pd.DataFrame
    matrices: pd.DataFrame
    summary: Summary
    provenance: dict[str, Any]


#: What a campaign's directory holds (any one of them makes it one).
CAMPAIGN_MARKS = (PROVENANCE, "perflogs", "runs", "capacity")


def is_campaign(path: Path) -> bool:
    return path.is_dir() and any((path / mark).exists() for mark in CAMPAIGN_MARKS)


def require_logdir(logdir: Path) -> Path:
    """A campaign's log directory, or one line saying what was found instead: replaying the
    log root or an empty folder would mix campaigns or report nothing with exit 0."""
    logdir = Path(logdir)
    fix = "pass a campaign directory such as log/reference"
    if not logdir.is_dir():
        raise T2hxError("log directory not found", file=logdir, fix=fix)
    if is_campaign(logdir):
        return logdir
    inside = sorted(p.name for p in logdir.iterdir() if is_campaign(p))
    if inside:
        raise T2hxError(f"a folder of {len(inside)} campaigns ({', '.join(inside[:5])}"
                        f"{', …' if len(inside) > 5 else ''}), not one campaign", file=logdir,
                        fix=f"replay one of them, e.g. {logdir / inside[0]}")
    raise T2hxError("no campaign here: no provenance.json, perflogs/, runs/ or capacity/",
                    file=logdir, fix=fix)


def require_provenance(logdir: Path) -> Path:
    """The log's provenance.json, or one line: without it a report cannot say which study,
    conf, commit and versions produced the runs, nor score the right claims."""
    path = Path(logdir) / PROVENANCE
    if not path.is_file():
        raise T2hxError(f"no {PROVENANCE}: which study, conf and commit produced these runs "
                        "is unknown", file=logdir,
                        fix=f"restore {PROVENANCE} from the campaign (t2hx campaign run "
                        "writes it), or rerun the campaign")
    return path


def require_results(data: Ingested, logdir: Path) -> None:
    """One line when the log holds nothing to replay or score: no result at all, or run
    folders none of which has an output left (raw outputs deleted or never copied)."""
    s = data.summary
    runs_gone = s.run_dirs > 0 and s.runs_used == 0
    if len(data.results) and not runs_gone:
        return
    first = next((f" (e.g. {x['path']}: {x['reason']})" for x in s.skipped
                  if x["what"] == "run"), "")
    what = (f"every raw output is gone or unreadable: none of the {s.run_dirs} run(s) in "
            f"runs/ has a result{first}" if runs_gone else
            f"no results: {s.perflog_files} perflog(s) with no usable line and no run "
            "output under runs/")
    raise T2hxError(what, file=logdir,
                    fix="restore perflogs/ and runs/ (or runs.tar.xz) from the campaign's "
                    "copy, or rerun it with t2hx campaign run")


def ingest(logdir: Path) -> Ingested:
    logdir = require_logdir(logdir)
    summary = Summary()
    prov = load_provenance(logdir, summary)
    campaign = str(prov.get("campaign") or logdir.resolve().name)
    perf = _perflogs(logdir, campaign, summary)
    with archive.folder(logdir, "runs") as root:        # runs/ or runs.tar.xz
        raw, mats = _runs(root, campaign, summary)
    results = _combine(raw, perf)
    summary.rows = len(results)
    return Ingested(results, mats, summary, prov)


def load_provenance(logdir: Path, summary: Summary) -> dict[str, Any]:
    path = logdir / PROVENANCE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return data
    except (OSError, ValueError) as err:
        summary.skip("provenance", PROVENANCE, f"unreadable: {err}")
        return {}


# --- conf systems -----------------------------------------------------------------------------

def known_systems(prov: dict[str, Any]) -> list[str]:
    """Conf system names a log's partitions may start with: those its provenance records
    (``systems``, written by ``t2hx campaign run``) and the files of the conf directory."""
    from t2hx.paths import conf_dir

    names = [str(n) for n in prov.get("systems") or [] if isinstance(n, str)]
    return list(dict.fromkeys(names + sorted(p.stem for p in conf_dir().glob("*.yaml"))))


def row_systems(results: pd.DataFrame, known: list[str]) -> pd.Series:
    """The conf system of every row: a real system is its ReFrame system, a sim partition
    ``<system>-<plane>`` names its system (the longest known name that prefixes it, else the
    part before the last '-'), ``local`` is this machine; '' where the log does not say
    (partitions named after planes only: synthetic logs and logs before ports existed)."""
    by_length = sorted(known, key=len, reverse=True)

    def one(system: Any, partition: Any) -> str:
        system = "" if pd.isna(system) else str(system)
        if system != "sim":
            return system
        part = "" if pd.isna(partition) else str(partition)
        hit = next((n for n in by_length if part.startswith(f"{n}-")), None)
        return hit or (part.rsplit("-", 1)[0] if "-" in part else "")

    if results.empty:
        return pd.Series([], dtype=str, index=results.index)
    return pd.Series([one(a, b) for a, b in zip(results["system"], results["partition"])],
                     index=results.index, dtype=str)


def log_systems(results: pd.DataFrame, prov: dict[str, Any]) -> list[str]:
    """The conf systems a log holds runs of, in first-seen order of the provenance, then of
    the rows ('' when rows do not say; see :func:`row_systems`)."""
    seen = list(dict.fromkeys(row_systems(results, known_systems(prov))))
    recorded = [n for n in prov.get("systems") or [] if n in seen]
    return list(dict.fromkeys(recorded + seen))


# --- perflogs ---------------------------------------------------------------------------------

def _perflogs(logdir: Path, campaign: str, summary: Summary) -> pd.DataFrame:
    frames = []
    for path in sorted(p for p in (logdir / "perflogs").rglob("*.log*") if p.is_file()):
        rel = path.relative_to(logdir).as_posix()
        summary.perflog_files += 1
        try:
            read = read_perflog(path)
        except OSError as err:
            summary.skip("perflog", rel, f"unreadable: {err.strerror}")
            continue
        summary.perflog_lines += read.lines
        for no, reason in read.skipped:
            summary.skip("perflog line", f"{rel}:{no}", reason)
        for frame in read.frames:
            frames.append(_perflog_frame(frame, rel, campaign, summary))
    if not frames:
        return _empty()
    out = pd.concat(frames, ignore_index=True)
    summary.perflog_rows = len(out)
    return out


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    """A perflog column (nulls already NaN from the reader); all-missing if absent."""
    if name not in frame:
        return pd.Series(np.nan, index=frame.index, dtype="str")
    return frame[name]


def _perflog_frame(frame: pd.DataFrame, rel: str, campaign: str,
                   summary: Summary) -> pd.DataFrame:
    out = pd.DataFrame(index=frame.index)
    out["campaign"] = _col(frame, "campaign").fillna(campaign)
    for name in ("system", "partition", "topology", "routing", "placement", "benchmark",
                 "git_hash"):
        out[name] = _col(frame, name)
    out["combo"] = _col(frame, "combo")
    out["metric"] = _col(frame, "perf_var")
    out["unit"] = _col(frame, "perf_unit")
    out["timestamp"] = _col(frame, "job_completion_time")
    out["nodes"] = pd.to_numeric(_col(frame, "num_nodes"), errors="coerce")
    out["msg_size"] = pd.to_numeric(_col(frame, "msg_size"), errors="coerce")
    out["repetition"] = pd.to_numeric(_col(frame, "repetition"), errors="coerce")
    out["value"] = pd.to_numeric(_col(frame, "perf_value"), errors="coerce")
    out["simulated"] = _col(frame, "simulated").fillna("").str.lower().isin(["true", "1", "yes"])
    out["source"] = rel
    bad = ~np.isfinite(out["value"].to_numpy(dtype=float))
    for no in frame.loc[bad, "_line"]:
        summary.skip("perflog line", f"{rel}:{no}", "perf_value is not a number")
    # ReFrame logs a case again when a stage after its performance fails (cleanup on a full
    # disk): such a line is no record (resume reruns the case, t2hx/checks/resume.py).
    result = _col(frame, "result").fillna("pass").str.strip()
    failed = ~bad & (result != "pass")
    for no, what in zip(frame.loc[failed, "_line"], result[failed]):
        summary.skip("perflog line", f"{rel}:{no}", f"result {what}, not pass")
    return out[~bad & ~failed]


# --- raw outputs ------------------------------------------------------------------------------

def companion_results(logdir: Path, engine: str) -> pd.DataFrame:
    """The tidy rows of the runs kept under ``companion/<engine>/``: the same cases simulated
    on a second network engine (empty when there are none)."""
    prov = load_provenance(Path(logdir), Summary())
    campaign = str(prov.get("campaign") or Path(logdir).resolve().name)
    with archive.folder(Path(logdir), COMPANION_DIR) as unpacked:
        root = unpacked / COMPANION_DIR / engine
        if not root.is_dir():
            return _empty()
        raw, _ = _runs(root, campaign, Summary())
    return canonical(typed(raw), COLUMNS) if len(raw) else _empty()


def _runs(logdir: Path, campaign: str, summary: Summary) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows: list[dict[str, Any]] = []
    cells: list[dict[str, Any]] = []
    metas = sorted(p for p in logdir.rglob(RUN_META)
                   if not {"perflogs", COMPANION_DIR} & set(p.relative_to(logdir).parts))
    for meta_path in metas:
        summary.run_dirs += 1
        run_rows, run_cells = _run(logdir, meta_path, campaign, summary)
        rows.extend(run_rows)
        cells.extend(run_cells)
    summary.raw_rows = len(rows)
    raw = pd.DataFrame(rows) if rows else _empty()
    mats = pd.DataFrame(cells, columns=MATRIX_COLUMNS) if cells else \
        pd.DataFrame(columns=MATRIX_COLUMNS)
    return raw, mats


def _run(logdir: Path, meta_path: Path, campaign: str,
         summary: Summary) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    run_dir = meta_path.parent
    rel_dir = run_dir.relative_to(logdir).as_posix()
    try:
        meta = parse_run_meta(meta_path.read_text())
    except (OSError, ValueError) as err:
        summary.skip("run", rel_dir, f"bad {RUN_META}: {err}")
        return [], []
    bench = str(meta["benchmark"])
    if parsers.family(bench) is None:
        summary.skip("run", rel_dir, f"unknown benchmark {bench!r}")
        return [], []
    base = _run_base(meta, campaign)
    rename = _registry_name(bench)
    best: dict[tuple, dict[str, Any]] = {}
    cells: list[dict[str, Any]] = []
    problems: list[dict[str, str]] = []
    for path in sorted(p for p in run_dir.iterdir() if p.is_file() and p.name != RUN_META
                       and not p.name.startswith(".")):
        rel = path.relative_to(logdir).as_posix()
        try:
            recs = parsers.parse_file(bench, path)
            if parsers.family(bench) == "mpigraph":
                cells.extend(dict(_matrix_base(base), **c, source=rel)
                             for c in mpigraph.matrices(path.read_text(errors="replace")))
        except T2hxError as err:
            problems.append({"what": "raw output", "path": rel, "reason": err.message})
            continue
        summary.raw_files_parsed += 1
        single = len({r["benchmark"] for r in recs}) == 1
        for rec in recs:
            name = rename if rename and single else rec["benchmark"]
            row = _raw_row(base, dict(rec, benchmark=name), rel)
            key = (row["benchmark"], row["metric"], row["msg_size"])
            if key not in best or _better(row, best[key]):
                best[key] = row
    if not best:
        for p in problems:
            summary.skip(p["what"], p["path"], p["reason"])
        summary.skip("run", rel_dir, "no result in any output file")
        return [], []
    summary.runs_used += 1
    summary.ignored.extend({"path": p["path"], "reason": p["reason"]} for p in problems)
    return list(best.values()), cells


def _registry_name(bench: str) -> str | None:
    """The run's registry name for the records of an output that holds only one benchmark:
    the parser's own names (``imb-multi-pingpong``, ``qbox``) would make a second figure
    beside the perflog's ``mupp``, ``qball``. None for benchmarks whose output names several
    (an IMB collective's run is filtered by its variant's name)."""
    hit = benchmarks.find(bench)
    if hit is None or hit[0].metric_filter is not None:
        return None
    return hit[0].name(hit[1])


def _run_base(meta: dict[str, Any], campaign: str) -> dict[str, Any]:
    base = {k: meta.get(k) for k in RUN_META_KEYS}
    base["campaign"] = meta.get("campaign") or campaign
    return base


def _matrix_base(base: dict[str, Any]) -> dict[str, Any]:
    return {k: base.get(k) for k in MATRIX_COLUMNS if k in base}


def _raw_row(base: dict[str, Any], rec: dict[str, Any], rel: str) -> dict[str, Any]:
    nodes = base.get("nodes") if base.get("nodes") is not None else rec.get("ranks")
    msg = rec.get("msg_size", base.get("msg_size"))
    return {
        "campaign": base["campaign"], "system": base.get("system"),
        "partition": base.get("partition"), "topology": base.get("topology"),
        "routing": base.get("routing"), "placement": base.get("placement"),
        "combo": base.get("combo"), "benchmark": rec["benchmark"], "metric": rec["metric"],
        "unit": rec["unit"], "nodes": nodes, "msg_size": msg,
        "repetition": base.get("repetition"), "value": rec["value"],
        "timestamp": base.get("timestamp"), "git_hash": base.get("git_hash"),
        "simulated": bool(rec.get("simulated") or base.get("simulated")), "source": rel,
    }


def _better(new: dict[str, Any], old: dict[str, Any]) -> bool:
    direction = better_for(new["unit"])
    if direction == "higher":
        return new["value"] > old["value"]
    return new["value"] < old["value"]


# --- the table --------------------------------------------------------------------------------

def _empty() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS})


def _combine(raw: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    frames = [f for f in (raw, perf) if len(f)]
    df = pd.concat(frames, ignore_index=True) if frames else _empty()
    df = typed(df)
    # Perflog rows come last, so keep="last" prefers them over raw rows of the same key.
    df = df.drop_duplicates(subset=KEY, keep="last")
    return canonical(df, COLUMNS)


def _counts(values: pd.Series) -> pd.Series:
    """Int64 counts; a value that is no whole number within int64 (2.5, 1e30, 'abc' in a
    hand-edited t2hx-run.json) is missing rather than a failed cast."""
    num = pd.to_numeric(values, errors="coerce")
    if num.dtype.kind in "iub" and num.dtype.kind != "u":
        return num.astype("Int64")
    f = pd.to_numeric(num.astype(object), errors="coerce").astype("float64")
    whole = np.isfinite(f) & (f == np.floor(f)) & (f.abs() < 2.0**62)
    return f.where(whole).astype("Int64")


def typed(df: pd.DataFrame) -> pd.DataFrame:
    """Fixed dtypes: pandas strings (NaN = missing), Int64 counts, float64 values."""
    df = df.copy()
    combo_missing = df["combo"].isna() if "combo" in df else None
    for col in STR_COLS:
        if col not in df:
            df[col] = np.nan
        df[col] = df[col].astype("str")
    if combo_missing is not None and combo_missing.any():
        label = df["topology"].fillna("?") + "/" + df["routing"].fillna("?") + "/" + \
            df["placement"].fillna("?")
        df.loc[combo_missing, "combo"] = label[combo_missing]
    units = {u: better_for(u) for u in df["unit"].dropna().unique()}
    df["better"] = df["unit"].map(units).astype("str")
    for col in INT_COLS:
        df[col] = _counts(df[col])
    df["value"] = pd.to_numeric(df["value"], errors="coerce").astype("float64")
    df["simulated"] = df["simulated"].fillna(False).astype(bool)
    return df
