"""One network of seed 001's Chapter 5 sweep, analysed: a random shortcut, circulant or
Dragonfly graph of ``N = 2^k`` switches and degree ``d = 2·log2 N − 1`` (§5.1), one node per
switch, minimal routing (every switch pair at its graph distance). What it reports:

- diameter and average shortest path length (Figs 5.1, 5.2);
- total hops of binomial Broadcast, recursive-doubling Allreduce and Bruck Alltoall over
  all N nodes (Figs 5.3–5.5): ring-consecutive mapping (rank i on switch i), random
  mapping, and on the random shortcut network both re-placed by two-opt on hops;
- mean hops of point-to-point messages between the mapped nodes, for 8 … N mapped nodes and
  each mapping of the network (Fig 5.12; every ordered pair, not the thesis' 100,000 draws),
  and of a Bruck Alltoall's messages among the same nodes: §5.4's total hops of a mix with a
  share ``r`` of collective messages is ``total · (r · alltoall + (1 − r) · mean)`` (Fig 5.14);
- with a system's node and link parameters (``P2PTiming``), the mean time of a 128-byte
  bidirectional exchange between two of the mapped nodes (Fig 5.13);
- the two-opt tables (Tables 3.4–3.6: random shortcut, ``table_ranks`` ranks, random /
  hierarchical / ring mappings, each collective) when N is ``table_switches``;
- cable lengths in the cabinet layout of §5.6 (t2hx.fabric.cabling; Fig 5.19).
- with ``Annealing`` (random shortcut networks only), §3.5's comparison on an 8-degree random
  network of the same size: a Broadcast's total hops as ordered conventionally, by two-opt
  and by simulated annealing, and the CPU time of each (Figs 3.17, 3.18).

Everything is a deterministic function of (kind, N, seed, iterations).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from t2hx.errors import T2hxError
from t2hx.fabric.cabling import cable_lengths
from t2hx.fabric.dragonfly import dragonfly_edges, group_size
from t2hx.fabric.pathlengths import diameter_aspl, hop_matrix
from t2hx.fabric.shortcut import circulant_edges, edge_fabric, random_shortcut_edges
from t2hx.placement import mappings
from t2hx.placement.collective_messages import COLLECTIVES, messages
from t2hx.placement.seeding import rng_for
from t2hx.placement.annealing import anneal
from t2hx.placement.twoopt import HopObjective, two_opt

KINDS = ("random-shortcut", "circulant", "dragonfly")
#: The mappings each network is measured under (§5.2, §5.3): index-based ones only.
P2P_MAPPINGS = {"random-shortcut": ("random", "hierarchical", "ring"),
                "circulant": ("random", "ring", "circulant"),
                "dragonfly": ("random", "ring")}
TABLE_MAPPINGS = ("random", "hierarchical", "ring")


@dataclass(frozen=True)
class P2PTiming:
    """Fig 5.13's exchange: ``size`` bytes each way between two mapped nodes, one pair at a
    time (the thesis times 10,000 of them in turn, so no two share a link), timed as the flow
    model times a lone message: ``latency`` over the switches of the path (the flow model's
    LogGP, built by t2hx.flowsim.exchange.p2p_timing) plus the size at the link rate.
    Full-duplex links carry both directions at once, so the exchange takes one way's time."""
    latency: Callable[[np.ndarray], np.ndarray]   # zero-byte one-way time over n switches
    rate: float                                   # bytes/s of a link
    size: int = 128

    def seconds(self, hops: np.ndarray | float) -> np.ndarray:
        # One node per switch: h inter-switch links cross h + 1 switches.
        return self.latency(np.asarray(hops, dtype=np.float64) + 1) + self.size / self.rate


@dataclass(frozen=True)
class Annealing:
    """§3.5 (Figs 3.17, 3.18): a binomial Broadcast over all N nodes of an 8-degree random
    network, the conventional tree (rank i on switch i) against two-opt's 5,000 swaps and
    simulated annealing of each number of iterations (t2hx/placement/annealing.py), total
    hops and CPU time, up to ``up_to`` switches; an annealing run whose swap trials
    (iterations × N) would exceed ``trials_up_to`` is left out, as the thesis' SA runs that
    "can not provide the solution" at large sizes."""
    degree: int = 8
    two_opt_trials: int = 5000
    sa_iterations: tuple[int, ...] = (72, 1000, 10000)
    up_to: int = 4096
    trials_up_to: int = 1_000_000


