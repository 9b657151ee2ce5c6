# t2hx overlay: not in Spack's builtin repository.
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *

PATCHES = "../../../../../../patches"


class BaiduAllreduce(MakefilePackage):
    """Baidu's ring allreduce (DeepBench), CPU-only: our patch removes CUDA."""

    homepage = "https://github.com/baidu-research/baidu-allreduce"
    git = "https://github.com/baidu-research/baidu-allreduce.git"

    license("Apache-2.0")

    version("2017-02-24", commit="73c7b7f8d34f7163a3a46aa0fe48e2a418d25fe9")

    depends_on("cxx", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")

    patch(f"{PATCHES}/baidu-allreduce/t2hx-cpu-only.patch")

    @property
    def build_targets(self):
        mpi = self.spec["mpi"]
        return [f"MPI_ROOT={mpi.prefix}", f"CC={mpi.mpicxx}"]

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        install("allreduce-test", prefix.bin)
