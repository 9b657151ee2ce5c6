# t2hx overlay: not in Spack's builtin repository (RIKEN Fiber miniapp).
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *

PATCHES = "../../../../../../patches"


class FfvcMini(MakefilePackage):
    """FFVC-MINI: 3D unsteady thermal flow (cavity flow PMT run), MPI + OpenMP."""

    homepage = "https://github.com/fiber-miniapp/ffvc-mini"
    git = "https://github.com/fiber-miniapp/ffvc-mini.git"

    license("BSD-2-Clause")

    version("1.0.1", commit="890a3f9bb3a5cf358504063a1751383b7d46f86d")

    depends_on("cxx", type="build")
    depends_on("fortran", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")

    patch(f"{PATCHES}/ffvc-mini/t2hx-solver-walltime.patch", when="@1.0.1")
    patch(f"{PATCHES}/ffvc-mini/t2hx-gcc11-compile-fix.patch", when="@1.0.1")

    build_directory = "src"

    def edit(self, spec, prefix):
        mpi = spec["mpi"]
        with open(join_path("src", "make_setting.spack"), "w") as out:
            out.write(
                f"CXX = {mpi.mpicxx}\n"
                # gnu++98: src/FB/mydebug.h defines a `message` macro that
                # breaks libstdc++'s <system_error> (pulled in from C++11 on);
                # the BOZ/mismatch flags are needed by gfortran >= 10.
                f"CXXFLAGS = -std=gnu++98 -O3 {self.compiler.openmp_flag}"
                " -DMPICH_IGNORE_CXX_SEEK -DPROF_MAPROF\n"
                f"F90 = {mpi.mpifc}\n"
                "F90FLAGS = -fallow-invalid-boz -fallow-argument-mismatch"
                f" -O3 {self.compiler.openmp_flag} -cpp -D_STATIC\n"
                "LDFLAGS =\n"
            )

    # FFV/Makefile appends its static Fortran libraries after LIBS, so the
    # upstream LIBS = -lgfortran comes too early for GNU ld: give the whole
    # link line (command-line variables override the Makefiles' +=).
    build_targets = [
        "MAKE_SETTING=make_setting.spack",
        "LIBS=-lFB -lFFVcore -lcpmlib -lmaprof -lgfortran",
    ]

    def install(self, spec, prefix):
        install_tree("bin", prefix.bin)
