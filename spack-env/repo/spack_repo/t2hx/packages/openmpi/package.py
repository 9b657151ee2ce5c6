# t2hx overlay: builtin Open MPI plus the PARX LID-selection patch (seed 000
# appendix, "Modifications to OpenMPI"). Everything else (versions, sha256,
# variants such as fabrics=verbs for the openib BTL) comes from builtin.
from spack_repo.builtin.packages.openmpi.package import Openmpi as BuiltinOpenmpi

from spack.package import *

# patches/ at the top of the t2hx checkout, relative to this directory
# (Spack resolves relative patch paths against the recipe's directory).
PATCHES = "../../../../../../patches"


class Openmpi(BuiltinOpenmpi):
    """Open MPI 4.1 with the t2hx PARX patch: the openib BTL picks the
    destination LID by message size and HyperX quadrant (Table 1, seed 000)."""

    # Written and verified against the 4.1.4 release (= Debian's orig tarball);
    # the openib BTL it touches is gone in 5.0.
    patch(f"{PATCHES}/openmpi/4.1-parx-lid-selection.patch", when="@4.1.4")
    conflicts("@5:", msg="t2hx needs the openib BTL, removed in Open MPI 5.0")

    @run_after("install")
    def check_t2hx_components(self):
        """PARX profiling needs pml/monitoring and path selection needs openib."""
        ompi_info = Executable(join_path(self.prefix.bin, "ompi_info"))
        out = ompi_info(output=str, error=str)
        for component in ("MCA pml: monitoring", "MCA btl: openib"):
            if component not in out:
                raise InstallError(
                    f"ompi_info lacks '{component}': build with fabrics=verbs (openib) "
                    "and shared libraries (monitoring)"
                )
