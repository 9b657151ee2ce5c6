"""EmDL (seed 000 §4.1): IMB Allreduce alternating with a 0.1 s usleep (our SleepyAllreduce
patch of IMB), mimicking data-parallel deep learning; t_min [us] of the largest size. A
capacity app: one run is one whole ``-msglog`` sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2hx.benchmarks import imb, imbtext
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.benchmarks.imbtext import ImbOutput
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    import numpy as np

    from t2hx.flowsim.models import SimNetwork
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.network import Network

NAME = "SleepyAllreduce"        # the benchmark as our IMB patch names it
SLEEP_S = 0.1                   # the patch's usleep(100000) after every timed allreduce


def run(request: SimRequest, net: SimNetwork) -> ImbOutput:
    """The patch times the allreduce only, so the sleep shows in wall time, not in t: IMB's
    repetition estimate reads t, while its time limit counts the sleeps too."""
    from t2hx.flowsim import patterns

    opts = request.options
    sizes = imbtext.msglog(opts.msglog)
    table = imb.table(NAME, patterns.emdl(net, sizes), request, net.ranks, SLEEP_S)
    return ImbOutput(imbtext.calling_sequence(NAME, net.ranks, opts), net.ranks, [table])


def fluid_job(net: Network, ranks: np.ndarray, repeat: int, inp: dict | None,
              node: dict | None) -> Job:
    from t2hx.flowsim import imbjobs

    return imbjobs.emdl_job(net, "emdl", ranks, repeat=repeat, inp=inp)


BENCHMARK = Benchmark(
    "emdl", "EmDL (IMB Allreduce alternating with 0.1 s usleep)", "network", "IMBEmDL",
    parser="imb", metric="t_min", unit="us", spack_spec=imbtext.SPACK_SPEC,
    markers=(imbtext.IMB_FINALIZE,),
    workload=Workload(ImbOutput, run, imbtext.render, imbtext.perturb, fluid_job=fluid_job),
    sized=True, local_binary=imbtext.BINARY, sim_options=imbtext.sim_options)
