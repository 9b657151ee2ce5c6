# t2hx overlay: Netgauge 2.4.6 from SPCL's public git repository, whose tag
# 2.4.6 (commit 353ded77, "Initial import") holds the 2.4.6 release tree with
# its generated configure. The builtin recipe's tarball host (unixer.de) is not
# reachable from the t2hx CI machines and `git archive` of the tag does not
# reproduce its sha256, so the version is pinned by commit instead. Upstream's
# later MPI-3 fix (patches/netgauge) makes it compile against Open MPI 4.x.
from spack_repo.builtin.packages.netgauge.package import Netgauge as BuiltinNetgauge

from spack.package import *

PATCHES = "../../../../../../patches"


class Netgauge(BuiltinNetgauge):
    """Netgauge 2.4.6 pinned to the commit of tag 2.4.6."""

    git = "https://github.com/spcl/netgauge.git"

    version("2.4.6", commit="353ded774da6f8ce3330000e6b841b4ef82896b7")

    patch(f"{PATCHES}/netgauge/t2hx-mpi3-type-extent.patch", when="@2.4.6")
