# t2hx overlay: Qbox was removed from Spack's builtin repository; qb@ll
# (LLNL's Qbox variant, the CORAL benchmark) was never there.
# Build steps not verified here (no Spack on CI). No t2hx patch yet: compile fix and walltime line are not written (see README).
from spack_repo.builtin.build_systems.autotools import AutotoolsPackage

from spack.package import *


class Qball(AutotoolsPackage):
    """qb@ll: first-principles molecular dynamics (DFT), the CORAL 'gold' benchmark."""

    homepage = "https://github.com/LLNL/qball"
    git = "https://github.com/LLNL/qball.git"

    license("GPL-3.0-or-later")

    version("2020-05-14", commit="5da5b79e5d92aa6dd007fd9692739acf4d821ec6")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build")
    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    depends_on("mpi")
    depends_on("fftw-api@3")
    depends_on("scalapack")
    depends_on("lapack")
    depends_on("blas")
    depends_on("xerces-c")

    force_autoreconf = True

    def configure_args(self):
        spec = self.spec
        return [
            f"CC={spec['mpi'].mpicc}",
            f"CXX={spec['mpi'].mpicxx}",
            f"FC={spec['mpi'].mpifc}",
            f"--with-fftw3-prefix={spec['fftw-api'].prefix}",
            f"--with-xerces-prefix={spec['xerces-c'].prefix}",
            f"LIBS={(spec['scalapack'].libs + spec['lapack'].libs + spec['blas'].libs).ld_flags}",
        ]
