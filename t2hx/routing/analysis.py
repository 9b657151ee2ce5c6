"""Routing analysis from real LFTs: hop counts, edge forwarding index (EFI), effective EFI
and dark fiber for a job mapping (seed 004 Defs 7-8), and a channel-dependency check.

EFI of a link = number of (source HCA, destination HCA) routes through it. For a job
mapping, the effective EFI γᵉ(c) = Σ_jobs number of intra-job routes through the
inter-switch link c; dark fiber θ = share of inter-switch links with γᵉ = 0.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from t2hx.errors import T2hxError
from t2hx.routing.lft import Tables


@dataclass
class JobMetrics:
    effective_efi: np.ndarray   # per directed link (0 on HCA links)
    max_effective_efi: int
    dark_fiber: float
    per_job_max_efi: list[int]
    links_per_job: list[int]


def inter_switch_mask(t: Tables) -> np.ndarray:
    sw = np.array([n.kind == "switch" for n in t.fabric.nodes])
    return sw[t.link_src] & sw[t.link_dst]


def all_pairs(t: Tables, hcas: list[int] | None = None,
              lid_index: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of distinct HCAs: source nodes and destination LIDs."""
    h = np.array(hcas if hcas is not None else t.fabric.hcas())
    src, dst = np.meshgrid(h, h, indexing="ij")
    off = src != dst
    lids = t.base_lid[dst[off], 1] + lid_index
    return src[off], lids


def hop_histogram(t: Tables, lid_indices: list[int] | None = None) -> dict[int, int]:
    counts: dict[int, int] = {}
    for index in lid_indices or [0]:
        src, lids = all_pairs(t, lid_index=index)
        for hops, n in enumerate(np.bincount(t.switch_hops(src, lids))):
            if n:
                counts[hops] = counts.get(hops, 0) + int(n)
    return dict(sorted(counts.items()))


def link_loads(t: Tables, src: np.ndarray, lids: np.ndarray) -> np.ndarray:
    """Routes per directed link for the given (source, destination LID) pairs."""
    if len(src) == 0:
        return np.zeros(t.links, dtype=np.int64)
    p = t.paths(src, lids)
    return np.bincount(p[p >= 0], minlength=t.links)


def shift_streams(t: Tables, hosts: list[int], lid_index: int = 0) -> int:
    """The most flows one inter-switch cable carries in one direction at any step of
    mpiGraph's shift pattern over ``hosts`` in rank order (step k: rank i sends to
    i + k mod n, all ranks at once; mpiGraph.c ``main``), routed by the tables' LID
    ``lid_index`` of each destination: seed 000 Fig 1's "traffic streams sharing a cable"."""
    n, mask = len(hosts), inter_switch_mask(t)
    h = np.asarray(hosts)
    most = 0
    for k in range(1, n):
        loads = link_loads(t, h, t.base_lid[np.roll(h, -k), 1] + lid_index)
        most = max(most, int(loads[mask].max(initial=0)))
    return most


def edge_forwarding_index(t: Tables, lid_index: int = 0) -> np.ndarray:
    return link_loads(t, *all_pairs(t, lid_index=lid_index))


def job_metrics(t: Tables, jobs: list[list[str]], lid_index: int = 0) -> JobMetrics:
    """Effective EFI, dark fiber, per-job max EFI and links per job for jobs given as lists
    of hostnames (a job-to-node mapping)."""
    mask = inter_switch_mask(t)
    total = np.zeros(t.links, dtype=np.int64)
    per_max, per_links = [], []
    seen: set[str] = set()
    for k, job in enumerate(jobs):
        clash = seen.intersection(job)
        if clash:
            raise T2hxError(f"host '{sorted(clash)[0]}' is in two jobs", field=f"jobs[{k}]",
                            fix="give every job its own nodes")
        seen.update(job)
        load = link_loads(t, *all_pairs(t, [t.fabric.index(h) for h in job], lid_index)) * mask
        total += load
        per_max.append(int(load.max(initial=0)))
        per_links.append(int((load > 0).sum()))
    effective = total * mask
    n_links = int(mask.sum())
    dark = float((effective[mask] == 0).sum() / n_links) if n_links else 0.0
    return JobMetrics(effective, int(effective.max(initial=0)), dark, per_max, per_links)


def channel_dependencies(t: Tables, lid_index: int = 0) -> np.ndarray:
    """Unique (link, next link) pairs over all HCA-to-HCA routes: the channel dependency
    graph of the routing on a single virtual lane."""
    src, lids = all_pairs(t, lid_index=lid_index)
    p = t.paths(src, lids)
    a, b = p[:, :-1].ravel(), p[:, 1:].ravel()
    ok = (a >= 0) & (b >= 0)
    return np.unique(np.stack([a[ok], b[ok]], axis=1), axis=0)


def is_acyclic(edges: np.ndarray, nodes: int) -> bool:
    """Kahn's algorithm on the dependency graph."""
    indeg = np.bincount(edges[:, 1], minlength=nodes) if len(edges) else np.zeros(nodes, int)
    order = np.argsort(edges[:, 0], kind="stable") if len(edges) else np.array([], int)
    heads = edges[order, 0] if len(edges) else np.array([], int)
    tails = edges[order, 1] if len(edges) else np.array([], int)
    starts = np.searchsorted(heads, np.arange(nodes + 1))
    indeg = indeg.copy()
    queue = deque(np.flatnonzero(indeg == 0).tolist())
    removed = 0
    while queue:
        u = queue.popleft()
        removed += 1
        for v in tails[starts[u]:starts[u + 1]]:
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(int(v))
    return removed == nodes


def no_pair_note(hosts: int) -> str:
    return (f"{hosts} host(s): no host pair to route between, so no hop counts or EFI "
            "(routed anyway; add hosts to measure)")


def summary(t: Tables, routing: dict) -> dict:
    """The routing-summary fields derived from the tables."""
    lid_indices = list(range(1 << t.lmc))
    hist = hop_histogram(t, lid_indices)
    efi = edge_forwarding_index(t)
    mask = inter_switch_mask(t)
    deps = channel_dependencies(t)
    return {
        "vls": 1, "seconds": 0.0, "engine_used": routing.get("engine", "unknown"),
        **routing,
        "lmc": t.lmc,
        "hca_count": len(t.fabric.hcas()),
        "switch_count": len(t.fabric.switches()),
        # A bring-up fabric may have one host: no pair to measure, which is not an error.
        "max_switch_hops": max(hist) if hist else None,
        "hop_histogram": {str(k): v for k, v in hist.items()},
        "avg_switch_hops": round(sum(k * v for k, v in hist.items()) / sum(hist.values()), 4)
        if hist else None,
        **({} if hist else {"note": no_pair_note(len(t.fabric.hcas()))}),
        "max_efi": int(efi[mask].max(initial=0)),
        "mean_efi": round(float(efi[mask].mean()) if mask.any() else 0.0, 3),
        "unused_links": int((efi[mask] == 0).sum()),
        "inter_switch_links": int(mask.sum()),
        "cdg_acyclic_single_vl": is_acyclic(deps, t.links),
    }
