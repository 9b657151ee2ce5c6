"""Flow model of a routed InfiniBand fabric (docs/modelling.md#flow-model): paths from real OpenSM
tables, max-min fair rates, LogGP-style latencies, benchmark workloads, upstream-format output.
"""
