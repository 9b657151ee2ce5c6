# t2hx overlay: Spack's builtin repository has rdma-core but no OpenSM.
from spack_repo.builtin.build_systems.autotools import AutotoolsPackage

from spack.package import *


class Opensm(AutotoolsPackage):
    """OpenSM, the InfiniBand subnet manager; t2hx routes with its engines
    (ftree, sssp, dfsssp) and loads the PARX/SAR engines as event plugins."""

    homepage = "https://github.com/linux-rdma/opensm"
    url = "https://github.com/linux-rdma/opensm/archive/refs/tags/3.3.23.tar.gz"
    git = "https://github.com/linux-rdma/opensm.git"

    license("GPL-2.0-only OR BSD-2-Clause")

    # sha256 of the GitHub tag archive; byte-identical to Debian's
    # opensm_3.3.23.orig.tar.gz (= git archive of tag 3.3.23, commit
    # d35a20f3be113e03316ca6c3afb7d19975772d8d, through gzip -n).
    version("3.3.23", sha256="50773bfe7b66d3c70f4e572381904029023d3291f09ec4a9108219abd7430d3c")

    depends_on("c", type="build")
    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    depends_on("m4", type="build")
    depends_on("flex", type="build")
    depends_on("bison", type="build")
    depends_on("rdma-core")  # libibumad

    # The tag archive has no generated configure script.
    force_autoreconf = True

    def autoreconf(self, spec, prefix):
        Executable("./autogen.sh")()

    def configure_args(self):
        return [f"--with-umad-prefix={self.spec['rdma-core'].prefix}"]
