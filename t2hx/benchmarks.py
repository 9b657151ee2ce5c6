"""The benchmark registry: one entry per benchmark, the only place its identity lives.

An entry binds the study key (``conf/studies/<study>.yaml`` ``benchmarks:``/``capacity.apps:``), the
ReFrame check class (``checks/``), the parser module (``t2hx/post/parsers/<parser>.py``) and
the Table-2 metric it reads, the completion markers, the Spack spec, the flow-model workload
(``t2hx.flowsim.workloads.WORKLOADS[<workload>]``: text for ``t2hx simulate``, a fluid job
for ``campaign simulate-capacity``) and the app skeleton (``t2hx.flowsim.apps.SKELETONS``).
``t2hx simulate``, the capacity model, post's parser dispatch and the checks all look names
up here, so adding a benchmark is one entry here + its parser + its workload.

Names: a key, an alias, or for benchmarks with variants (IMB's collectives) ``<key>-<variant>``
or the bare variant (``imb-bcast``, ``bcast``). This module imports nothing heavy (no numpy,
no flowsim) so checks and the CLI can read it cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass

from t2hx.errors import WorkloadError
from t2hx.wire import WALLTIME_MARKER as WALLTIME   # the line our app patches print
IMB_FINALIZE = r"# All processes entering MPI_Finalize"


@dataclass(frozen=True)
class Benchmark:
    key: str                       # study key (conf/studies/); the check's perflog ``benchmark``
    title: str
    group: str                     # seed 000 §4: network (4.1) | app (4.2) | x500 (4.3)
    check: str                     # check class name in checks/
    parser: str                    # module in t2hx/post/parsers
    metric: str                    # Table-2 metric, as the parser names it
    unit: str
    workload: str                  # t2hx.flowsim.workloads.WORKLOADS key
    spack_spec: str
    markers: tuple[str, ...]       # regexes a finished real run's output contains
    sim_markers: tuple[str, ...] | None = None   # on the flow model, when they differ
    metric_filter: str | None = None   # parser ``benchmark`` to keep; {variant} = lower name
    sized: bool = False            # a message-size sweep: the largest size is the metric
    unsized_variants: tuple[str, ...] = ()       # variants without a size (IMB Barrier)
    variants: tuple[str, ...] = ()  # e.g. IMB's collectives, as the binary spells them
    output_file: str = ""          # raw output file of the real binary ('' = stdout)
    local_binary: str = ""         # its executable in the Spack view (bin/): `local` runs it
    skeleton: str | None = None    # t2hx.flowsim.apps.SKELETONS key (apps, capacity)
    aliases: tuple[str, ...] = ()

    def name(self, variant: str | None = None) -> str:
        """The perflog/check name: ``imb-bcast`` for a variant, else the key."""
        return f"{self.key}-{variant.lower()}" if variant else self.key

    def metric_benchmark(self, variant: str | None = None) -> str | None:
        if self.metric_filter is None:
            return None
        return self.metric_filter.format(variant=(variant or "").lower())

    def is_sized(self, variant: str | None = None) -> bool:
        return self.sized and variant not in self.unsized_variants


def _app(key: str, title: str, check: str, spec: str, **kw) -> Benchmark:
    """A proxy app: its walltime line is the metric, on real runs and the flow model."""
    kw.setdefault("parser", key)
    markers = (WALLTIME, *kw.pop("markers", ()))
    return Benchmark(key, title, "app", check, metric="solver_walltime", unit="s",
                     workload="app", spack_spec=spec, markers=markers,
                     sim_markers=(WALLTIME,), skeleton=key, **kw)


IMB_COLLECTIVES = ("Barrier", "Bcast", "Gather", "Scatter", "Reduce", "Allreduce", "Alltoall")

REGISTRY: tuple[Benchmark, ...] = (
    # --- pure MPI / network (seed 000 §4.1) ------------------------------------------------
    Benchmark("imb", "IMB MPI-1 collectives", "network", "IMBCollective", parser="imb",
              metric="t_min", unit="us", workload="imb", spack_spec="intel-mpi-benchmarks",
              markers=(IMB_FINALIZE,), metric_filter="imb-{variant}", sized=True,
              unsized_variants=("Barrier",), variants=IMB_COLLECTIVES, local_binary="IMB-MPI1",
              aliases=("imb-mpi1",)),
    Benchmark("ebb", "Netgauge effective bisection bandwidth", "network", "NetgaugeEBB",
              parser="netgauge", metric="bandwidth", unit="MiB/s", workload="ebb",
              spack_spec="netgauge", markers=(r"size: \d+ num: \d+ average: ",),
              local_binary="netgauge", aliases=("netgauge",)),
    Benchmark("ring-allreduce", "Baidu DeepBench ring allreduce (CPU)", "network",
              "RingAllreduce", parser="baidu", metric="t_avg", unit="s",
              workload="ring-allreduce",
              spack_spec="baidu-allreduce",      # spack-env/repo overlay (CPU-only patch)
              markers=(r"Verified allreduce for size",), sized=True, local_binary="allreduce-test",
              aliases=("baidu", "allreduce-ring", "ring_allreduce", "baidu-allreduce")),
    Benchmark("mpigraph", "mpiGraph", "network", "MpiGraph", parser="mpigraph",
              metric="send_avg", unit="MiB/s", workload="mpigraph", spack_spec="mpigraph",
              markers=(r"END mpiGraph",), local_binary="mpiGraph"),
    Benchmark("mupp", "IMB Multi-PingPong", "network", "IMBMultiPingPong", parser="imb",
              metric="bandwidth", unit="MB/s", workload="mupp",
              spack_spec="intel-mpi-benchmarks", markers=(IMB_FINALIZE,), sized=True,
              local_binary="IMB-MPI1"),
    Benchmark("emdl", "EmDL (IMB Allreduce alternating with 0.1 s usleep)", "network",
              "IMBEmDL", parser="imb", metric="t_min", unit="us", workload="emdl",
              spack_spec="intel-mpi-benchmarks", markers=(IMB_FINALIZE,), sized=True,
              local_binary="IMB-MPI1"),
    # --- proxy applications (seed 000 §4.2) ------------------------------------------------
    _app("amg", "AMG2013", "AMG", "amg2013", local_binary="amg", aliases=("amg2013",)),
    _app("comd", "CoMD", "CoMD", "comd", local_binary="CoMD-mpi"),
    _app("minife", "miniFE", "MiniFE", "minife", local_binary="miniFE.x",
         aliases=("mini-fe",)),
    _app("swfft", "SWFFT", "SWFFT", "swfft", local_binary="TestDfft"),
    _app("ffvc", "FFVC cavity flow", "FFVC", "ffvc-mini", local_binary="ffvc_mini"),
    _app("mvmc", "mVMC", "MVMC", "mvmc-mini", local_binary="vmc.out"),
    _app("ntchem", "NTChem RI-MP2", "NTChem", "ntchem-mini", local_binary="rimp2.exe"),
    _app("milc", "MILC (Trinity)", "MILC", "milc", markers=(r"RUNNING COMPLETED",),
         local_binary="su3_rhmd_hisq"),
    _app("qball", "qb@ll", "Qball", "qball", parser="qbox", local_binary="qball",
         aliases=("qb@ll", "qbox")),
    # --- x500 (seed 000 §4.3) --------------------------------------------------------------
    Benchmark("hpl", "HPL", "x500", "HPL", parser="hpl", metric="gflops", unit="Gflop/s",
              workload="hpl", spack_spec="hpl", markers=(r"End of Tests\.",),
              sim_markers=(),            # the flow model prints the result rows only
              local_binary="xhpl", skeleton="hpl", aliases=("hpcc",)),
    Benchmark("hpcg", "HPCG", "x500", "HPCG", parser="hpcg", metric="gflops", unit="GFLOP/s",
              workload="hpcg", spack_spec="hpcg", markers=(r"HPCG result is VALID",),
              output_file="HPCG-Benchmark*.txt", local_binary="xhpcg", skeleton="hpcg"),
    Benchmark("graph500", "Graph500 BFS", "x500", "Graph500", parser="graph500",
              metric="bfs_harmonic_mean_teps", unit="TEPS", workload="graph500",
              spack_spec="graph500", markers=(r"harmonic_mean_TEPS",), skeleton="graph500",
              local_binary="graph500_reference_bfs", aliases=("graph500-bfs",)),
)


def _index() -> dict[str, tuple[Benchmark, str | None]]:
    names: dict[str, tuple[Benchmark, str | None]] = {}

    def add(name: str, bench: Benchmark, variant: str | None) -> None:
        if name in names and names[name][0] is not bench:
            raise RuntimeError(f"benchmark name {name!r} is bound twice in t2hx/benchmarks.py")
        names[name] = (bench, variant)

    for b in REGISTRY:
        for name in (b.key, *b.aliases):
            add(name, b, None)
        for v in b.variants:
            add(b.name(v), b, v)
            add(v.lower(), b, v)
    return names


NAMES = _index()
BY_KEY = {b.key: b for b in REGISTRY}


def find(name: str) -> tuple[Benchmark, str | None] | None:
    """(entry, variant) for a key, alias, ``<key>-<variant>`` or bare variant; else None."""
    return NAMES.get(name.strip().lower())


def resolve(name: str, field: str = "benchmark") -> tuple[Benchmark, str | None]:
    """Like :func:`find`, but an unknown name is one line naming ``field`` and the keys."""
    hit = find(name)
    if hit is None:
        raise WorkloadError(f"unknown benchmark '{name}'", field=field,
                            fix="use one of: " + ", ".join(BY_KEY))
    return hit


def get(name: str, field: str = "benchmark") -> Benchmark:
    return resolve(name, field)[0]

