"""NPB EP (seed 001 builds it with the others): pairs of Gaussian deviates, independent per
rank; the only communication is the final MPI_Allreduce of the sums and counts (ep.f90)."""

from t2hx.benchmarks.npbtext import npb_kernel, ops, npb_class
from t2hx.benchmarks.proxyapp import Skeleton

BENCHMARK = npb_kernel(
    "ep", "NPB EP", skeleton=Skeleton(5.0, 1, (("allreduce", 80),)),
    work=lambda i, n: ops("ep", npb_class(i, "ep")) / n, measures={})
