# t2hx overlay: not in Spack's builtin repository.
# The paper ran MILC from the Trinity benchmark suite; that tarball is not
# reachable from here, so this pins the public milc_qcd repository instead
# (same su3_rhmd_hisq application). The build below was run here by hand
# (Debian 12, mpicc from Open MPI 4.1.4) and ran 2 ranks; Spack is not on CI.
from spack_repo.builtin.build_systems.makefile import MakefilePackage

from spack.package import *

PATCHES = "../../../../../../patches"


class Milc(MakefilePackage):
    """MILC lattice QCD, ks_imp_rhmc/su3_rhmd_hisq (the Trinity benchmark binary)."""

    homepage = "https://github.com/milc-qcd/milc_qcd"
    git = "https://github.com/milc-qcd/milc_qcd.git"

    version("2024-07-09", commit="1e11e121b220433c220310b79de03cb3ee6adba0")

    depends_on("c", type="build")
    depends_on("gmake", type="build")
    depends_on("mpi")

    patch(f"{PATCHES}/milc/t2hx-solver-walltime.patch", when="@2024-07-09")
    patch(f"{PATCHES}/milc/t2hx-mpi3-errhandler.patch", when="@2024-07-09")

    build_directory = "ks_imp_rhmc"
    # Make_template builds ../libraries from inside the target: -j races on it.
    parallel = False

    def edit(self, spec, prefix):
        copy("Makefile", join_path("ks_imp_rhmc", "Makefile"))

    @property
    def build_targets(self):
        return ["su3_rhmd_hisq", "MPP=true", f"CC={self.spec['mpi'].mpicc}", "OMP=true"]

    def install(self, spec, prefix):
        mkdirp(prefix.bin)
        install(join_path("ks_imp_rhmc", "su3_rhmd_hisq"), prefix.bin)
        # The rational-function coefficients of the upstream HISQ test (2+1 flavours,
        # masses .0018/.018, n_pseudo 4): su3_rhmd_hisq reads them (load_rhmc_params), and
        # a deck with those masses (t2hx writes its own) runs without a Remez run here.
        mkdirp(prefix.share.milc)
        install(join_path("ks_imp_rhmc", "test", "rationals.sample.su3_rhmc_hisq"),
                prefix.share.milc)
