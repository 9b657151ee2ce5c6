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
    """Switch-to-switch hops of every route between two HCAs, per LID index: how many."""
    counts: dict[int, int] = {}
    for index in lid_indices or [0]:
        for hops, n in enumerate(DestinationTrees(t, index).hop_counts()):
            if n:
                counts[hops] = counts.get(hops, 0) + int(n)
    return dict(sorted(counts.items()))


class DestinationTrees:
    """The routes from every HCA to every HCA's LID ``lid_index`` (port 1 both ends), one
    destination at a time as the tree the LFTs make toward it: a switch forwards every
    route to a destination through the same port, so the routes that cross a switch are
    those of the HCAs below it in that destination's tree. The all-pairs measures (hop
    counts, EFI, channel dependencies) then cost switches x destinations, not the pairs x
    hops of walking every route (21 M routes on a 4,608-host fabric); what they return is
    what walking the routes (:meth:`Tables.paths`) gives, which tests/test_analysis_trees.py
    holds them to, and a route that loops or ends in a black hole is reported as that walk
    reports it."""

    def __init__(self, t: Tables, lid_index: int = 0) -> None:
        self.t = t
        hcas = np.asarray(t.fabric.hcas(), np.int64)
        sw = np.asarray(t.fabric.switches(), np.int64)
        self.hcas, self.sw = hcas, sw
        self.lids = t.base_lid[hcas, 1] + lid_index           # one destination per HCA
        row = np.full(len(t.fabric.nodes), -1, np.int64)
        row[sw] = np.arange(len(sw))
        self.first = t.link_of[hcas, 1]                        # each HCA's link to its switch
        self.src_row = row[t.link_dst[self.first]]            # and that switch's row
        dest = t.lid_node[self.lids]
        port = t.lft[sw][:, self.lids].astype(np.int64)        # (switches, destinations)
        out = np.where(port >= 0, t.link_of[sw[:, None], np.maximum(port, 0)], -1)
        nxt = np.where(out >= 0, t.link_dst[np.maximum(out, 0)], -1)
        self.out = out                                         # the link toward the destination
        self.up = np.where(nxt >= 0, row[np.maximum(nxt, 0)], -1)   # its switch's row, -1
        self.depth = self._depth(nxt == dest[None, :])
        # HCAs below each switch that route to each destination: all but the destination
        own = np.zeros((len(sw), len(hcas)), np.int64)
        np.add.at(own, self.src_row, 1)
        own[self.src_row, np.arange(len(hcas))] -= 1
        self.own = own
        self._check()
        self.count = self._through()

    def _depth(self, last: np.ndarray) -> np.ndarray:
        """Links from each switch to each destination; -1 where the route never arrives."""
        depth = np.where(last, 1, -1)
        cols = np.arange(depth.shape[1])[None, :].repeat(depth.shape[0], axis=0)
        for _ in range(len(self.sw)):
            todo = (depth < 0) & (self.up >= 0)
            nd = np.full(depth.shape, -1)
            nd[todo] = depth[self.up[todo], cols[todo]]
            new = todo & (nd >= 0)
            if not new.any():
                break
            depth[new] = nd[new] + 1
        return depth

    def _check(self) -> None:
        """A route that never arrives: the walk of one such route raises its error."""
        bad = (self.own > 0) & (self.depth < 0)
        if not bad.any():
            return
        s, d = (int(x[0]) for x in np.nonzero(bad))
        h = int(np.flatnonzero((self.src_row == s) & (self.hcas != self.hcas[d]))[0])
        self.t.paths(self.hcas[[h]], self.lids[[d]])
        raise T2hxError(f"no route from switch '{self.t.fabric.nodes[self.sw[s]].name}' to "
                        f"LID {int(self.lids[d])}", fix="the LFTs are inconsistent; re-route")

    def _through(self) -> np.ndarray:
        """Routes crossing each switch toward each destination: its own HCAs', and those of
        the switches whose next hop it is (deepest first)."""
        count = self.own.copy()
        flat, width = count.ravel(), count.shape[1]
        for d in range(int(self.depth.max(initial=0)), 1, -1):
            rows, cols = np.nonzero((self.depth == d) & (self.up >= 0) & (count > 0))
            np.add.at(flat, self.up[rows, cols] * width + cols, count[rows, cols])
        return count

    def hop_counts(self) -> np.ndarray:
        """How many routes have k switch-to-switch hops (the last link enters an HCA)."""
        used = self.own > 0
        return np.bincount(self.depth[used] - 1, weights=self.own[used]).astype(np.int64)

    def link_loads(self) -> np.ndarray:
        """Routes per directed link: :func:`edge_forwarding_index`."""
        used = self.count > 0
        loads = np.bincount(self.out[used], weights=self.count[used],
                            minlength=self.t.links).astype(np.int64)
        np.add.at(loads, self.first, len(self.hcas) - 1)       # every other destination
        return loads

    def dependencies(self) -> np.ndarray:
        """:func:`channel_dependencies`: (link, next link) on some route, sorted, unique."""
        links = self.t.links
        rows, cols = np.nonzero((self.count > 0) & (self.up >= 0))
        keys = [self.out[rows, cols] * links + self.out[self.up[rows, cols], cols]]
        # an HCA's first link, then each link its switch routes another HCA's LID by
        by_switch = {s: np.unique(self.out[s], return_counts=True)
                     for s in np.unique(self.src_row).tolist()}
        for h, s in enumerate(self.src_row.tolist()):
            outs, uses = by_switch[s]
            own = self.out[s, h]                 # toward h itself: no route of h's takes it
            keep = (outs != own) | (uses > 1)
            keys.append(self.first[h] * links + outs[keep])
        unique = np.unique(np.concatenate(keys))
        return np.stack([unique // links, unique % links], axis=1)


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
    """Routes between every two HCAs through each directed link."""
    return DestinationTrees(t, lid_index).link_loads()


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
    return DestinationTrees(t, lid_index).dependencies()


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
    trees = DestinationTrees(t)
    efi = trees.link_loads()
    mask = inter_switch_mask(t)
    deps = trees.dependencies()
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
