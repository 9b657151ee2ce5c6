"""SAR's job set as the filtering tool of seed 004 §3.2.1 keeps it: only jobs whose nodes hang
off more than one leaf switch (a job on one switch does not use the network), identified by
their node lists, not their ids. One set gives one job file, whatever the ids and the order,
so a set that recurs routes (and caches) the same."""

from __future__ import annotations

from collections.abc import Iterable

from t2hx.fabric.graph import Fabric
from t2hx.routing import demand as dm

JobKey = tuple[str, ...]


def leaf_of(fabric: Fabric) -> dict[str, int]:
    """Each host's leaf switch."""
    return {fabric.nodes[h].name: fabric.switch_of(h) for h in fabric.hcas()}


def multi_switch(jobs: Iterable[JobKey], leaf: dict[str, int]) -> list[JobKey]:
    """The jobs on more than one leaf switch, each sorted, the list sorted."""
    return sorted(tuple(sorted(j)) for j in jobs if len({leaf[h] for h in j}) > 1)


def job_file_text(jobs: list[JobKey]) -> str:
    """SAR's job file for a job set: ids by position in the sorted set, not the trace's."""
    return dm.render_jobs({f"j{k}": list(j) for k, j in enumerate(sorted(jobs))})
