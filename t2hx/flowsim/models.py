"""The network models a simulation request chooses from (``SimRequest.model``).

A model opens the network of a request: the plane routed as the request says, with the
request's ranks per node on each line of its hostfile. The workloads (t2hx/benchmarks/, t2hx/flowsim/patterns.py,
apps.py) see only :class:`SimNetwork`: its ranks and hosts, its LogGP constants and
:meth:`SimNetwork.run`, the times of a list of communication phases. The flow model (max-min
fair rates per phase, t2hx/flowsim/bulk.py) is ``flow``, the default; ``packet``
(t2hx/flowsim/packet.py) sends MTU-sized packets with credit-based flow control through the
same routed fabric and answers the same calls, so no workload changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
from collections.abc import Callable

from t2hx.errors import WorkloadError
from t2hx.flowsim.bulk import Phase, Result
from t2hx.flowsim.timeline import Program
from t2hx.flowsim.network import LogGP, Network, open_network
from t2hx.paths import work_root
from t2hx.routing import parx
from t2hx.simrequest import FLOW_MODEL, PACKET_MODEL, SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim.packet import PacketNetwork


class SimNetwork(Protocol):
    """What a workload may ask of an opened network."""
    @property
    def hosts(self) -> list[str]: ...        # rank -> hostname

    @property
    def hostfile(self) -> str: ...

    @property
    def engine(self) -> str: ...             # the OpenSM routing engine it was routed with

    @property
    def loggp(self) -> LogGP: ...

    @property
    def ranks(self) -> int: ...

    @property
    def label(self) -> str: ...         # <system>/<plane>

    def run(self, phases: list[Phase], keep_rates: bool = False) -> Result: ...

    def run_program(self, prog: Program) -> np.ndarray: ...   # each rank's end of one call


@dataclass(frozen=True)
class NetworkModel:
    header: str                                 # the output header's ``model=``
    open: Callable[[SimRequest], SimNetwork]


def open_flow(request: SimRequest) -> Network:
    """The flow model's network: real OpenSM routing of the plane (cached), or the
    request's dumps."""
    opts = request.network
    threshold = parx.DEFAULT_THRESHOLD if opts.parx_threshold is None else opts.parx_threshold
    return open_network(request.system, request.plane, request.routing, request.hostfile,
                        work=opts.work or str(work_root()), lmc=opts.lmc,
                        dumps=opts.routing_dir, quiet=opts.quiet,
                        routing_input=opts.routing_input, parx_threshold=threshold,
                        ranks_per_node=opts.ranks_per_node)


def open_packets(request: SimRequest) -> PacketNetwork:
    """The packet engine's network: the flow model's routing, the conf's model.packet
    (imported here: a flow-model case never loads the packet engine, whose files its run
    cache key leaves out, t2hx/flowsim/runcache.py PACKET_ONLY)."""
    from t2hx.flowsim.packet import open_packet

    if request.network.ranks_per_node > 1:
        raise WorkloadError(f"{request.network.ranks_per_node} ranks per node: the packet "
                            "engine gives each rank its own host interface",
                            field="ranks_per_node",
                            fix="run the benchmark on the flow model (models: {name: flow})")
    return open_packet(open_flow(request))


MODELS: dict[str, NetworkModel] = {FLOW_MODEL: NetworkModel("maxmin", open_flow),
                                   PACKET_MODEL: NetworkModel("packet", open_packets)}


def network_model(name: str) -> NetworkModel:
    if name not in MODELS:
        raise WorkloadError(f"unknown network model '{name}'", field="model",
                            fix="use one of: " + ", ".join(MODELS))
    return MODELS[name]
