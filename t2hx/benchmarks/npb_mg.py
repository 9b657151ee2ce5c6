"""NPB MG (seed 001 §3.4.3): V-cycle multigrid on a periodic cube. Every level exchanges
the faces of a rank's block with its two neighbours along each axis its process grid
splits (mg.f90 ``comm3``; grid: t2hx.grids.npb_mg_grid), and norms are MPI_Allreduce'd."""

from t2hx.benchmarks.npbtext import npb_kernel, ops, npb_class, sizes
from t2hx.benchmarks.proxyapp import K, Skeleton


def edge(inp: dict, ranks: int) -> float:
    """The finest grid's edge (points): the halo pattern sizes each rank's faces from it."""
    return float(sizes(inp, "mg")[0])


BENCHMARK = npb_kernel(
    "mg", "NPB MG", skeleton=Skeleton(0.3, 4, (("halo", 256 * K), ("allreduce", 16))),
    work=lambda i, n: ops("mg", npb_class(i, "mg")) / n, measures={"edge": edge})
