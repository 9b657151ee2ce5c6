"""Shortest-path lengths of a switch graph given as an edge list, for graphs too large for a
dense float matrix (seed 001 §5.1 goes to 8,192 switches): breadth-first search from chunks
of sources, distances kept as int16 (256 MiB would be float64's 8,192² at a time; a chunk of
512 sources is 32 MiB)."""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from t2hx.errors import RoutingError

CHUNK = 512


def adjacency(n: int, edges: list[tuple[int, int]]) -> csr_matrix:
    pairs = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return csr_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))


def hop_matrix(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """(n, n) int16 switch hops; a disconnected graph is an error (every pair is used)."""
    adj = adjacency(n, edges)
    out = np.empty((n, n), dtype=np.int16)
    for first in range(0, n, CHUNK):
        rows = np.arange(first, min(n, first + CHUNK))
        dist = shortest_path(adj, directed=False, unweighted=True, indices=rows)
        if np.isinf(dist).any():
            raise RoutingError(f"a graph of {n} switches has switches that cannot reach each "
                               "other", field="topology", fix="connect every switch")
        out[rows] = dist.astype(np.int16)
    return out


def diameter_aspl(hops: np.ndarray) -> tuple[int, float]:
    """Diameter and average shortest path length over ordered pairs of distinct switches."""
    n = len(hops)
    total = int(hops.sum(dtype=np.int64))
    return int(hops.max()), total / (n * (n - 1)) if n > 1 else 0.0
