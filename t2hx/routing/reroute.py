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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx import ROOT, wire
from t2hx.paths import profiles_root, work_root
from t2hx.atomic import atomic_write
from t2hx.conf import System
from t2hx.errors import RoutingError, T2hxError
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.progress import Progress
from t2hx.routing import demand as dm, parx
from t2hx.routing.cache import check_input, ensure_routing
from t2hx.routing.opensm import route
from t2hx.routing.remote import apply_remote
from t2hx.routing.smhost import request_for
from t2hx.routing_engines import DEMAND, JOBS, RoutingInput, input_aware, routing_engine

#: What the routing step of a real job writes into its routing directory.
ROUTE_RECORD = "route.json"
#: The run metadata key (t2hx-run.json) that says where a PARX case's demand came from: a
#: recorded profile, one derived from the benchmark's pattern, or none (demand-free routing).
DEMAND_KEY = "parx_demand"
RECORDED, DERIVED, NO_DEMAND = "recorded", "derived", "none"
DEMAND_SOURCES = (RECORDED, DERIVED, NO_DEMAND)



@dataclass(frozen=True)
class JobSpec:
    """One job to route for: an id, its benchmark (for the profile), its hostfile and its
    study input (what a derived demand is derived for; None: the benchmark's defaults)."""
    job: str
    benchmark: str
    hostfile: Path
    input: dict | None = None


def validated_input(routing: str, fabric: Fabric,
                    routing_input: RoutingInput | None) -> RoutingInput:
    """One clear line for any file the engine would refuse, before OpenSM starts."""
    row = routing_engine(routing)
    if row.reads is None:
        raise T2hxError(f"{routing} reads no routing input", field="--routing",
                        fix="re-route with one of " + ", ".join(input_aware()))
    if routing_input is None or routing_input.kind != row.reads:
        raise T2hxError(f"{routing} reroutes from a {row.reads} file", field=f"--{row.reads}",
                        fix=f"pass --{row.reads} FILE (t2hx demand {INPUT_COMMAND[row.reads]})")
    check_input(fabric, routing_input)
    return routing_input


def reroute(system: System, plane: str, routing: str, routing_input: RoutingInput | None, *,
            real: bool = False, out: Path | None = None, timeout: float | None = None,
            quiet: bool | None = None) -> dict:
    """Route ``plane`` with ``routing`` from its demand or job file; the routing summary
    (simulated) or the SM host's verified result (real). Raises RoutingError when the
    engine fails."""
    if plane not in system.planes:
        raise T2hxError(f"no plane '{plane}'", file=system.path, field="planes",
                        fix=f"pick one of {', '.join(system.planes)}")
    spec = system.planes[plane]
    fabric = build_plane(system, plane)
    given = validated_input(routing, fabric, routing_input)
    timeout = timeout or float(spec.opensm.get("timeout", 600.0))
    if real:
        req = request_for(system, plane, routing, given.kind, Path(given.path).read_bytes())
        return apply_remote(system, req, quiet)
    out = out or work_root() / system.name / plane / f"reroute-{routing}"
    kw = parx.routing_args(fabric, routing, given, source=system.path)
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


#: Derives a job's traffic from its benchmark's pattern: (benchmark, ranks, study input, the
#: conf's collective rules) -> rank x rank bytes, or None (t2hx.traffic, which the
#: command layer passes in: the benchmarks sit above routing).
Derive = Callable[[str, int, "dict | None", "str | None"], "np.ndarray | None"]


