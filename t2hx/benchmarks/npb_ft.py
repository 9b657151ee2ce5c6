"""NPB FT (seed 001 §3.4.3): a 3-D FFT PDE solver. With at most nz ranks (class A: 128,
the thesis' count) NPB 3.4 lays the grid out in z-slabs (ft.f90 ``layout_1D``), so every
transpose is one MPI_Alltoall of the whole complex grid over all ranks."""

from t2hx.benchmarks.npbtext import npb_kernel, ops, npb_class, sizes
from t2hx.benchmarks.proxyapp import M, Skeleton


def grid_bytes(inp: dict, ranks: int) -> float:
    """A rank's slab of the complex grid (16 B a point): what one transpose redistributes."""
    nx, ny, nz, _ = sizes(inp, "ft")
    return 16.0 * nx * ny * nz / ranks


BENCHMARK = npb_kernel(
    "ft", "NPB FT", skeleton=Skeleton(0.5, 7, (("alltoall_total", 128 * M),)),
    work=lambda i, n: ops("ft", npb_class(i, "ft")) / n, measures={"data": grid_bytes})
