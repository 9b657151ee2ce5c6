# t2hx overlay: builtin miniFE plus the solver walltime line (patches/minife).
from spack_repo.builtin.packages.minife.package import Minife as BuiltinMinife

from spack.package import *

PATCHES = "../../../../../../patches"


class Minife(BuiltinMinife):
    """miniFE (reference build) printing 'T2HX solver walltime: <s> s'."""

    patch(f"{PATCHES}/minife/t2hx-solver-walltime.patch", when="@2.1.0 build=ref")
