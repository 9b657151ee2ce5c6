"""Route a plane for a job: re-route it before a PARX or SAR job (docs/routing.md,
"Re-routing"), and on a real cluster make the plane's OpenSM run the combo's engine.

sar routes from a job file (the hostfiles of the jobs that run together); parx from a demand
file built from the job's communication profile, ``conf/profiles/<benchmark>/<ranks>/``
(Open MPI pml_monitoring files, ``t2hx demand record``). Without a profile parx keeps its
demand-free routing. Simulated: real OpenSM under ibsim into a directory the job reads.
Real cluster: the request goes to the plane's OpenSM host (:mod:`t2hx.routing.remote`), which
switches engine and LMC when needed and answers only once OpenSM's own output confirms them;
the answer is the job's ``route.json`` (its sanity check requires it).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from t2hx import wire
from t2hx.paths import profiles_root, work_root
from t2hx.atomic import atomic_write
from t2hx.conf import System
from t2hx.errors import RoutingError, T2hxError
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.progress import Progress
from t2hx.routing import demand as dm, parx
from t2hx.routing.cache import check_inputs
from t2hx.routing.opensm import route
from t2hx.routing.remote import apply_remote
from t2hx.routing.smhost import request_for

#: What the routing step of a real job writes into its routing directory.
ROUTE_RECORD = "route.json"
#: The run metadata key (t2hx-run.json) of a PARX case routed without demand, and its value.
DEMAND_KEY, NO_DEMAND = "parx_demand", "none"



@dataclass(frozen=True)
class JobSpec:
    """One job to route for: an id, its benchmark (for the profile) and its hostfile."""
    job: str
    benchmark: str
    hostfile: Path


def validated_input(routing: str, fabric: Fabric, demand: str | None,
                    jobs: str | None) -> str:
    """One clear line for any file the engine would refuse, before OpenSM starts."""
    if routing == "parx":
        if not demand:
            raise T2hxError("parx reroutes from a demand file", field="--demand",
                            fix="pass --demand FILE (t2hx demand build)")
        check_inputs(fabric, demand, None)
        return demand
    if not jobs:
        raise T2hxError("sar reroutes from a job file", field="--jobs",
                        fix="pass --jobs FILE (t2hx demand jobs)")
    check_inputs(fabric, None, jobs)
    return jobs


def reroute(system: System, plane: str, routing: str, *, demand: str | None = None,
            jobs: str | None = None, real: bool = False, out: Path | None = None,
            timeout: float | None = None, quiet: bool | None = None) -> dict:
    """Route ``plane`` with ``routing`` from a demand or job file; the routing summary
    (simulated) or the SM host's verified result (real). Raises RoutingError when the
    engine fails."""
    if plane not in system.planes:
        raise T2hxError(f"no plane '{plane}'", file=system.path, field="planes",
                        fix=f"pick one of {', '.join(system.planes)}")
    spec = system.planes[plane]
    fabric = build_plane(system, plane)
    path = validated_input(routing, fabric, demand, jobs)
    timeout = timeout or float(spec.opensm.get("timeout", 600.0))
    if real:
        kind = "demand" if routing == "parx" else "jobs"
        req = request_for(system, plane, routing, kind, Path(path).read_bytes())
        return apply_remote(system, req, quiet)
    out = out or work_root() / system.name / plane / f"reroute-{routing}"
    kw = parx.routing_args(fabric, routing, demand=demand, jobs=jobs, source=system.path)
    with Progress("reroute", quiet=quiet) as prog:
        prog.say(f"routing {fabric.name} with {routing} (ibsim + OpenSM)")
        run = route(fabric, out, routing, timeout=timeout, **kw)
    if run.summary["fallback"] or run.summary["engine_used"] != routing:
        raise RoutingError(f"{routing} did not route the fabric "
                           f"({'; '.join(run.summary['errors'][:1]) or 'see the log'})",
                           file=run.log, fix="read the ERR lines in that log")
    return run.summary


def job_profile(benchmark: str, hostfile: Path, profiles: Path | None = None) -> str | None:
    """The pml_monitoring prefix recorded for ``benchmark`` at the hostfile's rank count."""
    ranks = len(dm.read_hostfile(hostfile))
    folder = (profiles or profiles_root()) / benchmark / str(ranks)
    files = sorted(folder.glob("*")) if folder.is_dir() else []
    if not files:
        return None
    return str(folder / files[0].name.split(".")[0])


