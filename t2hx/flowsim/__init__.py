"""Flow model of a routed InfiniBand fabric (docs/modelling.md#flow-model): paths from real OpenSM
tables, max-min fair rates, LogGP-style latencies, the communication of the benchmarks and
app models, event-driven concurrent jobs. It knows no benchmark names: the benchmark modules
(t2hx/benchmarks/) call it with typed requests (t2hx/simrequest.py) and print its numbers.
"""
