"""A trace on a system as the samples file the replay reads (docs/formats.md#history-samples):
the jobs running at every sampling point, placed on the system's usable nodes."""

from __future__ import annotations

from pathlib import Path

from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.history import hostlist
from t2hx.history.sampling import Placement, place, running, sample_times
from t2hx.history.trace import Trace, read_trace

SAMPLES_FORMAT = "t2hx-history-samples/1"
DAY_S = 86400.0
#: Ten years every 10 minutes; more is a unit slip (the interval is in seconds).
MAX_SAMPLES = 525_600


def load(path: str | Path, system: System, fmt: str = "auto", policy: str = "first-fit"
         ) -> tuple[Trace, Placement, list[str]]:
    """The trace read against the system's usable nodes, and its jobs placed on them by
    ``policy`` (t2hx/history/sampling.py)."""
    down = set(system.nodes.get("down", []))
    hosts = [h for h in system.hostnames() if h not in down]
    trace = read_trace(path, fmt, hosts)
    return trace, place(trace, hosts, policy), hosts


def summary(trace: Trace, placement: Placement, system: str, hosts: list[str]) -> str:
    lo, hi = trace.span
    widest = max(len(j.hosts) for j in placement.jobs) if placement.jobs else 0
    lines = [f"{trace.path.name}: {trace.format}, {len(trace.jobs)} jobs over "
             f"{(hi - lo) / DAY_S:.1f} days; on {system} ({len(hosts)} nodes): "
             f"{len(placement.jobs)} placed, widest {widest} nodes"]
    lines += [f"  left out: {n} {why}" for why, n in {**trace.skipped,
                                                       **placement.left_out}.items()]
    return "\n".join(lines)


def samples_doc(trace: Trace, placement: Placement, system: str, nodes: int,
                interval: float, first_day: float = 0.0, days: float | None = None) -> dict:
    """Samples every ``interval`` s from ``first_day`` days after the first job, for ``days``
    days or to the last job's end."""
    if not placement.jobs:
        raise T2hxError("no job of the trace fits the system", file=trace.path,
                        fix="use the conf system of the trace's machine (--system)")
    first = min(j.start for j in placement.jobs)
    last = max(j.end for j in placement.jobs)
    lo = first + first_day * DAY_S
    hi = last if days is None else min(last, lo + days * DAY_S)
    if hi <= lo:
        raise T2hxError(f"the trace ends before day {first_day:g}", field="first day",
                        fix=f"use a day below {(last - first) / DAY_S:.1f}")
    if (hi - lo) / interval > MAX_SAMPLES:
        raise T2hxError(f"{(hi - lo) / interval:.3g} samples is over {MAX_SAMPLES:,}",
                        field="interval", fix="sample less often or fewer days")
    times = sample_times(placement.jobs, interval, (lo, hi))
    sets = running(placement.jobs, times)
    used = sorted({i for s in sets for i in s})
    index = {old: new for new, old in enumerate(used)}
    jobs = [placement.jobs[i] for i in used]
    return {
        "format": SAMPLES_FORMAT,
        "trace": {"file": trace.path.name, "format": trace.format, "sha256": trace.sha256,
                  "epoch": trace.epoch},
        "system": system, "nodes": nodes, "interval_s": interval,
        "left_out": {**trace.skipped, **placement.left_out},
        "jobs": [{"id": j.id, "start": j.start, "end": j.end,
                  "hosts": hostlist.compress(list(j.hosts))} for j in jobs],
        "samples": [{"t": float(t), "jobs": [index[i] for i in s]} for t, s in zip(times, sets)],
    }
