"""The routing engines t2hx knows, one row each: what distinguishes an engine, stated once.

This is the table OpenSM keeps as ``routing_modules[]`` in ``osm_opensm.c`` (a name and a
setup function per engine) widened by what t2hx must know around the run: whether the
engine is ours (registered by the event plugin ``parx/libparx.so``) or stock, what routing
input it reads, the LMC and LID assignment it needs, how its path SLs are read back, and
what MPI needs to use it. Behaviour stays in ``t2hx/routing/`` (OpenSM arguments,
verification, reading the SLs) and in the flow model; those look the row up instead of
comparing engine names. Adding a routing engine is one row here and, for one of ours, one
C file in ``parx/`` (docs/routing.md#engines).

This module imports nothing heavy: the conf loader and the CLI read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: Routing inputs our engines read, by kind: what the file holds (docs/formats.md).
DEMAND, JOBS = "demand", "jobs"
#: How a layered engine's path SLs are read back (t2hx/routing/pathsl.py): from OpenSM's
#: debug log (DFSSSP) or from our plugin's SL dump.
SL_FROM_LOG, SL_FROM_DUMP = "log", "dump"


@dataclass(frozen=True)
class RoutingEngine:
    name: str                          # OpenSM's routing_engine name
    ours: bool = False                 # registered by our plugin (parx/libparx.so)
    reads: str | None = None           # routing input: DEMAND, JOBS or None (oblivious)
    option: str | None = None          # the plugin option that names the input file
    lmc: int | None = None             # the LMC it always routes with (None: the plane's)
    lid_policy: bool = False           # assigns its own LIDs (guid2lid, honor_guid2lid_file)
    lid_per_message: bool = False      # MPI picks each message's destination LID
    path_sl: str | None = None         # SL_FROM_LOG / SL_FROM_DUMP; None: SL 0 everywhere
    roots: bool = False                # needs the tree's root and compute-node GUID files
    #: MCA parameters its jobs need (docs/routing.md#mpi-side)
    mca: Mapping[str, object] = field(default_factory=dict)

    @property
    def oblivious(self) -> bool:
        """Routes without knowing the workload (no routing input)."""
        return self.reads is None


#: PARX's LMC: four LIDs per port, one per HyperX quadrant (docs/routing.md#lmc-and-lid-policy).
PARX_LMC = 2

_ROWS = (
    RoutingEngine("minhop"),
    RoutingEngine("updn", roots=True),
    RoutingEngine("dnup", roots=True),
    RoutingEngine("ftree", roots=True),
    RoutingEngine("sssp"),
    RoutingEngine("dfsssp", path_sl=SL_FROM_LOG),
    RoutingEngine("lash"),
    RoutingEngine("nue"),
    RoutingEngine("dor"),
    RoutingEngine("torus-2QoS"),
    # PARX (seed 000 §3.2): the usage line of our Open MPI patch
    # (patches/openmpi/4.1-parx-lid-selection.patch): ob1 with one openib module per LID
    # picks each message's destination LID by Table 1; without it every message takes
    # base LIDs.
    RoutingEngine("parx", ours=True, reads=DEMAND, option="parx_demand", lmc=PARX_LMC,
                  lid_policy=True, lid_per_message=True, path_sl=SL_FROM_DUMP,
                  mca=MappingProxyType({"pml": "ob1", "btl": "openib,self,vader",
                                        "btl_openib_max_lmc": 4, "pml_ob1_parx_enable": 1,
                                        "pml_ob1_parx_threshold": 512})),
    # SAR (seed 004): re-routed for the running jobs' node lists.
    RoutingEngine("sar", ours=True, reads=JOBS, option="sar_jobs", path_sl=SL_FROM_DUMP),
    # SimGrid's Floyd routing (seed 001's simulations): one VL, every path on SL 0.
    RoutingEngine("floyd", ours=True),
)

#: name -> row. A live view: what is registered in ``_TABLE`` is what every user sees.
_TABLE: dict[str, RoutingEngine] = {row.name: row for row in _ROWS}
ENGINES: Mapping[str, RoutingEngine] = MappingProxyType(_TABLE)


def routing_engine(name: str) -> RoutingEngine:
    """The row of ``name``; an unknown name is a stock engine t2hx knows nothing special of
    (conf validation names the known ones before anything gets here)."""
    return _TABLE.get(name) or RoutingEngine(name)


def names() -> tuple[str, ...]:
    return tuple(_TABLE)


def ours() -> tuple[str, ...]:
    """Engines our plugin registers."""
    return tuple(n for n, r in _TABLE.items() if r.ours)


def reading(kind: str) -> tuple[str, ...]:
    """Engines that route from a routing input of ``kind`` (DEMAND or JOBS)."""
    return tuple(n for n, r in _TABLE.items() if r.reads == kind)


def input_aware() -> tuple[str, ...]:
    """Engines re-routed for the jobs they serve (each reads a routing input)."""
    return tuple(n for n, r in _TABLE.items() if r.reads)


def input_options() -> dict[str, tuple[str, str]]:
    """Input kind -> (engine, plugin option): what the plane's OpenSM is given."""
    return {r.reads: (n, r.option) for n, r in _TABLE.items() if r.reads and r.option}


def register(row: RoutingEngine) -> None:
    """Add a row (a site's engine, or a test's); it routes like any other from then on."""
    _TABLE[row.name] = row


def unregister(name: str) -> None:
    _TABLE.pop(name, None)


@dataclass(frozen=True)
class RoutingInput:
    """The file an input-aware engine routes from: a PARX demand or a SAR job file."""
    kind: str                          # DEMAND or JOBS
    path: str

    @classmethod
    def of(cls, demand: str | None = None, jobs: str | None = None) -> RoutingInput | None:
        """From the CLI's ``--demand``/``--jobs`` pair (at most one is given)."""
        if demand and jobs:
            raise ValueError("a demand file and a job file: an engine reads one of them")
        if demand:
            return cls(DEMAND, str(demand))
        return cls(JOBS, str(jobs)) if jobs else None
