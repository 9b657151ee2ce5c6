# t2hx overlay: our OpenSM routing-engine plugins (PARX, SAR), libparx.so.
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class T2hxParx(MakefilePackage):
    """PARX and SAR routing engines for OpenSM, loaded by the stock opensm as an
    event plugin (event_plugin_name parx)."""

    homepage = "https://github.com/t2hx/t2hx"

    # No download on purpose: the source is this repository's parx/ directory,
    # attached by the `develop:` entry in spack-env/spack.yaml. The plugin
    # evolves with the study code, so the checkout in use is what gets built,
    # with no release tarball that could drift from it.
    version("0.1.0")

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("opensm@3.3.23:")

    def setup_build_environment(self, env):
        # Objects and libparx.so go to a directory of this spec (parx/Makefile's
        # BUILD ?= .): with `develop:` Spack builds in the checkout's parx/, whose
        # own libparx.so (plain `make`, Debian OpenSM) must neither be reused nor
        # overwritten. parx/build/ is ignored by git.
        env.set("BUILD", join_path("build", f"spack-{self.spec.dag_hash(7)}"))

    @property
    def build_targets(self):
        osm = self.spec["opensm"].prefix
        return [
            f"OPENSM_INCLUDE={osm.include.infiniband}",
            f"LDFLAGS=-L{osm.lib} -Wl,-rpath,{osm.lib}",
        ]

    @property
    def install_targets(self):
        return ["install", f"PREFIX={self.prefix}"] + self.build_targets
