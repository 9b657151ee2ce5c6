"""mpiGraph: sender x receiver bandwidth matrix (seed 000 Fig 1; average Send [MiB/s])."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))   # lib/: checks/lib/__init__.py

import reframe as rfm                                              # noqa: E402

from lib.base import T2hxCheck, study_parameters                  # noqa: E402


@rfm.simple_test
class MpiGraph(T2hxCheck):
    benchmark = "mpigraph"
    combo, num_nodes, repetition = study_parameters("mpigraph")

    @staticmethod
    def command(launch):
        inp = launch.input
        return "mpiGraph", [str(inp["size"]), str(inp["iters"]), str(inp["window"])]
