"""A typed simulation request: what one simulated run of a benchmark is.

``t2hx simulate`` builds it from its command line (t2hx/commands/simulate.py); the simulator
(t2hx/simulation.py) opens the network of the model it names (t2hx/flowsim/models.py) and
hands it to the benchmark's workload (t2hx/benchmarks/), which reads its options from here.
The run cache key and the noise draw are functions of the request (:meth:`key_options`), so
two requests that simulate the same thing share their cache entry and noise.

This module imports nothing heavy: the benchmark modules and the CLI read it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from t2hx.routing_engines import RoutingInput

#: baidu-allreduce's sizes (float elements) when the request names none: those its test
#: runs (test/test.cpp ``main``, ``buffer_sizes``).
DEFAULT_ELEMENTS = ("0,32,256,1024,4096,16384,65536,262144,1048576,8388608,67108864,"
                    "536870912")
#: The flow model; another network model is another row of t2hx/flowsim/models.py's MODELS.
FLOW_MODEL = "flow"
#: The packet model (t2hx/flowsim/packet.py): MTU packets, credits, VLs, the host interface.
PACKET_MODEL = "packet"
NETWORK_MODELS = (FLOW_MODEL, PACKET_MODEL)


@dataclass(frozen=True)
class NetworkOptions:
    """How the plane is routed and read; ``None`` = the conf's or the model's default."""
    lmc: int | None = None
    routing_dir: str | None = None       # OpenSM dumps to use instead of routing
    routing_input: RoutingInput | None = None   # the demand/job file to route with
    parx_threshold: int | None = None    # parx: Table 1a below this many bytes, 1b from it
    work: str | None = None              # routing cache root (default: t2hx.paths.work_root)
    quiet: bool = True
    # Open MPI's --map-by ppr:N:node (t2hx/launcher.py binding): ranks rN .. rN + N - 1 on
    # line r of the hostfile, intra-node messages over shared memory (flow model only)
    ranks_per_node: int = 1


@dataclass(frozen=True)
class BenchmarkOptions:
    """The benchmark's own parameters, as its binary's command line would give them."""
    msglog: str = "0:22"                 # IMB -msglog LO:HI
    imb_iter: str = ""                   # IMB -iter N[,MiB] ('' = IMB's 1000, 40 MiB)
    iter_policy: str = "dynamic"         # IMB -iter_policy
    imb_time: float = 10.0               # IMB -time: seconds per size
    size: int = 1 << 20                  # message bytes (mpiGraph, eBB)
    times: int = 10                      # mpiGraph iterations
    window: int = 10                     # mpiGraph window
    rounds: int = 100                    # eBB random bisections
    reps: int = 20                       # eBB repetitions per round
    elements: str = DEFAULT_ELEMENTS     # ring allreduce sizes, comma separated
    collectives: str = ""                # IMB collectives of `imb` ('' = every variant)
    compute_scale: float = 1.0           # apps: compute this many times faster, 0: none
    iterations: int | None = None        # apps: solver iterations (default: the model's)


@dataclass(frozen=True)
class SimRequest:
    """One simulated run: the benchmark (a registry key and variant) on a routed plane of a
    conf system, with the ranks of a hostfile."""
    system: str                          # conf/systems/<sys>.yaml or its name
    plane: str
    routing: str                         # OpenSM engine
    hostfile: str                        # its lines' hosts, ranks_per_node each
    benchmark: str                       # registry key (t2hx/benchmarks/)
    variant: str | None = None           # e.g. an IMB collective
    input: dict[str, Any] | None = None  # the study input (apps, x500); None: the study's
    seed: int = 1                        # the workload's own random draws (eBB bisections)
    repetition: int = 0                  # which repetition of the case (noise draw)
    network: NetworkOptions = field(default_factory=NetworkOptions)
    options: BenchmarkOptions = field(default_factory=BenchmarkOptions)
    model: str = FLOW_MODEL              # network model (t2hx/flowsim/models.py)

    def key_options(self) -> dict[str, Any]:
        """The options a simulated output depends on besides the case's files: the
        benchmark's options, its input (canonical JSON) and the PARX threshold."""
        text = None if self.input is None else json.dumps(self.input, sort_keys=True)
        # one rank per node leaves the key as it was before ranks per node existed
        packed = ({"ranks_per_node": self.network.ranks_per_node}
                  if self.network.ranks_per_node > 1 else {})
        return {**asdict(self.options), "input": text,
                "parx_threshold": self.network.parx_threshold, **packed}
