"""Seed 004 §4.2's replay: at every sampling point of a job history, the routing metrics of
the running multi-switch jobs under each routing, every table routed by the real OpenSM.

The oblivious engines (updn, ftree, dfsssp) are routed once per plane. SAR is routed from a
job file of the sample's multi-switch jobs, and only when that set changes, as the filtering
tool of §3.2.1 decides: a job on one leaf switch does not use the network, and job ids are
ignored (the set of node lists is the key; its job file numbers jobs in a fixed order, so one
job set is one routing-cache entry however often it recurs).

Metrics per (sample, routing), seed 004 Defs 7-8 and §4.2 (t2hx/routing/analysis.py):
``max_efi`` γᵉ_max over inter-switch links, ``avg_job_max_efi`` the mean over jobs of
γ_max(j), ``dark_fiber`` θ in %, ``avg_job_links`` the mean number of inter-switch links a
job's routes use. A job's link loads depend only on its nodes and the tables, so they are
computed once per (job, routing table) and summed per sample.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.history import hostlist
from t2hx.history.pxsar import SNAPSHOT, PxSar, graph_key, keep_graph
from t2hx.routing.analysis import all_pairs, inter_switch_mask, link_loads
from t2hx.atomic import atomic_write
from t2hx.routing.cache import check_input, ensure_routing
from t2hx.routing.engines import route_args
from t2hx.routing_engines import JOBS, RoutingInput, reading
from t2hx.routing.session import Session
from t2hx.routing.sarjobs import JobKey, job_file_text, leaf_of, multi_switch
from t2hx.routing.lft import Tables, load_tables

OBLIVIOUS = ("updn", "ftree", "dfsssp")
#: Engines re-routed for each set of running jobs (SAR): the engine table's readers of a
#: job file.
REROUTED = reading(JOBS)
METRICS = ("max_efi", "avg_job_max_efi", "dark_fiber", "avg_job_links")


@dataclass
class Routed:
    """One routing table with the link loads of the jobs already measured on it."""
    tables: Tables
    mask: np.ndarray
    loads: dict[JobKey, np.ndarray] = field(default_factory=dict)

    def load(self, job: JobKey) -> np.ndarray:
        if job not in self.loads:
            t = self.tables
            self.loads[job] = link_loads(t, *all_pairs(t, [t.fabric.index(h) for h in job])) \
                * self.mask
        return self.loads[job]

    def metrics(self, jobs: list[JobKey]) -> dict[str, float]:
        total = np.zeros(self.tables.links, dtype=np.int64)
        job_max, job_links = [], []
        for job in jobs:
            load = self.load(job)
            total += load
            job_max.append(int(load.max(initial=0)))
            job_links.append(int((load > 0).sum()))
        n_links = int(self.mask.sum())
        return {"max_efi": int(total.max(initial=0)),
                "avg_job_max_efi": float(np.mean(job_max)) if jobs else 0.0,
                "dark_fiber": 100.0 * float((total[self.mask] == 0).sum()) / n_links,
                "avg_job_links": float(np.mean(job_links)) if jobs else 0.0}


#: How SAR is re-routed for each job set after the first: ``px-sar`` (the plugin's engine
#: on the graph OpenSM built, t2hx/history/pxsar.py) or ``opensm`` (SIGHUP to the OpenSM that
#: routed the first, t2hx/routing/session.py). Both give the same tables (tested); px-sar
#: leaves out OpenSM's sweep of the simulated subnet.
SAR_WITH = ("px-sar", "opensm")


class Router:
    """Routed tables of one plane: oblivious engines once (cached on disk), SAR once per job
    set, as the filtering tool makes an operator's OpenSM do: the first by OpenSM with our
    plugin, the others by ``sar_with`` (:data:`SAR_WITH`). Use as a context manager: it
    stops OpenSM, its ibsim and px-sar."""

    def __init__(self, system: System, plane: str, work: Path, quiet: bool = True,
                 sar_with: str = "px-sar") -> None:
        if sar_with not in SAR_WITH:
            raise T2hxError(f"no SAR re-route '{sar_with}'", field="sar_with",
                            fix="use " + " or ".join(SAR_WITH))
        self.system, self.plane, self.work, self.quiet = system, plane, work, quiet
        self.sar_with = sar_with
        self.fabric = build_plane(system, plane)
        self.cache: dict[str, Routed] = {}
        self.reroutes = 0
        self.session: Session | None = None
        self.pxsar: PxSar | None = None

    def __enter__(self) -> Router:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            self.session.__exit__(*exc)
            self.session = None
        if self.pxsar is not None:
            self.pxsar.__exit__(*exc)
            self.pxsar = None

    def oblivious(self, engine: str) -> Routed:
        if engine not in self.cache:
            out = ensure_routing(self.system, self.plane, engine, None, self.work, self.fabric,
                                 quiet=self.quiet)
            self.cache[engine] = self._read(out)
        return self.cache[engine]

    def sar(self, jobs: list[JobKey]) -> Routed:
        text = job_file_text(jobs)
        key = "sar-" + hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.cache:
            self.reroutes += 1
            # Only the current and the previous set are kept: a history revisits few sets.
            for old in [k for k in self.cache if k.startswith("sar-")][:-1]:
                del self.cache[old]
            self.cache[key] = self._route_sar(text)
        return self.cache[key]

    def _route_sar(self, text: str) -> Routed:
        if self.pxsar is None and self.sar_with == "px-sar" and self.graph_dir().is_dir():
            self._start_pxsar(self.graph_dir())       # an earlier day's OpenSM built the graph
        if self.pxsar is not None:
            tables = self.pxsar.route(text)
            return Routed(tables, inter_switch_mask(tables))
        out = self._sar_session(text)
        routed = self._read(out, cache=False)
        if self.sar_with == "px-sar":      # OpenSM's part is done: it built the graph
            keep_graph(out, self.graph_dir())
            self._start_pxsar(out, routed.tables)
            assert self.session is not None
            self.session.__exit__(None, None, None)
            self.session = None
        return routed

    def graph_dir(self) -> Path:
        """The graph entry of this plane (t2hx/history/pxsar.py: snapshot and dumps)."""
        spec = self.system.plane(self.plane).opensm
        options = route_args(self.fabric, "sar", spec, self.system.path)["extra_conf"]
        return self.work / "history-sar" / f"graph-{graph_key(self.system.sha256, self.plane, options)}"

    def _start_pxsar(self, where: Path, tables: Tables | None = None) -> None:
        if tables is None:
            tables = load_tables(self.fabric, where)
        self.pxsar = PxSar(where / SNAPSHOT, tables, self.work / "history-sar")

    def _sar_session(self, text: str) -> Path:
        """Route SAR for ``text``: the session's first routing, or a re-route."""
        if self.session is not None:
            return self.session.reroute(text)
        root = self.work / "history-sar"
        root.mkdir(parents=True, exist_ok=True)
        out = Path(tempfile.mkdtemp(dir=root, prefix="opensm-"))
        jobs = out / "jobs.txt"
        atomic_write(jobs, text)
        check_input(self.fabric, RoutingInput(JOBS, str(jobs)))
        spec = self.system.plane(self.plane).opensm
        args = route_args(self.fabric, "sar", spec, self.system.path,
                          routing_input=RoutingInput(JOBS, str(jobs)))
        if self.sar_with == "px-sar":
            conf = args["extra_conf"]
            conf["event_plugin_options"] += f",px_snapshot={out / SNAPSHOT}"
        self.session = Session(self.fabric, out, "sar", args, jobs, spec["timeout"])
        self.session.__enter__()
        return out

    def _read(self, out: Path, cache: bool = True) -> Routed:
        tables = load_tables(self.fabric, out, cache=cache)
        return Routed(tables, inter_switch_mask(tables))


