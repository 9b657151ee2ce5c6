"""Flow-level model of a routed InfiniBand fabric (DESIGN §7): static paths from real OpenSM
tables, max-min fair rates, LogGP-style latencies, benchmark workloads, upstream-format output.
``workloads.WORKLOADS`` is keyed by the ``workload`` field of the benchmark registry
(t2hx/benchmarks.py); ``apps.SKELETONS`` by the registry key.
"""
