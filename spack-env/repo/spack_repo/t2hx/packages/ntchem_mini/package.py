# t2hx overlay: not in Spack's builtin repository (RIKEN Fiber miniapp).
# Build steps not verified here (no Spack on CI). No t2hx patch yet: its walltime instrumentation is not written (see README).
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class NtchemMini(MakefilePackage):
    """NTChem-MINI: RI-MP2 energy (taxol input), MPI + OpenMP, Fortran."""

    homepage = "https://github.com/fiber-miniapp/ntchem-mini"
    git = "https://github.com/fiber-miniapp/ntchem-mini.git"

    license("BSD-2-Clause")

    version("1.2", commit="bb8220ccee3693e7e5b0b234fb3ca9c407166125")

    depends_on("c", type="build")
    depends_on("fortran", type="build")
    depends_on("gmake", type="build")
    depends_on("python", type="build")
    depends_on("mpi")
    depends_on("lapack")
    depends_on("blas")

    def edit(self, spec, prefix):
        # ./config_mine writes config/makeconfig for a platform template.
        configure = Executable("./config_mine")
        configure(f"--with-lapack={(spec['lapack'].libs + spec['blas'].libs).ld_flags}",
                  "--mpi", "--openmp", "--platform=linux64_mpif90_omp_gfortran")

    def install(self, spec, prefix):
        install_tree("bin", prefix.bin)
        install_tree("tests", prefix.share.ntchem.tests)
