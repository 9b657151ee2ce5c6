"""IMB Multi-PingPong (MuPP, seed 000 §4.1): ``IMB-MPI1 -multi 0 PingPong``, every pair of
ranks 2g, 2g+1 ping-pongs at once; bandwidth [MB/s] of the largest size. A capacity app: one
run is one whole ``-msglog`` sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2hx.benchmarks import imbtext
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.benchmarks.imbtext import MultiPingPongOutput, PingPongRow
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    import numpy as np

    from t2hx.flowsim.models import SimNetwork
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.network import Network


def run(request: SimRequest, net: SimNetwork) -> MultiPingPongOutput:
    """``-multi 0``: t_min/t_max/t_avg over every grouped rank's time, Mbytes/sec from t_max
    (IMB_output.c ``IMB_calculate_times``, ``IMB_display_times``); the repetitions as IMB's
    schedule sets them from one repetition's time (patterns.pingpong_times)."""
    from t2hx.flowsim import patterns

    opts = request.options
    sizes = imbtext.msglog(opts.msglog)
    # IMB's estimate reads PingPong's unscaled time: a whole round trip, twice t
    probes = [2 * float(patterns.pingpong_times(net, m).max()) for m in sizes]
    reps, timed_out = imbtext.Schedule.of(opts).sweep(sizes, probes, 0.0, 2,
                                                      imbtext.msglog_bounds(opts.msglog))
    rows = []
    for m, count in zip(sizes, reps):
        t = patterns.pingpong_times(net, m, count) * 1e6
        rows.append(PingPongRow(m, count, float(t.min()), float(t.max()), float(t.mean()),
                                m / float(t.max()) if m and t.max() > 0 else 0.0))
    command = imbtext.calling_sequence("PingPong", net.ranks, opts, lead=("-multi", "0"))
    return MultiPingPongOutput(command, net.ranks, rows, timed_out)


def fluid_job(net: Network, ranks: np.ndarray, repeat: int, inp: dict | None,
              node: dict | None) -> Job:
    from t2hx.flowsim import imbjobs

    return imbjobs.mupp_job(net, "mupp", ranks, repeat=repeat, inp=inp)


BENCHMARK = Benchmark(
    "mupp", "IMB Multi-PingPong", "network", "IMBMultiPingPong", parser="imb",
    metric="bandwidth", unit="MB/s", spack_spec=imbtext.SPACK_SPEC,
    markers=(imbtext.IMB_FINALIZE,),
    workload=Workload(MultiPingPongOutput, run, imbtext.render_multi_pingpong,
                      imbtext.perturb_multi_pingpong, fluid_job=fluid_job),
    sized=True, local_binary=imbtext.BINARY, sim_options=imbtext.sim_options)
