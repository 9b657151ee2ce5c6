"""Batch-job histories (seed 004 §4.2): traces in the Standard Workload Format of the Parallel
Workloads Archive or Slurm's ``sacct --parsable2`` accounting, their jobs placed on a conf
system's nodes, and the set of running jobs sampled at a fixed interval (docs/history.md)."""

#: How a trace without node lists gets nodes (t2hx/history/sampling.py, docs/history.md).
PLACEMENT_POLICIES = ("first-fit", "least-recent", "random")
