"""The x500 benchmarks of seed 000 §4.3: HPL [Gflop/s], HPCG [GFLOP/s], Graph500 [TEPS].

On the ``local`` system they run the Spack view's binaries with the study's small inputs.
Wherever the binaries' view (the `local` system's, or a real partition's ``spack_view``) has
no ``xhpl``, HPL runs through Debian's HPCC (package hpcc, /usr/bin/hpcc), so that a machine
or a test cluster without the Spack build still measures one benchmark for real: HPCC reads
``hpccinf.txt`` in the working directory and writes ``hpccoutf.txt``."""

from pathlib import Path

import reframe as rfm
from reframe.core.builtins import run_after

from t2hx.benchmarks.graph500 import graph500_scale
from t2hx.benchmarks.hpl import HPCC, HPL_DAT, hpcc_input, hpl_n
from t2hx.checks.base import Launch, T2hxCheck, local_reason, study_parameters
from t2hx.grids import hpl_grid
from t2hx.paths import spack_view


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
        # Flags, not positional words: HPCG 3.1's HPCG_Init (src/init.cpp) drops a positional
        # argument below 10, so "xhpcg 16 16 16 1" runs the QuickPath (one CG set), not 1 s.
        return "xhpcg", [f"--nx={inp['nx']}", f"--ny={inp['ny']}", f"--nz={inp['nz']}",
                         f"--rt={inp['seconds']}"]


@rfm.simple_test
class Graph500(T2hxCheck):
    benchmark = "graph500"
    combo, num_nodes, repetition = study_parameters("graph500")

    @staticmethod
    def command(launch):
        inp = launch.input
        return "graph500_reference_bfs", [str(graph500_scale(inp, launch.ranks)),
                                          str(inp["edgefactor"])]
