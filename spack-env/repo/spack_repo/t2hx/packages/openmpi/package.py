# t2hx overlay: builtin Open MPI plus the PARX LID-selection patch (seed 000
# appendix, "Modifications to OpenMPI"). Everything else (versions, sha256,
# variants such as fabrics=verbs for the openib BTL) comes from builtin.
from spack_repo.builtin.packages.openmpi.package import Openmpi as BuiltinOpenmpi

from spack.package import *

# patches/ at the top of the t2hx checkout, relative to this directory
# (Spack resolves relative patch paths against the recipe's directory).
PATCHES = "../../../../../../patches"


class Openmpi(BuiltinOpenmpi):
    """Open MPI 4.1 (ob1) or 1.10.7 (bfo) with the t2hx PARX patch: the PML picks the
    openib module whose destination LID follows Table 1 (seed 000) by message size and
    HyperX quadrant."""

    # Written and verified against the 4.1.4 release (= Debian's orig tarball);
    # the openib BTL it touches is gone in 5.0.
    patch(f"{PATCHES}/openmpi/4.1-parx-lid-selection.patch", when="@4.1.4")
    # Seed 000's own MPI (§4.4.5): 1.10.7, whose bfo PML the paper changed for PARX; the
    # release tarball comes from builtin's version("1.10.7", sha256=...) and url_for_version.
    # Written and verified against git tag v1.10.7 (the release tarball cannot be fetched
    # here; log/mpi-stacks/README.md); `spack install openmpi@=1.10.7 fabrics=verbs`.
    patch(f"{PATCHES}/openmpi/1.10.7-bfo-parx-lid-selection.patch", when="@1.10.7")
    conflicts("@5:", msg="t2hx needs the openib BTL, removed in Open MPI 5.0")

    @run_after("install")
    def check_t2hx_components(self):
        """PARX profiling needs pml/monitoring and path selection needs openib;
        1.10.7 predates pml/monitoring, and its PARX path is the bfo PML."""
        ompi_info = Executable(join_path(self.prefix.bin, "ompi_info"))
        out = ompi_info(output=str, error=str)
        pml = "bfo" if self.spec.satisfies("@1.10.7") else "monitoring"
        for component in (f"MCA pml: {pml}", "MCA btl: openib"):
            if component not in out:
                raise InstallError(
                    f"ompi_info lacks '{component}': build with fabrics=verbs (openib) "
                    "and shared libraries (monitoring)"
                )
