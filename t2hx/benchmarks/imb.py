"""IMB MPI-1 collectives (seed 000 §4.1): one case per collective, t_min [us] of the largest
message size as the metric, every size in the raw output."""

from __future__ import annotations

from typing import TYPE_CHECKING

from t2hx.benchmarks import imbtext
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.benchmarks.imbtext import ImbOutput, ImbTable
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    from t2hx.flowsim import patterns
    from t2hx.flowsim.models import SimNetwork

IMB_COLLECTIVES = ("Barrier", "Bcast", "Gather", "Scatter", "Reduce", "Allreduce", "Alltoall")


def run(request: SimRequest, net: SimNetwork) -> ImbOutput:
    """The request's collective (its variant), or those of ``collectives`` (all when empty)."""
    from t2hx.flowsim import collectives, patterns

    opts = request.options
    chosen = [c.strip() for c in opts.collectives.split(",") if c.strip()] or IMB_COLLECTIVES
    names = [request.variant] if request.variant else [collectives.canonical(c)
                                                       for c in chosen]
    sizes = imbtext.msglog(opts.msglog)
    tables = [table(n, patterns.imb(net, n, sizes), request, net.ranks) for n in names]
    return ImbOutput(f"{imbtext.BINARY} -msglog {opts.msglog} " + " ".join(names), net.ranks,
                     tables)


def table(name: str, model: list[patterns.ImbRow], request: SimRequest, ranks: int,
          untimed: float = 0.0) -> ImbTable:
    """IMB's schedule over the modelled calls: its repetition counts and, where the sweep's
    time limit (IMB 2018 ``src/IMB.c`` and 2021.7 ``helper_time_check`` alike) runs out, the
    ``time-out`` line and nothing after. ``untimed``: seconds a repetition adds outside the
    timing (EmDL's sleep; the ``-sync`` barrier is left out)."""
    opts = request.options
    reps, timed_out = imbtext.Schedule.of(opts).sweep(
        [r.size for r in model], [r.t_max * 1e-6 for r in model], untimed, ranks,
        imbtext.msglog_bounds(opts.msglog))
    return ImbTable(name, imbtext.rows(model[:len(reps)], reps), timed_out)


BENCHMARK = Benchmark(
    "imb", "IMB MPI-1 collectives", "network", "IMBCollective", parser="imb",
    metric="t_min", unit="us", spack_spec=imbtext.SPACK_SPEC, markers=(imbtext.IMB_FINALIZE,),
    workload=Workload(ImbOutput, run, imbtext.render, imbtext.perturb),
    metric_filter="imb-{variant}", sized=True, unsized_variants=("Barrier",),
    variants=IMB_COLLECTIVES, local_binary=imbtext.BINARY, sim_options=imbtext.msglog_option,
    aliases=("imb-mpi1",))
