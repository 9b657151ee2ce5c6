"""NPB IS (seed 001 §3.4.3): integer sort. Every iteration ranks the local keys into
buckets, agrees on the bucket ranges with an MPI_Allreduce of the bucket counts and moves
each key to its range's rank with an MPI_Alltoall (counts) and an MPI_Alltoallv (keys)
(is.c ``rank``)."""

from t2hx.benchmarks.npbtext import npb_kernel, ops, npb_class, sizes
from t2hx.benchmarks.proxyapp import M, Skeleton


def key_bytes(inp: dict, ranks: int) -> float:
    """A rank's keys (4 B each), which the Alltoallv redistributes every iteration."""
    log2_keys, _, min_procs = sizes(inp, "is")
    return 4.0 * 2 ** log2_keys * min_procs / ranks


BENCHMARK = npb_kernel(
    "is", "NPB IS", skeleton=Skeleton(0.05, 11, (("alltoall_total", 32 * M),
                                                 ("allreduce", 4096))),
    work=lambda i, n: ops("is", npb_class(i, "is")) / n, measures={"data": key_bytes})
