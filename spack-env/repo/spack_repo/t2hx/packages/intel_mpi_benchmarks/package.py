# t2hx overlay: builtin IMB plus the SleepyAllreduce benchmark (seed 000
# appendix, benchmark change 3).
from spack_repo.builtin.packages.intel_mpi_benchmarks.package import (
    IntelMpiBenchmarks as BuiltinIntelMpiBenchmarks,
)

from spack.package import *

PATCHES = "../../../../../../patches"


class IntelMpiBenchmarks(BuiltinIntelMpiBenchmarks):
    """Intel MPI Benchmarks with IMB-MPI1 SleepyAllreduce (Allreduce alternating
    with usleep(100000))."""

    patch(f"{PATCHES}/intel-mpi-benchmarks/t2hx-sleepy-allreduce.patch", when="@2021.7")
