"""mpiGraph: sender x receiver bandwidth matrix (seed 000 Fig 1; average Send [MiB/s])."""



import reframe as rfm

from t2hx.checks.base import T2hxCheck, study_parameters


@rfm.simple_test
class MpiGraph(T2hxCheck):
    benchmark = "mpigraph"
    combo, num_nodes, repetition = study_parameters("mpigraph")

    @staticmethod
    def command(launch):
        inp = launch.input
        return "mpiGraph", [str(inp["size"]), str(inp["iters"]), str(inp["window"])]
