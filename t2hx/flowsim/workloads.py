"""The flow-model workloads, keyed by the registry's ``workload`` field (t2hx/benchmarks.py).

A workload renders a benchmark's output in the upstream benchmark's own text format for
``t2hx simulate`` (after the ``# t2hx-simulated:`` header line) and, for capacity apps, builds
its fluid job for ``t2hx campaign simulate-capacity``. Options come from ``t2hx simulate``'s
command line (any object with its attributes: ``msglog``, ``size``, ``compute_scale``, …).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from t2hx.benchmarks import Benchmark
from t2hx.errors import WorkloadError
from t2hx.flowsim import apps, collectives, imbjobs, output, patterns
from t2hx.flowsim.fluid import Job
from t2hx.flowsim.network import Network

Render = Callable[[Network, Benchmark, "str | None", Any], str]
JobBuilder = Callable[[Network, Benchmark, np.ndarray, int], Job]


@dataclass(frozen=True)
class Workload:
    render: Render                  # text of one simulated run, header excluded
    job: JobBuilder | None = None   # fluid job for capacity runs (None: not a capacity app)


def ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise WorkloadError(f"not a list of integers: {text!r}", field=what,
                            fix="write e.g. 0,1024,1048576") from None


def msglog(text: str) -> list[int]:
    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="write LO:HI, "
                            "e.g. 0:22") from None
    if not 0 <= lo <= hi <= 31:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="0 <= LO <= HI <= 31")
    return output.msglog_sizes(lo, hi)


def _imb_text(net: Network, names: list[str], opts: Any, rows_of: Callable) -> str:
    sizes = msglog(opts.msglog)
    cmd = f"IMB-MPI1 -msglog {opts.msglog} " + " ".join(names)
    body = output.imb_preamble(names, cmd)
    for name in names:
        body += output.imb_table(name, net.ranks, rows_of(name, sizes))
    return body + output.imb_footer()


def imb(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    """One collective (a variant) or the list in ``--collectives``."""
    names = [variant] if variant else [collectives.canonical(c.strip())
                                      for c in opts.collectives.split(",") if c.strip()]
    return _imb_text(net, names, opts, lambda c, sizes: patterns.imb(net, c, sizes))


def emdl(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    return _imb_text(net, ["SleepyAllreduce"], opts, lambda c, sizes: patterns.emdl(net, sizes))


def mupp(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    rows = patterns.multi_pingpong(net, msglog(opts.msglog))
    cmd = f"IMB-MPI1 -multi 0 -msglog {opts.msglog} PingPong"
    return (output.imb_preamble(["Multi-PingPong"], cmd)
            + output.multi_pingpong_table(net.ranks, rows) + output.imb_footer())


def mpigraph(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    return output.mpigraph_text(net, patterns.mpigraph(net, opts.size, opts.times, opts.window))


def ebb(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    e = patterns.ebb(net, opts.size, opts.rounds, opts.reps, opts.seed)
    return output.ebb_text(net, e, f"netgauge -s {opts.size} -m mpi -x ebb -r {opts.rounds}")


def ring_allreduce(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    rows = [(e, patterns.ring_allreduce(net, e)) for e in ints(opts.elements, "elements")]
    return output.baidu_lines(rows)


def _app(text: Callable[[apps.AppResult, int], str]) -> Render:
    """A skeleton run printed the way the real code prints its metric."""
    def render(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
        res = apps.run_app(net, bench.key, opts.compute_scale, opts.iterations,
                           getattr(opts, "app_input", None), getattr(opts, "node", None))
        return text(res, net.ranks)
    return render


def _app_job(net: Network, bench: Benchmark, ranks: np.ndarray, repeat: int,
             inp: dict | None = None, node: dict | None = None) -> Job:
    return apps.app_job(net, bench.key, ranks, repeat=repeat, inp=inp, node=node)


def _mupp_job(net: Network, bench: Benchmark, ranks: np.ndarray, repeat: int,
              inp: dict | None = None, node: dict | None = None) -> Job:
    return imbjobs.mupp_job(net, bench.key, ranks, repeat=repeat)


def _emdl_job(net: Network, bench: Benchmark, ranks: np.ndarray, repeat: int,
              inp: dict | None = None, node: dict | None = None) -> Job:
    return imbjobs.emdl_job(net, bench.key, ranks, repeat=repeat)


WORKLOADS: dict[str, Workload] = {
    "imb": Workload(imb),
    "emdl": Workload(emdl, _emdl_job),
    "mupp": Workload(mupp, _mupp_job),
    "mpigraph": Workload(mpigraph),
    "ebb": Workload(ebb),
    "ring-allreduce": Workload(ring_allreduce),
    "app": Workload(_app(apps.walltime_text), _app_job),
    "hpl": Workload(_app(apps.hpl_text), _app_job),
    "hpcg": Workload(_app(apps.hpcg_text), _app_job),
    "graph500": Workload(_app(apps.graph500_text), _app_job),
}


def workload(bench: Benchmark) -> Workload:
    try:
        return WORKLOADS[bench.workload]
    except KeyError:
        raise WorkloadError(f"benchmark '{bench.key}' names workload '{bench.workload}', "
                            "which t2hx.flowsim.workloads does not define",
                            field="workload", fix="add it to WORKLOADS") from None


def render(net: Network, bench: Benchmark, variant: str | None, opts: Any) -> str:
    return workload(bench).render(net, bench, variant, opts)


def job(net: Network, bench: Benchmark, ranks: np.ndarray, repeat: int,
        inp: dict | None = None, node: dict | None = None) -> Job:
    """A capacity app's fluid job; apps with ``inp`` run their calibrated model."""
    build = workload(bench).job
    if build is None:
        raise WorkloadError(f"'{bench.key}' has no fluid job, so it cannot be a capacity app",
                            field=f"capacity.apps.{bench.key}",
                            fix="use a proxy app, an x500 code, mupp or emdl")
    return build(net, bench, ranks, repeat, inp, node)


def capacity_jobs(net: Network, spans: dict[str, np.ndarray], study: Any, node: dict,
                  repeat: int) -> list[Job]:
    """The capacity mix's fluid jobs: each app on its ranks with the study's input at its
    node count (calibrated models; docs/modelling.md#capacity-mode) on the conf's node."""
    from t2hx import benchmarks

    out = []
    for app, ranks in spans.items():
        bench = study.capacity_benchmark(app)
        out.append(job(net, benchmarks.get(bench), ranks, repeat,
                       study.input(bench, len(ranks)) if bench in study.catalog else None,
                       node))
    return out
