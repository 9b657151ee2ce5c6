"""The network updates of a replayed history checked against seed 004's Def 6: every SAR
re-route of a samples file, as the protocol of §3.3 would install it (base LIDs by SAR,
high LIDs by Up*/Down* on the top VL, LMC=1), checked by t2hx/routing/lftupdate.py.

SAR's tables and layers come from px-sar on the graph the day's first OpenSM routing kept
(t2hx/history/pxsar.py); the high LIDs from an LMC=1 Up*/Down* routing by OpenSM, whose LIDs
are the state's (docs/history.md#the-network-update)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

from t2hx.conf import System
from t2hx.history import hostlist
from t2hx.history.pxsar import SNAPSHOT, PxSar
from t2hx.history.sample_routing import Router
from t2hx.routing.cache import ensure_routing
from t2hx.routing.lft import load_tables
from t2hx.routing.lftupdate import State, check_update, compose
from t2hx.routing.sarjobs import JobKey, job_file_text, leaf_of, multi_switch


def job_sets(doc: dict, leaf: dict[str, int]) -> list[list[JobKey]]:
    """The successive multi-switch job sets of a samples file (a change is a re-route)."""
    jobs = [tuple(hostlist.expand(j["hosts"])) for j in doc["jobs"]]
    out: list[list[JobKey]] = []
    for sample in doc["samples"]:
        now = multi_switch([jobs[i] for i in sample["jobs"]], leaf)
        if now and (not out or now != out[-1]):
            out.append(now)
    return out


def updates(doc: dict, system: System, plane: str, work: Path, limit: int | None = None,
            naive_too: bool = False, step: Callable[[int, int], None] | None = None
            ) -> Iterator[dict]:
    """One record per re-route of ``doc`` (up to ``limit``): the Update's fields, the job
    sets' sizes and the seconds the check took."""
    with Router(system, plane, work) as router:
        sets = job_sets(doc, leaf_of(router.fabric))[:None if limit is None else limit + 1]
        if not sets:
            return
        router.sar(sets[0])            # OpenSM routes the first and keeps the graph
        graph = router.graph_dir()
    fabric = router.fabric
    high = load_tables(fabric, ensure_routing(system, plane, "updn", 1, work, fabric))
    top = _layer_limit(graph / SNAPSHOT) - 1
    with PxSar(graph / SNAPSHOT, load_tables(fabric, graph), work / "history-sar") as px:
        prev: State | None = None
        for n, jobs in enumerate(sets):
            state = compose(high, *px.route_with_layers(job_file_text(jobs)), top)
            if prev is not None:
                t0 = time.perf_counter()
                found = check_update(prev, state, naive_too)
                yield {"reroute": n, "jobs": len(jobs), **asdict(found),
                       "preserving": found.preserving,
                       "check_s": round(time.perf_counter() - t0, 3)}
            prev = state
            if step:
                step(n + 1, len(sets))


def _layer_limit(snapshot: Path) -> int:
    """The VLs the plugin may layer over (the snapshot's graph line, t2hx/history/pxsar.py)."""
    with snapshot.open() as f:
        f.readline()
        return int(f.readline().split()[-1])
