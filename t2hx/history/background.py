"""The production system's other jobs at one moment of a trace, as a SAR job file: what SAR
balances a benchmark's routes against on a busy system (seed 004 §4.3.4, Fig 8).

The paper ran Fig 8's MPI_Alltoall on Taurus in production, SAR re-routed for the running
jobs of that moment; the machine's own job list is not public. Here the stand-in trace is
placed on the system as the replay places it (t2hx/history/sampling.py), the jobs running at
``day`` + ``at`` are taken, the benchmark's nodes are taken out of them (the benchmark holds
them), and the jobs left on more than one leaf switch — the only ones SAR routes for — are
written in SAR's job-file format (docs/formats.md#job-files). docs/history.md#fig-8-on-a-busy-system.
"""

from __future__ import annotations

from pathlib import Path

from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.history import samples
from t2hx.history.sampling import running
from t2hx.routing import demand as dm
from t2hx.routing.sarjobs import leaf_of

HEADER = "# background jobs: {trace}, day {day:g} + {at:g} s, {policy} placement, minus {excluded}\n"


def background_jobs(system: System, plane: str, trace: str | Path, day: float, at: float,
                    policy: str, exclude: list[str]) -> dict[str, list[str]]:
    """Job id -> hosts of the multi-switch jobs running ``day`` days + ``at`` s after the
    trace's first job, without the hosts in ``exclude``."""
    import numpy as np

    _, placement, _ = samples.load(trace, system, policy=policy)
    if not placement.jobs:
        raise T2hxError("no job of the trace fits the system", file=trace,
                        fix="use the conf system of the trace's machine (--system)")
    t = min(j.start for j in placement.jobs) + day * samples.DAY_S + at
    if t >= max(j.end for j in placement.jobs):
        raise T2hxError(f"the trace has ended by day {day:g} + {at:g} s", field="--day",
                        fix="pick a moment inside the trace")
    leaf = leaf_of(build_plane(system, plane))
    unknown = [h for h in exclude if h not in leaf]
    if unknown:
        raise T2hxError(f"host {unknown[0]!r} is not on plane {plane}", field="--exclude",
                        fix="exclude the benchmark's own hostfile on this system")
    held = set(exclude)
    out: dict[str, list[str]] = {}
    for k in running(placement.jobs, np.array([t]))[0]:
        job = placement.jobs[k]
        hosts = [h for h in job.hosts if h not in held]
        if len({leaf[h] for h in hosts}) > 1:
            out[f"bg-{job.id}"] = hosts
    return out


def background_text(jobs: dict[str, list[str]], trace: str | Path, day: float, at: float,
                    policy: str, excluded: int) -> str:
    return HEADER.format(trace=Path(trace).name, day=day, at=at, policy=policy,
                         excluded=f"{excluded} benchmark nodes") + dm.render_jobs(jobs)
