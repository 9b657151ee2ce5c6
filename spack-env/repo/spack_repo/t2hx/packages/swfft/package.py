# t2hx overlay: builtin SWFFT plus the solver walltime line (patches/swfft).
# Its builtin source (ANL's GitLab) is not reachable from the t2hx CI; the patch
# was written and built against the same tree from a public GitHub fork whose
# `git archive` reproduces the builtin sha256 (see the patch header).
from spack_repo.builtin.packages.swfft.package import Swfft as BuiltinSwfft

from spack.package import *

PATCHES = "../../../../../../patches"


class Swfft(BuiltinSwfft):
    """SWFFT printing 'T2HX solver walltime: <s> s'."""

    patch(f"{PATCHES}/swfft/t2hx-solver-walltime.patch", when="@1.0")
