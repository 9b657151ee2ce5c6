"""The x500 benchmarks of seed 000 §4.3: HPL [Gflop/s], HPCG [GFLOP/s], Graph500 [TEPS].

On the ``local`` system they run the Spack view's binaries with the study's small inputs.
Wherever the binaries' view (the `local` system's, or a real partition's ``spack_view``) has
no ``xhpl``, HPL runs through Debian's HPCC (package hpcc, /usr/bin/hpcc), so that a machine
or a test cluster without the Spack build still measures one benchmark for real: HPCC reads
``hpccinf.txt`` in the working directory and writes ``hpccoutf.txt``."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))   # lib/: checks/lib/__init__.py

import reframe as rfm                                              # noqa: E402
from reframe.core.builtins import run_after                       # noqa: E402

from lib.base import Launch, T2hxCheck, local_reason, study_parameters  # noqa: E402
from t2hx.benchmarks.graph500 import graph500_scale                # noqa: E402
from t2hx.benchmarks.hpl import HPCC, hpcc_input, hpl_n           # noqa: E402
from t2hx.grids import hpl_grid                                    # noqa: E402
from t2hx.paths import spack_view                                  # noqa: E402

# HPL.dat: one problem, one NB, one P x Q grid; the remaining lines are HPL's usual choices
# (right-looking, Crout recursive panel factorisation, 1-ring-modified broadcast, lookahead 1).
HPL_DAT = """HPL input written by t2hx (checks/x500.py)
case {case}
HPL.out      output file name (if any)
6            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}          Ns
1            # of NBs
{nb}         NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}          Ps
{q}          Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
"""


def hpl_values(launch: Launch) -> dict:
    """N, NB and P x Q for all of the job's ranks (nodes x ranks_per_node)."""
    inp, ranks = launch.input, launch.ranks
    p, q = hpl_grid(ranks)
    return {"n": hpl_n(inp, ranks), "nb": int(inp.get("nb", 192)), "p": p, "q": q,
            "case": launch.name}


def uses_hpcc(view: Path | None) -> bool:
    """HPL runs as Debian's HPCC: the binaries' view has no xhpl, and hpcc is installed."""
    return view is not None and not (Path(view) / "bin" / "xhpl").is_file() and HPCC.is_file()


@rfm.simple_test
class HPL(T2hxCheck):
    benchmark = "hpl"
    combo, num_nodes, repetition = study_parameters("hpl")

    @staticmethod
    def command(launch):
        return (str(HPCC), []) if uses_hpcc(launch.view) else ("xhpl", [])

    @staticmethod
    def input_files(launch):
        values = hpl_values(launch)
        if uses_hpcc(launch.view):
            return {"hpccinf.txt": hpcc_input(values["n"], values["nb"], values["p"],
                                              values["q"])}
        return {"HPL.dat": HPL_DAT.format(**values)}

    def local_reason(self):
        return None if uses_hpcc(spack_view()) else local_reason(self.entry)

    @run_after("setup")
    def read_hpcc_output(self):
        """HPCC writes its own output file, with its own completion markers."""
        if self.mode != "sim" and uses_hpcc(self.launch_spec().view):
            self.output_file = "hpccoutf.txt"
            self.markers = [r"End of HPL section\.", r"End of HPC Challenge tests\."]
            if self.mode == "real":
                announce_hpcc(self.extras["spack_view"])


_WARNED: set[str] = set()


def announce_hpcc(view: str) -> None:
    """Say once per view that HPL runs as Debian's HPCC (not the Spack build's xhpl)."""
    from reframe.core.logging import getlogger

    if view not in _WARNED:
        _WARNED.add(view)
        getlogger().warning(f"HPL: {view}/bin has no xhpl: HPL runs as Debian's {HPCC}")


@rfm.simple_test
class HPCG(T2hxCheck):
    benchmark = "hpcg"
    combo, num_nodes, repetition = study_parameters("hpcg")

    @staticmethod
    def command(launch):
        inp = launch.input
        return "xhpcg", [str(inp["nx"]), str(inp["ny"]), str(inp["nz"]), str(inp["seconds"])]


@rfm.simple_test
class Graph500(T2hxCheck):
    benchmark = "graph500"
    combo, num_nodes, repetition = study_parameters("graph500")

    @staticmethod
    def command(launch):
        inp = launch.input
        return "graph500_reference_bfs", [str(graph500_scale(inp, launch.ranks)),
                                          str(inp["edgefactor"])]