def job_traffic(system: System, job: JobSpec, derive: Derive | None = None
                ) -> tuple[str, np.ndarray | None, str]:
    """(source, rank x rank bytes, origin) of a job's demand: its benchmark's recorded profile
    at the job's rank count, else the traffic ``derive`` finds in the benchmark's own
    pattern, else none. A derivation that moves no bytes (a Barrier) is none."""
    prefix = job_profile(job.benchmark, job.hostfile)
    if prefix:
        return RECORDED, dm.read_monitoring(prefix), shown(prefix)
    ranks = len(dm.read_hostfile(job.hostfile))
    rules = system.model.get("collectives")
    traffic = derive(job.benchmark, ranks, job.input, rules) if derive else None
    if traffic is None or not traffic.any():
        why = "moves no bytes" if traffic is not None else "has no derivation"
        return NO_DEMAND, None, f"no profile at {ranks} ranks and its pattern {why}"
    return DERIVED, traffic, (f"derived from {job.benchmark}'s pattern at {ranks} ranks"
                              f"{f' ({rules})' if rules else ''}")


def shown(path: str | Path) -> str:
    """A path as a log records it: relative to the checkout when inside it, so the same
    campaign run from two clones writes the same note."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def job_input(system: System, plane: str, routing: str, jobs: list[JobSpec],
              out: Path, derive: Derive | None = None,
              background: str | Path | None = None) -> Path | None:
    """The input file of ``jobs`` for ``routing``, validated and written into ``out``: the job
    file (sar) or the demand file from the jobs' recorded or derived demands (parx; None
    when no job has one). For parx, the demand note beside ``out`` says where each job's
    demand came from."""
    fabric = build_plane(system, plane)
    out.mkdir(parents=True, exist_ok=True)
    if routing_engine(routing).reads == JOBS:
        table = {j.job: list(dict.fromkeys(dm.read_hostfile(j.hostfile))) for j in jobs}
        if background is not None:
            table = merged(table, dm.read_jobs(background), background)
        dm.validate_jobs(table, fabric, out / "jobs.txt")
        return atomic_write(out / "jobs.txt", dm.render_jobs(table))
    demands, notes = [], []
    for j in jobs:
        source, matrix, origin = job_traffic(system, j, derive)
        notes.append({"job": j.job, "benchmark": j.benchmark, "source": source,
                      "origin": origin})
        if matrix is not None:
            demands.append(dm.node_demand(matrix, dm.read_hostfile(j.hostfile), origin))
    atomic_write(demand_note(out), json.dumps(
        {"engine": routing, "profiles": shown(profiles_root()), "jobs": notes}, indent=2) + "\n")
    if not demands:
        print(f"reroute: no demand for {', '.join(j.benchmark for j in jobs)} (no profile in "
              f"{profiles_root()}, no pattern): parx keeps its demand-free routing",
              file=sys.stderr)
        return None
    return dm.write_demand(dm.combine(demands), out / "demand.txt", fabric)


def reroute_for_jobs(system: System, plane: str, routing: str, jobs: list[JobSpec], *,
                     out: Path, quiet: bool | None = None, derive: Derive | None = None,
                     background: str | Path | None = None) -> dict | None:
    """The simulated checks' pre-run step: the jobs' input file into ``out``, the plane
    routed with it (the routing cache: every repetition of a case, and every case with the
    same demand, shares one OpenSM run), its files linked into ``out``. None when parx has
    no demand for any of the jobs."""
    path = job_input(system, plane, routing, jobs, out, derive, background)
    if path is None:
        if not any(out.iterdir()):
            out.rmdir()
        return None
    given = RoutingInput(routing_engine(routing).reads or DEMAND, str(path))
    fabric = build_plane(system, plane)
    with Progress("reroute", quiet=quiet) as prog:
        prog.say(f"routing {fabric.name} with {routing} (ibsim + OpenSM, or the routing "
                 "cache's run for this input)")
        entry = ensure_routing(system, plane, routing, None, work_root(), fabric,
                               routing_input=given)
    for item in entry.iterdir():
        if not (out / item.name).exists():
            (out / item.name).symlink_to(item)
    return json.loads((entry / "opensm-run.json").read_text())


def route_real(system: System, plane: str, routing: str, jobs: list[JobSpec], *, out: Path,
               quiet: bool | None = None, derive: Derive | None = None,
               background: str | Path | None = None) -> dict:
    """A real job's routing step: the plane's OpenSM runs ``routing`` with the LMC it needs
    (and the jobs' input file for parx/sar), as confirmed by the SM host; the result is
    written to ``out/route.json``. Any failure raises, so the job stops before its
    benchmark runs and nothing is recorded under the wrong routing."""
    kind, data = None, b""
    reads = routing_engine(routing).reads
    if reads and jobs:
        path = job_input(system, plane, routing, jobs, out, derive, background)
        if path is not None:
            kind, data = reads, path.read_bytes()
    result = apply_remote(system, request_for(system, plane, routing, kind, data), quiet)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / ROUTE_RECORD, json.dumps(result, indent=2, sort_keys=True) + "\n")
    return result


def merged(own: dict[str, list[str]], background: dict[str, list[str]],
           source: object) -> dict[str, list[str]]:
    """The benchmark's jobs beside the background's; a node in both is refused (one job
    per node on a production system)."""
    mine = {h: j for j, hosts in own.items() for h in hosts}
    for job, hosts in background.items():
        shared = next((h for h in hosts if h in mine), None)
        if shared is not None:
            raise T2hxError(f"node {shared} is in background job {job} and in the benchmark's "
                            f"job {mine[shared]}", file=source, field="background",
                            fix="regenerate the background without the benchmark's nodes "
                            "(t2hx history background --exclude HOSTFILE)")
        if job in own:
            raise T2hxError(f"job id {job} is used twice", file=source, field="background",
                            fix="give background jobs their own ids (bg-...)")
    return {**own, **background}


#: The ``t2hx demand`` subcommand that writes each input kind.
INPUT_COMMAND = {DEMAND: "build", JOBS: "jobs"}


def demand_note(out: Path) -> Path:
    """Where the routing step notes each PARX job's demand source: beside the routing
    directory, not in it (a routing directory means "simulate on these dumps")."""
    return out.parent / f"{out.name}-demand.json"


def no_demand_note(out: Path) -> Path:
    """The note logs written before demands were derived keep (every job in it: none)."""
    return out.parent / f"{out.name}-no-demand.json"


def demand_meta(out: Path) -> dict:
    """The run metadata of a case whose routing step wrote into ``out``: where its PARX
    demand came from, so the report can count cases by source."""
    jobs = _read_json(demand_note(out)).get("jobs") or []
    sources = {j.get("source") for j in jobs if isinstance(j, dict)}
    if len(sources) == 1 and (source := sources.pop()) in DEMAND_SOURCES:
        return {DEMAND_KEY: source}
    return {DEMAND_KEY: NO_DEMAND} if no_demand_note(out).is_file() else {}


def demand_line(counts: dict[str, int]) -> str:
    """The report's sentence on the demand PARX jobs were routed with."""
    parts = [f"{counts.get(s, 0)} {label}" for s, label in (
        (RECORDED, "with a recorded profile"), (DERIVED, "with a demand derived from the "
         "benchmark's pattern (no profile at that rank count)"),
        (NO_DEMAND, "without demand"))]
    return "PARX jobs routed: " + ", ".join(parts)


def demand_sources(logdir: Path) -> dict[str, int]:
    """PARX jobs of a campaign log by demand source: capability runs by their t2hx-run.json,
    capacity cases by their kept notes (older logs: the no-demand notes)."""
    counts = dict.fromkeys(DEMAND_SOURCES, 0)
    for path in Path(logdir).glob(f"runs/**/{wire.RUN_META}"):
        source = _read_json(path).get(DEMAND_KEY)
        if source in counts:
            counts[source] += 1
    for path in Path(logdir).glob("capacity/**/*-demand.json"):
        if path.name.endswith("-no-demand.json"):
            counts[NO_DEMAND] += len(_read_json(path).get("jobs") or [1])
            continue
        for job in _read_json(path).get("jobs") or []:
            if isinstance(job, dict) and job.get("source") in counts:
                counts[job["source"]] += 1
    return counts


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
