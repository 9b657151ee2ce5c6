# t2hx overlay: builtin CoMD plus the solver walltime line (patches/comd).
from spack_repo.builtin.packages.comd.package import Comd as BuiltinComd

from spack.package import *

PATCHES = "../../../../../../patches"


class Comd(BuiltinComd):
    """CoMD printing 'T2HX solver walltime: <s> s'."""

    patch(f"{PATCHES}/comd/t2hx-solver-walltime.patch", when="@1.1")
