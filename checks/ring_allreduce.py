"""Baidu DeepBench ring allreduce, CPU-only (seed 000 §4.1; t_avg [s] per size, 0–2 GiB)."""

import sys
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))   # lib/: checks/lib/__init__.py

import reframe as rfm                                              # noqa: E402

from lib.base import T2hxCheck, study_parameters                  # noqa: E402


@rfm.simple_test
class RingAllreduce(T2hxCheck):
    benchmark = "ring-allreduce"
    combo, num_nodes, repetition = study_parameters("ring-allreduce")

    @staticmethod
    def command(launch):
        return "allreduce-test", ["cpu"]