@dataclass(frozen=True)
class Sweep:
    seed: int = 1
    iterations: int = 200_000       # two-opt swap trials (§3.3.3, §5.2.1: 200,000)
    two_opt_up_to: int = 1024       # largest N whose collectives are re-placed by two-opt
    p2p_switches: int = 1024        # Fig 5.12's network size
    table_switches: int = 1024      # Tables 3.4–3.6's network size
    table_ranks: int = 512
    table_iterations: int = 200_000  # §3.4.2: Tables 3.4–3.6 at 200,000 trials
    p2p_timing: P2PTiming | None = None  # Fig 5.13 (none: hops only)
    annealing: Annealing | None = None   # Figs 3.17, 3.18 (none: not run)


#: The all-pairs hop matrix is n² int16: 512 MiB at this size.
MAX_SWITCHES = 16384


def degree_for(n: int) -> int:
    if n < 4 or n & (n - 1) or n > MAX_SWITCHES:
        raise T2hxError(f"{n} switches", field="switches",
                        fix=f"use a power of two from 4 to {MAX_SWITCHES} (seed 001 §4.2: "
                        "N = 2^k)")
    return 2 * (n.bit_length() - 1) - 1


def network_edges(kind: str, n: int, seed: int) -> list[tuple[int, int]]:
    d = degree_for(n)
    if kind == "random-shortcut":
        return random_shortcut_edges(n, d, seed)
    if kind == "circulant":
        return circulant_edges(n, [2 ** i for i in range(n.bit_length() - 1)])
    if kind == "dragonfly":
        return dragonfly_edges(n, d)
    raise T2hxError(f"unknown network kind '{kind}'", field="kind",
                    fix=f"use one of: {', '.join(KINDS)}")


def analyse(kind: str, n: int, sweep: Sweep = Sweep()) -> dict:
    began = time.monotonic()
    edges = network_edges(kind, n, sweep.seed)
    hops = hop_matrix(n, edges)
    diameter, aspl = diameter_aspl(hops)
    cables = cable_lengths(n, edges)
    out: dict = {"kind": kind, "switches": n, "degree": degree_for(n), "links": len(edges),
                 "seed": sweep.seed, "iterations": sweep.iterations,
                 "diameter": diameter, "aspl": round(aspl, 6),
                 "cable_total_m": round(float(cables.sum()), 3),
                 "cable_mean_m": round(float(cables.mean()), 6)}
    if kind == "dragonfly":
        out["group_size"] = group_size(n, degree_for(n))
    out["collectives"] = collective_rows(kind, hops, sweep)
    out["p2p"] = p2p_rows(kind, n, edges, hops, sweep) if n == sweep.p2p_switches else []
    out["twoopt"] = (table_rows(n, edges, hops, sweep)
                     if kind == "random-shortcut" and n == sweep.table_switches else [])
    a = sweep.annealing
    out["annealing"] = (annealing_rows(n, sweep.seed, a)
                        if a and kind == "random-shortcut" and n <= a.up_to else [])
    out["seconds"] = round(time.monotonic() - began, 2)
    return out


def summary(out: dict) -> dict[str, float]:
    """The headline numbers (t2hx.wire.NETWORK_METRICS): collectives under ring mapping."""
    ring = {r["collective"]: r["hops"] for r in out["collectives"] if r["mapping"] == "ring"}
    return {"diameter": out["diameter"], "aspl": out["aspl"],
            "cable_mean_m": out["cable_mean_m"],
            **{f"{c}_hops": ring[c] for c in COLLECTIVES}}


def collective_rows(kind: str, hops: np.ndarray, sweep: Sweep) -> list[dict]:
    n = len(hops)
    starts = {"ring": np.arange(n, dtype=np.int64),
              "random": mappings.random_mapping(n, n, rng_for(sweep.seed, "sweep-random", n))}
    rows = []
    for coll in COLLECTIVES:
        msgs = messages(coll, n)
        for name, start in starts.items():
            total = int(hops[start[msgs.src], start[msgs.dst]].sum(dtype=np.int64))
            rows.append({"collective": coll, "mapping": name, "hops": total,
                         "messages": len(msgs)})
            if kind == "random-shortcut" and n <= sweep.two_opt_up_to:
                r = two_opt(HopObjective(hops, msgs), start, sweep.iterations,
                            rng_for(sweep.seed, "sweep-2opt", coll, name, n))
                rows.append({"collective": coll, "mapping": f"{name}+two-opt", "hops": r.final,
                             "messages": len(msgs)})
    return rows


