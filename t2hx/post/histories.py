"""The figures of seed 004's job-history replay (study ``figures: histories``), from the
per-sample rows the history check keeps in ``log/<campaign>/histories/`` (checks/history.py):

* Fig 7 ``history-<combo>-<metric>``: each of §4.2's four metrics over the replayed days,
  one line per routing (updn, ftree, dfsssp, sar);
* Table 1 ``history-table1-<combo>``: SAR's improvement over each oblivious routing, the
  maximum over samples and the mean, absolute and in % (t2hx.history.sample_routing.improvements);
* ``history-reroutes-<combo>``: SAR routings per replayed day (§4.3.2: how often the
  filtering tool re-routes);
* Fig 1 ``history-jobs-<combo>``: every job on more than one leaf switch as boxes over time
  and node index (the days' ``jobs.json``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from t2hx import wire
from t2hx.history.sample_routing import METRICS, OBLIVIOUS, REROUTED, improvements
from t2hx.post import archive, plots
from t2hx.post.figures import Figure
from t2hx.post.store import write_text

DAY_S = 86400.0
CASE_RE = re.compile(r"^history_(?P<combo>.+)_d(?P<day>\d+)$")
LABELS = {"max_efi": "max effective EFI [routes]", "avg_job_max_efi":
          "mean per-job max EFI [routes]", "dark_fiber": "dark fiber [% of links]",
          "avg_job_links": "links per job (mean)"}


def load_rows(logdir: Path) -> pd.DataFrame:
    """Every kept row: combo, day, t, engine, rerouted and the metrics."""
    frames = []
    for m, path in _kept(logdir, wire.HISTORY_ROWS):
        rows = pd.DataFrame(json.loads(path.read_text()))
        frames.append(rows.assign(combo=m["combo"], day=int(m["day"])))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def load_jobs(logdir: Path) -> dict[str, list[dict]]:
    """combo -> every job of its kept days (a job running over midnight once)."""
    out: dict[str, dict[tuple, dict]] = {}
    for m, path in _kept(logdir, wire.HISTORY_JOBS):
        for job in json.loads(path.read_text()):
            out.setdefault(m["combo"], {})[(job["id"], job["start"])] = job
    return {combo: list(jobs.values()) for combo, jobs in out.items()}


def _kept(logdir: Path, name: str) -> Iterator[tuple[re.Match, Path]]:
    """(case match, path) of every kept ``name`` of the campaign, from ``histories/`` or its
    packed archive (t2hx.post.archive)."""
    with archive.folder(Path(logdir), "histories") as root:
        for path in sorted(root.glob(f"histories/*/*/history_*/{name}")):
            m = CASE_RE.match(path.parent.name)
            if m:
                yield m, path


def table1(rows: pd.DataFrame) -> pd.DataFrame:
    """Table 1 of one combo: metric, other engine, max, max %, mean, mean %."""
    records = rows.to_dict("records")
    out = []
    for metric in METRICS:
        for other in OBLIVIOUS:
            cell = improvements(records, metric, other)
            out.append({"metric": metric, "vs": other, **cell})
    return pd.DataFrame(out)


def figures(logdir: Path, fig_dir: Path) -> list[Figure]:
    rows = load_rows(logdir)
    figs: list[Figure] = []
    if rows.empty:
        return figs
    for combo, sub in rows.groupby("combo", sort=True):
        sub = sub.assign(days=sub["t"] / DAY_S)
        for metric in METRICS:
            figs.append(_lines(sub, str(combo), metric, fig_dir))
        figs.append(_table(sub, str(combo), fig_dir))
        figs.append(_reroutes(sub, str(combo), fig_dir))
    for combo, jobs in sorted(load_jobs(logdir).items()):
        fig = _jobs(jobs, combo, fig_dir)
        if fig is not None:
            figs.append(fig)
    return figs


def _jobs(jobs: list[dict], combo: str, fig_dir: Path) -> Figure | None:
    wide = [j for j in jobs if j["switches"] > 1]
    if not wide:
        return None
    rows = [[j["start"] / DAY_S, j["end"] / DAY_S, lo, hi, k]
            for k, j in enumerate(sorted(wide, key=lambda j: (j["start"], j["id"])))
            for lo, hi in j["runs"]]
    name = f"history-jobs-{combo}"
    title = f"{combo}: jobs on more than one leaf switch ({len(wide)} of {len(jobs)})"
    stem = fig_dir / name
    data = stem.with_suffix(".dat")
    write_text(data, plots.table_text(["start", "end", "lo", "hi", "job"], rows, title))
    files = plots.render("jobs", data, stem, {
        "title": title, "xlabel_text": "day of the trace",
        "ylabel_text": "node (host order)"})
    # One row per job and node run is the figure's data file; the report links it.
    return Figure(name, "history-jobs", title, files, data, None)


def _lines(sub: pd.DataFrame, combo: str, metric: str, fig_dir: Path) -> Figure:
    wide = sub.pivot_table(index="days", columns="engine", values=metric, aggfunc="first")
    wide = wide.reindex(columns=[e for e in (*OBLIVIOUS, *REROUTED) if e in wide.columns])
    name = f"history-{combo}-{metric.replace('_', '-')}"
    title = f"{combo}: {LABELS[metric]} over the replayed history"
    stem = fig_dir / name
    data = stem.with_suffix(".dat")
    rows = [[float(i)] + [wide.loc[i, c] for c in wide.columns] for i in wide.index]
    write_text(data, plots.table_text(["day"] + list(wide.columns), rows, title))
    logy = spread_apart(wide)
    zeros = logy and bool((wide == 0).any().any())
    files = plots.render("lines", data, stem, {
        "title": title, "nseries": len(wide.columns), "xlabel_text": "day of the trace",
        "ylabel_text": LABELS[metric] + (" (log scale; zeros not drawn)" if zeros else ""),
        "logx": False, "logy": logy, "style": "lines", "extra": ""})
    return Figure(name, "history-lines", title, files, data, sample_summary(wide))


#: Series whose typical values lie this factor apart get a log axis: on a linear one the
#: largest (Up*/Down*'s EFI) flattens the others into one band at the bottom.
LOG_APART = 3.0


def spread_apart(wide: pd.DataFrame) -> bool:
    med = wide.median()
    med = med[med > 0]
    return len(med) > 1 and float(med.max() / med.min()) >= LOG_APART


def sample_summary(wide: pd.DataFrame) -> pd.DataFrame:
    """Per routing: samples, min, median, mean and max of a metric over the replayed history.
    The report shows this; every sample is in the figure's data file (a month holds thousands
    of samples, the whole trace tens of thousands)."""
    stats = wide.agg(["count", "min", "median", "mean", "max"]).T
    stats["count"] = stats["count"].astype(int)
    return stats.rename(columns={"count": "samples"}).rename_axis("routing").reset_index()


def _table(sub: pd.DataFrame, combo: str, fig_dir: Path) -> Figure:
    table = table1(sub)
    name = f"history-table1-{combo}"
    title = f"{combo}: SAR's improvement over each routing (seed 004 Table 1)"
    data = (fig_dir / name).with_suffix(".dat")
    write_text(data, plots.table_text(list(table.columns), table.values.tolist(), title))
    return Figure(name, "history-table1", title, [], data, table)


def _reroutes(sub: pd.DataFrame, combo: str, fig_dir: Path) -> Figure:
    sar = sub[sub["engine"].isin(REROUTED)]
    per_day = sar.groupby("day")["rerouted"].sum().astype(int)
    name = f"history-reroutes-{combo}"
    title = f"{combo}: SAR routings per replayed day"
    data = (fig_dir / name).with_suffix(".dat")
    write_text(data, plots.table_text(["day", "reroutes"],
                                      [[int(d), int(n)] for d, n in per_day.items()], title))
    return Figure(name, "history-reroutes", title, [], data,
                  per_day.rename("reroutes").reset_index())
