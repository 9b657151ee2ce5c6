# t2hx overlay: not in Spack's builtin repository (RIKEN Fiber miniapp).
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *

PATCHES = "../../../../../../patches"


class MvmcMini(MakefilePackage):
    """mVMC-MINI: many-variable variational Monte Carlo, MPI + OpenMP."""

    homepage = "https://github.com/fiber-miniapp/mVMC-mini"
    git = "https://github.com/fiber-miniapp/mVMC-mini.git"

    license("GPL-3.0-or-later")

    version("1.0", commit="7c58766b180ccb1035e4c220208b64ace3c49cf2")

    depends_on("c", type="build")
    depends_on("fortran", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")
    depends_on("scalapack")
    depends_on("lapack")
    depends_on("blas")

    # Applied in this order; they touch different files.
    patch(f"{PATCHES}/mvmc-mini/t2hx-no-mpi-in-omp.patch", when="@1.0")
    patch(f"{PATCHES}/mvmc-mini/t2hx-solver-walltime.patch", when="@1.0")

    build_directory = "src"

    def edit(self, spec, prefix):
        # Upstream ships Intel/MKL and K-computer makefiles only: reuse the
        # Intel one with GNU flags and Spack's linear-algebra libraries.
        mk = FileFilter(join_path("src", "Makefile_intel"))
        libs = spec["scalapack"].libs + spec["lapack"].libs + spec["blas"].libs
        mk.filter(r"^FC = .*", f"FC = {spec['mpi'].mpifc}")
        mk.filter(r"^CC = .*", f"CC = {spec['mpi'].mpicc}")
        mk.filter(r"^LIB = .*", f"LIB = {libs.ld_flags}")
        mk.filter(r"^CFLAGS = .*", f"CFLAGS = -O3 {self.compiler.openmp_flag}")
        mk.filter(r"^REPORT = .*", "REPORT =")
        # Its two bundled libraries hard-code the Intel compilers and Intel-only flags.
        pfapack = FileFilter(join_path("src", "pfapack", "Makefile_intel"))
        pfapack.filter(r"^FORT = .*", f"FORT = {spack_fc}")
        pfapack.filter(r"^FFLAGS = .*", "FFLAGS = -O3 -fimplicit-none")
        sfmt = FileFilter(join_path("src", "sfmt", "Makefile_intel"))
        sfmt.filter(r"^CC = .*", f"CC = {spack_cc}")
        sfmt.filter(r"^CFLAGS = .*", "CFLAGS = -O3 -fno-strict-aliasing -msse2")

    build_targets = ["intel"]

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        install(join_path("src", "vmc.out"), prefix.bin)
        install_tree("job_middle", prefix.share.mvmc.job_middle)