def route_samples(samples: dict, router: Router, engines: Iterable[str] = (*OBLIVIOUS, *REROUTED),
           step: Callable[[int, int], None] | None = None) -> list[dict]:
    """One row per (sample, engine): t, engine, jobs, multi_switch_jobs, rerouted, METRICS."""
    leaf = leaf_of(router.fabric)
    hosts = [tuple(hostlist.expand(j["hosts"])) for j in samples["jobs"]]
    for k, job in enumerate(hosts):
        unknown = next((h for h in job if h not in leaf), None)
        if unknown is not None:
            raise T2hxError(f"host {unknown!r} is not on plane {router.plane}",
                            field=f"jobs[{k}].hosts", fix="sample the trace on this system")
    rows: list[dict] = []
    last: list[JobKey] | None = None
    for n, sample in enumerate(samples["samples"]):
        jobs = multi_switch((hosts[i] for i in sample["jobs"]), leaf)
        for engine in engines:
            rerouted = engine in REROUTED
            routed = router.sar(jobs) if rerouted else router.oblivious(engine)
            rows.append({"t": sample["t"], "engine": engine, "jobs": len(sample["jobs"]),
                         "multi_switch_jobs": len(jobs),
                         "rerouted": rerouted and jobs != last,
                         **routed.metrics(jobs)})
        last = jobs
        if step:
            step(n + 1, len(samples["samples"]))
    return rows


