"""Baidu DeepBench ring allreduce, CPU-only (seed 000 §4.1; t_avg [s] per size, 0–2 GiB)."""



import reframe as rfm

from t2hx.checks.base import T2hxCheck, study_parameters


@rfm.simple_test
class RingAllreduce(T2hxCheck):
    benchmark = "ring-allreduce"
    combo, num_nodes, repetition = study_parameters("ring-allreduce")

    @staticmethod
    def command(launch):
        return "allreduce-test", ["cpu"]
