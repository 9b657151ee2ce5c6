# t2hx overlay: not in Spack's builtin repository (RIKEN Fiber miniapp).
# Build steps below were run here by hand (Debian 12: mpif90 from Open MPI 4.1.4,
# -llapack -lblas) and the c6h6 test ran on 2 ranks; Spack itself is not on CI.
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *

PATCHES = "../../../../../../patches"


class NtchemMini(MakefilePackage):
    """NTChem-MINI: RI-MP2 energy (taxol input), MPI + OpenMP, Fortran."""

    homepage = "https://github.com/fiber-miniapp/ntchem-mini"
    git = "https://github.com/fiber-miniapp/ntchem-mini.git"

    license("BSD-2-Clause")

    version("1.2", commit="bb8220ccee3693e7e5b0b234fb3ca9c407166125")

    depends_on("fortran", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")
    depends_on("lapack")
    depends_on("blas")

    patch(f"{PATCHES}/ntchem-mini/t2hx-solver-walltime.patch", when="@1.2")
    patch(f"{PATCHES}/ntchem-mini/t2hx-gfortran-compile-fix.patch", when="@1.2")

    # The top-level GNUmakefile does not include config/makeconfig (its copy
    # step runs with empty $(CP)); src/ builds and moves rimp2.exe to bin/.
    build_directory = "src"
    # src/mp2's `all: program mvbin` moves rimp2.exe while it is still being linked
    # under make -j, and the top makefile's `cd mp2; $(MAKE); cd ..` hides the error.
    parallel = False
    sanity_check_is_file = [join_path("bin", "rimp2.exe")]

    def edit(self, spec, prefix):
        # config_mine only wraps this call with hard-coded ATLAS paths.
        configure = Executable("./config/configure")
        configure(f"--lapack={spec['lapack'].libs.ld_flags}",
                  f"--blas={spec['blas'].libs.ld_flags}",
                  "linux64_mpif90_omp_gfortran")
        # the template calls mpif77 and `mpif90 -fc=gfortran` (MPICH-only flag)
        mpifc = spec["mpi"].mpifc
        makeconfig = join_path("config", "makeconfig")
        for var in ("F77C", "F90C", "LD"):
            filter_file(rf"^\s*{var} = .*$", f"{var} = {mpifc}", makeconfig)
        mkdirp("bin")

    def install(self, spec, prefix):
        install_tree("bin", prefix.bin)
        install_tree("tests", prefix.share.ntchem.tests)