def p2p_rows(kind: str, n: int, edges: list[tuple[int, int]], hops: np.ndarray,
             sweep: Sweep) -> list[dict]:
    rows = []
    m = 8
    while m <= n:
        for name in P2P_MAPPINGS[kind]:
            nodes = pick(name, n, m, edges, rng_for(sweep.seed, "sweep-p2p", name, m))
            sub = hops[np.ix_(nodes, nodes)]
            a2a = messages("alltoall", m)
            mean = float(sub.sum(dtype=np.int64)) / (m * (m - 1))
            row = {"mapping": name, "nodes": m, "mean_hops": round(mean, 6),
                   # §5.4: a Bruck Alltoall among the same nodes, per message
                   "alltoall_hops": round(float(sub[a2a.src, a2a.dst].sum()) / len(a2a), 6)}
            if sweep.p2p_timing:
                # The time is affine in the hops: the mean time is the time of the mean.
                row["p2p_time_us"] = round(float(sweep.p2p_timing.seconds(mean)) * 1e6, 6)
                row["p2p_bytes"] = sweep.p2p_timing.size
            rows.append(row)
        m *= 2
    return rows


def annealing_rows(n: int, seed: int, a: Annealing) -> list[dict]:
    """Figs 3.17/3.18 at one size: total hops of the Broadcast and the CPU time that found
    them, per method ("conv", "two-opt", "sa-<iterations>"); ``mapping`` names the method."""
    obj = HopObjective(hop_matrix(n, random_shortcut_edges(n, a.degree, seed)),
                       messages("bcast", n))
    start = np.arange(n)
    rows = [{"mapping": "conv", "degree": a.degree, "total_hops": obj.total(start),
             "trials": 0, "cpu_s": 0.0}]
    runs = [("two-opt", lambda: two_opt(obj, start, a.two_opt_trials,
                                        rng_for(seed, "fig3-17-2opt", n)))]
    runs += [(f"sa-{k}", partial(anneal, obj, start, k, rng_for(seed, "fig3-17-sa", k, n)))
             for k in a.sa_iterations if k * n <= a.trials_up_to]
    for name, run in runs:
        r = run()
        rows.append({"mapping": name, "degree": a.degree, "total_hops": r.final,
                     "trials": r.iterations, "cpu_s": round(r.cpu_seconds, 4)})
    return rows


def table_rows(n: int, edges: list[tuple[int, int]], hops: np.ndarray, sweep: Sweep) -> list[dict]:
    rows = []
    for coll in COLLECTIVES:
        msgs = messages(coll, sweep.table_ranks)
        obj = HopObjective(hops, msgs)
        for name in TABLE_MAPPINGS:
            start = pick(name, n, sweep.table_ranks, edges,
                         rng_for(sweep.seed, "bench-mapping", name))
            r = two_opt(obj, start, sweep.table_iterations,
                        rng_for(sweep.seed, "bench-2opt", coll, name))
            rows.append({"collective": coll, "mapping": name, "ranks": sweep.table_ranks,
                         "initial": r.initial, "final": r.final,
                         "reduction_pct": round(r.reduction_pct, 2),
                         "iterations": sweep.table_iterations})
    return rows


def pick(name: str, n: int, m: int, edges: list[tuple[int, int]],
         rng: np.random.Generator) -> np.ndarray:
    """Node (= switch) per rank of mapping ``name`` for ``m`` of the ``n`` nodes."""
    if name == "random":
        return mappings.random_mapping(n, m, rng)
    if name == "ring":
        return mappings.ring_mapping(n, m, rng)
    if name == "circulant":
        return mappings.circulant_mapping(n, m, rng)
    if name == "hierarchical":
        return mappings.hierarchical_mapping(edge_fabric(n, edges), m, rng)
    raise T2hxError(f"unknown mapping '{name}'", field="mapping",
                    fix="use random, ring, circulant or hierarchical")
