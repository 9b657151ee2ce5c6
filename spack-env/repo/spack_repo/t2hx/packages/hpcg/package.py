# t2hx overlay: HPCG 3.1 from the project's public git repository (tag
# HPCG-release-3-1-0). The builtin recipe's tarball host (hpcg-benchmark.org)
# is not reachable from the t2hx CI machines, and no `git archive` of the tag
# reproduces its sha256, so the version is pinned by commit instead.
from spack_repo.builtin.packages.hpcg.package import Hpcg as BuiltinHpcg

from spack.package import *


class Hpcg(BuiltinHpcg):
    """HPCG 3.1 pinned to the commit of tag HPCG-release-3-1-0."""

    version("3.1", commit="e3fe052b572b5e512a826769834582fc1939389c")