def improvements(rows: list[dict], metric: str, other: str) -> dict[str, float]:
    """Seed 004 Table 1's cells for one metric: SAR's improvement over ``other``, the maximum
    and the average over samples, absolute and in % of ``other``'s value. For θ the
    improvement is the difference in percentage points (Table 1 gives θ in %); for the
    links per job, higher is better, so the improvement is SAR minus other."""
    by = {(r["t"], r["engine"]): r[metric] for r in rows}
    times = sorted({r["t"] for r in rows if r["engine"] in REROUTED})
    sign = 1.0 if metric == "avg_job_links" else -1.0      # higher / lower is better
    gains, pcts = [], []
    for t in times:
        s, o = by[(t, "sar")], by[(t, other)]
        gain = sign * (s - o)
        gains.append(gain)
        pcts.append(100.0 * gain / o if o else 0.0)
    if not gains:
        return {"max": 0.0, "max_pct": 0.0, "avg": 0.0, "avg_pct": 0.0}
    k = int(np.argmax(gains))
    return {"max": float(gains[k]), "max_pct": float(pcts[k]),
            "avg": float(np.mean(gains)), "avg_pct": float(np.mean(pcts))}


def write_rows(rows: list[dict], path: Path) -> None:
    atomic_write(path, json.dumps(rows, separators=(",", ":")) + "\n")


def write_jobs(doc: dict, router: Router, order: list[str], path: Path) -> None:
    """The day's jobs: start, end, leaf switches and their nodes as runs of host indices
    (the system's host order) — what seed 004's Fig 1 draws."""
    index = {h: k for k, h in enumerate(order)}
    leaf = leaf_of(router.fabric)
    out = []
    for job in doc["jobs"]:
        hosts = hostlist.expand(job["hosts"])
        ks = sorted(index[h] for h in hosts)
        runs = [[ks[0], ks[0]]]
        for k in ks[1:]:
            if k == runs[-1][1] + 1:
                runs[-1][1] = k
            else:
                runs.append([k, k])
        out.append({"id": job["id"], "start": job["start"], "end": job["end"],
                    "switches": len({leaf[h] for h in hosts}), "runs": runs})
    atomic_write(path, json.dumps(out, separators=(",", ":")) + "\n")


def day_text(system: System, plane: str, trace: str, day: int, interval: float, work: Path,
             rows_path: Path, quiet: bool = True, placement: str = "first-fit") -> str:
    """One day of a history replayed (a case of checks/history.py): the rows written to
    ``rows_path``, each engine's means over the day as wire lines."""
    from t2hx import wire
    from t2hx.history import samples

    loaded = samples.load(trace, system, policy=placement)
    doc = samples.samples_doc(loaded[0], loaded[1], system.name, len(loaded[2]), interval,
                              first_day=day, days=1)
    with Router(system, plane, work, quiet) as router:
        rows = route_samples(doc, router)
    write_rows(rows, rows_path)
    write_jobs(doc, router, system.hostnames(), rows_path.with_name(wire.HISTORY_JOBS))
    lines = []
    for engine in (*OBLIVIOUS, *REROUTED):
        mine = [r for r in rows if r["engine"] == engine]
        lines.append(wire.history_line(wire.HistoryEngine(
            engine, len(mine), *(float(np.mean([r[m] for r in mine])) if mine else 0.0
                                 for m in METRICS))))
    lines.append(f"T2HX history sar_routings={router.reroutes}")
    return "\n".join([*lines, wire.HISTORY_DONE]) + "\n"
