"""Netgauge effective bisection bandwidth (seed 000 §4.1: 1,000 random bisections, 1 MiB)."""



import reframe as rfm

from t2hx.checks.base import T2hxCheck, study_parameters


@rfm.simple_test
class NetgaugeEBB(T2hxCheck):
    benchmark = "ebb"
    combo, num_nodes, repetition = study_parameters("ebb")

    @staticmethod
    def command(launch):
        inp = launch.input
        # Options after `-x ebb` belong to the eBB pattern (docs/formats.md#benchmark-output-formats).
        return "netgauge", ["-s", str(inp["size"]), "-m", "mpi", "-x", "ebb",
                            "-r", str(inp["rounds"])]
