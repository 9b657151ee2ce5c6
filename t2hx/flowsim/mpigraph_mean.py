"""mpiGraph's "avg" on its own: a cache hit renders mpiGraph's report without importing the
simulator (t2hx/benchmarks/mpigraph.py), and the simulator's patterns use the same mean."""

from __future__ import annotations

import numpy as np

__all__ = ["average"]


def average(m: np.ndarray) -> float:
    """mpiGraph's "avg": the message size over the mean time per message of every
    off-diagonal pair (``mpiGraph.c`` ``code()``: ``MBsec / sendsum`` after dividing the summed
    times by ``nnodes·(nnodes−1)·times``), i.e. the harmonic mean of the matrix's bandwidths,
    not their arithmetic mean. A pair with no bandwidth (never measured) counts as zero."""
    n = len(m)
    if n < 2:
        return 0.0
    off = m[~np.eye(n, dtype=bool)]
    if (off <= 0).any():
        return 0.0
    return float(len(off) / np.sum(1.0 / off))
