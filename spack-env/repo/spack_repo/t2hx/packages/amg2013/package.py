# t2hx overlay: builtin AMG plus the solver walltime line (patches/amg2013).
from spack_repo.builtin.packages.amg2013.package import Amg2013 as BuiltinAmg2013

from spack.package import *

PATCHES = "../../../../../../patches"


class Amg2013(BuiltinAmg2013):
    """AMG printing 'T2HX solver walltime: <s> s'."""

    patch(f"{PATCHES}/amg2013/t2hx-solver-walltime.patch", when="@1.2")
