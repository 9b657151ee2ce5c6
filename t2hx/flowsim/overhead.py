"""What a capacity run costs besides its solver's timed section: the job's launch and the
code's own set-up and teardown, so a capacity run lasts its whole job
(docs/modelling.md#run-overheads). bench/overheads.py measures both on this machine; the
conf's ``model.run_overhead`` holds the numbers (t2hx/conf.py defaults, tests hold them to
bench/results/overheads.json).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Open MPI 4.1's ORTE launches its daemons along a radix tree of this fan-out (the
#: ``routed_radix`` component's default radix, orte/mca/routed/radix): up to 64 nodes are
#: one level below mpirun, 4,096 two.
RADIX = 64


def tree_levels(nodes: int, radix: int = RADIX) -> int:
    """Levels of daemons below ``mpirun`` for ``nodes`` nodes (0 for one node)."""
    levels, reach = 0, 1
    while reach < nodes:
        reach *= radix
        levels += 1
    return levels


@dataclass(frozen=True)
class RunOverhead:
    launch_s: float                 # mpirun start-up of the smallest job on one node
    setup: dict[str, float]         # code -> (set-up + teardown) / timed section

    @classmethod
    def of(cls, model: dict) -> RunOverhead | None:
        """The conf's ``model.run_overhead`` (None: off)."""
        spec = model["run_overhead"]
        if spec["mode"] == "off":
            return None
        return cls(float(spec["launch_s"]), {k: float(v) for k, v in spec["setup"].items()})

    @property
    def label(self) -> str:
        return f"measured:launch={self.launch_s:g}"

    def launch(self, nodes: int) -> float:
        """One measured start-up per level of the launch tree, plus mpirun's own."""
        return self.launch_s * (1 + tree_levels(nodes))

    def seconds(self, code: str, nodes: int, timed_s: float) -> float:
        """Seconds of a run of ``code`` on ``nodes`` nodes outside its timed section."""
        return self.launch(nodes) + self.setup.get(code, 0.0) * timed_s

