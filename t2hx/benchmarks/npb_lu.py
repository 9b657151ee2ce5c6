"""NPB LU (seed 001 §3.4.3): SSOR with a pipelined wavefront on a 2-D process grid (x and y
split, z whole; t2hx.grids.npb_lu_grid). Each sweep passes a line of 5 values per k-plane to
the next rank downstream, and the right-hand side exchanges the block's faces (exchange_1,
exchange_3); residual norms are MPI_Allreduce'd."""

from t2hx.benchmarks.npbtext import npb_kernel, ops, npb_class, sizes
from t2hx.benchmarks.proxyapp import K, Skeleton


def edge(inp: dict, ranks: int) -> float:
    """The cube's edge (points): the wavefront pattern sizes each rank's faces from it."""
    return float(sizes(inp, "lu")[0])


BENCHMARK = npb_kernel(
    "lu", "NPB LU", skeleton=Skeleton(0.02, 250, (("halo", 16 * K), ("allreduce", 40))),
    work=lambda i, n: ops("lu", npb_class(i, "lu")) / n, measures={"edge": edge})
