# t2hx overlay: Qbox was removed from Spack's builtin repository; qb@ll
# (LLNL's Qbox variant, the CORAL benchmark) was never there.
# The build below (autoreconf, configure with these arguments, make) was run
# here by hand on Debian 12 (Open MPI 4.1.4, FFTW 3.3.10, ScaLAPACK 2.2.1) and a
# small gold input ran on 2 ranks; Spack itself is not on CI.
from spack_repo.builtin.build_systems.autotools import AutotoolsPackage

from spack.package import *

PATCHES = "../../../../../../patches"


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

    patch(f"{PATCHES}/qball/t2hx-cxx17-byte-compile-fix.patch", when="@2020-05-14")
    patch(f"{PATCHES}/qball/t2hx-solver-walltime.patch", when="@2020-05-14")

    force_autoreconf = True

    def configure_args(self):
        spec = self.spec
        # configure.ac has no Xerces-C option (the XML parser is the bundled
        # rapidxml), so xerces-c is no dependency.
        return [
            f"CC={spec['mpi'].mpicc}",
            f"CXX={spec['mpi'].mpicxx}",
            f"FC={spec['mpi'].mpifc}",
            # dftd3's pars.F90 puts the install prefix (SHARE_DIR) into a source
            # line; Spack's prefixes push it past gfortran's 132 columns.
            "FCFLAGS=-g -O2 -ffree-line-length-none",
            f"--with-fftw3-prefix={spec['fftw-api'].prefix}",
            f"LIBS={(spec['scalapack'].libs + spec['lapack'].libs + spec['blas'].libs).ld_flags}",
        ]
