"""The NAS Parallel Benchmarks 3.4 (MPI) of seed 001 (the shortcut topologies thesis,
§3.4.3, §4.5.3, §5): FT, IS, MG and LU, with EP. Metric: the run's time [s] from NPB's own
report (t2hx/post/parsers/npb.py); the problem class from conf/studies/<study>.yaml. Each
class is its own binary (``<kernel>.<class>.x``, the Spack ``npb`` recipe's names), which
reads no input file. One check class per kernel (``NPBFT`` ... ``NPBEP``), all alike."""

import types

import reframe as rfm

from t2hx.benchmarks.npbtext import npb_class
from t2hx.checks.base import T2hxCheck, study_parameters

KERNELS = ("ft", "is", "mg", "lu", "ep")


def npb_check(kernel: str) -> type:
    """The check of one kernel: its registry key, the study's cases of it, its binary."""
    key = f"npb-{kernel}"

    def command(launch):
        return f"{kernel}.{npb_class(launch.input, kernel)}.x", []

    def body(ns):
        ns["benchmark"] = key
        ns["combo"], ns["num_nodes"], ns["repetition"] = study_parameters(key)
        ns["command"] = staticmethod(command)
        ns["__module__"] = __name__

    return rfm.simple_test(types.new_class(f"NPB{kernel.upper()}", (T2hxCheck,),
                                           exec_body=body))


for _kernel in KERNELS:
    globals()[f"NPB{_kernel.upper()}"] = npb_check(_kernel)
