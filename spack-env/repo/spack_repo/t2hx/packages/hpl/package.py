# t2hx overlay: HPL 2.3 from ICL's public git repository. The builtin recipe
# downloads the netlib tarball (not reachable from the t2hx CI machines); the
# same release is the git commit HPL's own hg tag `hpl-2.3` names (changeset
# 83975599d7a1 = git 16e7e582). The builtin recipe already runs autoreconf for
# 2.3, so the git tree (no generated configure) builds by the same steps.
from spack_repo.builtin.packages.hpl.package import Hpl as BuiltinHpl

from spack.package import *


class Hpl(BuiltinHpl):
    """HPL 2.3 pinned to the git commit of the hpl-2.3 release tag."""

    git = "https://github.com/icl-utk-edu/hpl.git"

    version("2.3", commit="16e7e5820a84af88f461239f276aa1d8072644d5")

    def configure_args(self):
        # The release's AX_PROG_CC_MPI accepts the plain compiler when MPI_Init
        # links, which finds no mpi.h for an MPI whose headers live outside the
        # compiler's default paths (Debian's Open MPI); use the MPI wrapper.
        return super().configure_args() + [f"CC={self.spec['mpi'].mpicc}"]
