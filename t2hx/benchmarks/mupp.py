"""IMB Multi-PingPong (MuPP, seed 000 §4.1): every rank pair ping-pongs at once; bandwidth
[MB/s] of the largest size. A capacity app: one run is one whole ``-msglog`` sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2hx.benchmarks import imbtext
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.benchmarks.imbtext import MultiPingPongOutput, PingPongRow
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    import numpy as np

    from t2hx.flowsim.engines import SimNetwork
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.network import Network


def run(request: SimRequest, net: SimNetwork) -> MultiPingPongOutput:
    from t2hx.flowsim import patterns

    msglog = request.options.msglog
    model = patterns.multi_pingpong(net, imbtext.msglog(msglog))
    return MultiPingPongOutput(f"{imbtext.BINARY} -multi 0 -msglog {msglog} PingPong",
                               net.ranks, [PingPongRow(*row) for row in model])


def fluid_job(net: Network, ranks: np.ndarray, repeat: int, inp: dict | None,
              node: dict | None) -> Job:
    from t2hx.flowsim import imbjobs

    return imbjobs.mupp_job(net, "mupp", ranks, repeat=repeat)


BENCHMARK = Benchmark(
    "mupp", "IMB Multi-PingPong", "network", "IMBMultiPingPong", parser="imb",
    metric="bandwidth", unit="MB/s", spack_spec=imbtext.SPACK_SPEC,
    markers=(imbtext.IMB_FINALIZE,),
    workload=Workload(MultiPingPongOutput, run, imbtext.render_multi_pingpong,
                      imbtext.perturb_multi_pingpong, fluid_job=fluid_job),
    sized=True, local_binary=imbtext.BINARY, sim_options=imbtext.msglog_option)
