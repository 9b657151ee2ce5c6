# t2hx overlay: not in Spack's builtin repository.
# The paper ran MILC from the Trinity benchmark suite; that tarball is not
# reachable from here, so this pins the public milc_qcd repository instead
# (same su3_rhmd_hisq application). No t2hx patch yet (see README).
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *


class Milc(MakefilePackage):
    """MILC lattice QCD, ks_imp_rhmc/su3_rhmd_hisq (the Trinity benchmark binary)."""

    homepage = "https://github.com/milc-qcd/milc_qcd"
    git = "https://github.com/milc-qcd/milc_qcd.git"

    version("2024-07-09", commit="1e11e121b220433c220310b79de03cb3ee6adba0")

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")

    build_directory = "ks_imp_rhmc"

    def edit(self, spec, prefix):
        copy("Makefile", join_path("ks_imp_rhmc", "Makefile"))

    @property
    def build_targets(self):
        return ["su3_rhmd_hisq", "MPP=true", f"CC={self.spec['mpi'].mpicc}", "OMP=true"]

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        install(join_path("ks_imp_rhmc", "su3_rhmd_hisq"), prefix.bin)
