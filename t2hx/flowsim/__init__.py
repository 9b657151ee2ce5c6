"""Flow model of a routed InfiniBand fabric (docs/modelling.md#flow-model): paths from real OpenSM
tables, max-min fair rates, LogGP-style latencies, benchmark workloads, upstream-format output.
``workloads.WORKLOADS`` is keyed by the ``workload`` field of the benchmark registry
(t2hx/benchmarks.py); ``apps.SKELETONS`` by the registry key.
"""
