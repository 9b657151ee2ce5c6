"""What a capacity run costs besides its solver's timed section: the job's launch at its node
count and the code's own set-up and teardown, so a capacity run lasts its whole job
(docs/modelling.md#run-overheads). bench/overheads.py measures both: the launch as real
``srun``/``mpirun`` start-ups at 1-4 nodes on the test cluster, fitted to a scaling law; the
set-up and teardown from our real outputs of each code. The conf's ``model.run_overhead``
holds the numbers (t2hx/conf.py defaults; tests hold them to bench/results/overheads.json and
log/startup/runs.json).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: Open MPI's ORTE launches its daemons along a radix tree of this fan-out (the
#: ``routed_radix`` component's default radix, orte/mca/routed/radix): up to 64 nodes are
#: one level below mpirun, 4,096 two.
RADIX = 64
#: Start-up laws, start-up = a + b * x(N) (bench/overheads.py LAWS fits each).
LAWS = ("levels", "log2", "linear")


def tree_levels(nodes: int, radix: int = RADIX) -> int:
    """Levels of daemons below ``mpirun`` for ``nodes`` nodes (0 for one node)."""
    levels, reach = 0, 1
    while reach < nodes:
        reach *= radix
        levels += 1
    return levels


def law_x(law: str, nodes: int) -> float:
    """The regressor of a start-up law at ``nodes`` nodes."""
    if law == "levels":
        return float(tree_levels(nodes))
    if law == "log2":
        return math.log2(nodes)
    if law == "linear":
        return float(nodes - 1)
    raise ValueError(f"unknown start-up law {law!r} (one of {', '.join(LAWS)})")


@dataclass(frozen=True)
class RunOverhead:
    launch_a_s: float               # start-up of a one-node job, s
    launch_b_s: float = 0.0         # start-up per unit of the law's x(N), s
    law: str = "log2"
    setup: dict[str, float] = field(default_factory=dict)   # code -> (set-up+teardown)/timed
    launcher: str = "mpirun"

    @classmethod
    def of(cls, model: dict) -> RunOverhead | None:
        """The conf's ``model.run_overhead`` (None: off)."""
        spec = model["run_overhead"]
        if spec["mode"] == "off":
            return None
        return cls(float(spec["launch_a_s"]), float(spec["launch_b_s"]), spec["law"],
                   {k: float(v) for k, v in spec["setup"].items()}, spec["launcher"])

    @property
    def label(self) -> str:
        return (f"measured:{self.launcher}={self.launch_a_s:g}+{self.launch_b_s:g}*"
                f"{self.law}(N)")

    def launch(self, nodes: int) -> float:
        """The fitted start-up of a job on ``nodes`` nodes (never below the one-node one:
        a law fitted at 1-4 nodes must not shrink a larger job's launch)."""
        return max(self.launch_a_s, self.launch_a_s + self.launch_b_s * law_x(self.law, nodes))

    def setup_seconds(self, code: str, timed_s: float) -> float:
        return self.setup.get(code, 0.0) * timed_s

    def seconds(self, code: str, nodes: int, timed_s: float) -> float:
        """Seconds of a run of ``code`` on ``nodes`` nodes outside its timed section."""
        return self.launch(nodes) + self.setup_seconds(code, timed_s)
