# t2hx overlay: builtin mpiGraph only tracks the main branch; pin the commit
# our fixtures were measured with (prints "START mpiGraph v1.5").
from spack_repo.builtin.packages.mpigraph.package import Mpigraph as BuiltinMpigraph

from spack.package import *


class Mpigraph(BuiltinMpigraph):
    """mpiGraph pinned to commit 5f6cbd98 (v1.5)."""

    version("1.5", commit="5f6cbd9883f0204cc65ee5205f35518eab704ba7")