def job_input(system: System, plane: str, routing: str, jobs: list[JobSpec],
              out: Path) -> Path | None:
    """The input file of ``jobs`` for ``routing``, validated and written into ``out``: the job
    file (sar) or the demand file from the jobs' profiles (parx; None without any)."""
    fabric = build_plane(system, plane)
    out.mkdir(parents=True, exist_ok=True)
    if routing == "sar":
        table = {j.job: list(dict.fromkeys(dm.read_hostfile(j.hostfile))) for j in jobs}
        dm.validate_jobs(table, fabric, out / "jobs.txt")
        return atomic_write(out / "jobs.txt", dm.render_jobs(table))
    no_demand_note(out).unlink(missing_ok=True)     # a note of an earlier run no longer holds
    demands = []
    for j in jobs:
        prefix = job_profile(j.benchmark, j.hostfile)
        if prefix:
            matrix = dm.read_monitoring(prefix)
            demands.append(dm.node_demand(matrix, dm.read_hostfile(j.hostfile), prefix))
    if not demands:
        note = {"engine": routing, "jobs": [j.job for j in jobs],
                "benchmarks": [j.benchmark for j in jobs], "profiles": str(profiles_root())}
        atomic_write(no_demand_note(out), json.dumps(note, indent=2) + "\n")
        print(f"reroute: no communication profile for {', '.join(j.benchmark for j in jobs)}"
              f" in {profiles_root()}: parx keeps its demand-free routing", file=sys.stderr)
        return None
    return dm.write_demand(dm.combine(demands), out / "demand.txt", fabric)


def reroute_for_jobs(system: System, plane: str, routing: str, jobs: list[JobSpec], *,
                     out: Path, quiet: bool | None = None) -> dict | None:
    """The simulated checks' pre-run step: the jobs' input file into ``out``, then
    :func:`reroute`. None when parx has no profile for any of the jobs."""
    path = job_input(system, plane, routing, jobs, out)
    if path is None:
        if not any(out.iterdir()):
            out.rmdir()
        return None
    demand, job_file = (None, str(path)) if routing == "sar" else (str(path), None)
    return reroute(system, plane, routing, demand=demand, jobs=job_file, out=out, quiet=quiet)


def route_real(system: System, plane: str, routing: str, jobs: list[JobSpec], *, out: Path,
               quiet: bool | None = None) -> dict:
    """A real job's routing step: the plane's OpenSM runs ``routing`` with the LMC it needs
    (and the jobs' input file for parx/sar), as confirmed by the SM host; the result is
    written to ``out/route.json``. Any failure raises, so the job stops before its
    benchmark runs and nothing is recorded under the wrong routing."""
    kind, data = None, b""
    if routing in INPUT_KIND and jobs:
        path = job_input(system, plane, routing, jobs, out)
        if path is not None:
            kind, data = INPUT_KIND[routing], path.read_bytes()
    result = apply_remote(system, request_for(system, plane, routing, kind, data), quiet)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / ROUTE_RECORD, json.dumps(result, indent=2, sort_keys=True) + "\n")
    return result


INPUT_KIND = {"parx": "demand", "sar": "jobs"}


def no_demand_note(out: Path) -> Path:
    """Where the routing step notes that PARX had no profile for its jobs: beside the
    routing directory, not in it (a routing directory means "simulate on these dumps")."""
    return out.parent / f"{out.name}-no-demand.json"


def demand_meta(out: Path) -> dict:
    """The run metadata of a case whose routing step wrote into ``out``: says when PARX
    routed it without demand, so the report can count such cases."""
    return {DEMAND_KEY: NO_DEMAND} if no_demand_note(out).is_file() else {}


def demand_free_line(jobs: int) -> str:
    return f"PARX routed without demand for {jobs} jobs: no communication profile"


def demand_free_jobs(logdir: Path) -> int:
    """Jobs of a campaign log that PARX routed without demand: capability runs whose
    t2hx-run.json says so, and the jobs of capacity cases' kept notes."""
    count = 0
    for path in Path(logdir).glob(f"runs/**/{wire.RUN_META}"):
        count += _read_json(path).get(DEMAND_KEY) == NO_DEMAND
    for path in Path(logdir).glob("capacity/**/*-no-demand.json"):
        count += len(_read_json(path).get("jobs") or [1])
    return count


def _read_json(path: Path) -> dict:
    """A kept JSON file, or {} when it is unreadable (ingest reports those files)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def route_record(folder: Path) -> dict | None:
    """The routing step's record in a job's routing directory, or None."""
    try:
        return json.loads((folder / ROUTE_RECORD).read_text())
    except (OSError, ValueError):
        return None
