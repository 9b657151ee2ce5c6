"""What one benchmark module declares: its :class:`Benchmark`, with the :class:`Workload` the
simulator runs.

A benchmark module (t2hx/benchmarks/<key>.py, or a module of a package named in
``$T2HX_BENCHMARK_PACKAGES``) defines ``BENCHMARK``: identity (key, title, group, aliases,
variants), the ReFrame check that runs it (``checks/``) and its ``t2hx simulate`` options,
the Spack spec and local binary, the parser binding (t2hx/post/parsers/, metric, unit,
completion markers), and its workload: a typed function of a simulation request returning
typed numbers, the renderer of those numbers in the upstream text format, the noise rule
applied to the numbers before rendering, and the capacity fluid job where it has one.

Nothing here imports numpy or the flow model: the checks and the CLI read the registry
hundreds of times; workloads import the model inside their functions.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from collections.abc import Callable

from t2hx.errors import WorkloadError

if TYPE_CHECKING:
    import numpy as np

    from t2hx.benchmarks.proxyapp import AppSpec
    from t2hx.flowsim.apps import AppResult
    from t2hx.flowsim.models import SimNetwork
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.network import Network
    from t2hx.simrequest import SimRequest

GROUPS = ("network", "app", "x500")      # seed 000 §4.1, §4.2, §4.3
R = TypeVar("R")
#: A capacity app's fluid job: (network, its ranks, repeats, study input, node rates).
FluidJob = Callable[["Network", "np.ndarray", int, "dict | None", "dict | None"], "Job"]


def no_header(request: SimRequest) -> dict[str, object]:
    return {}


def option(inp: dict[str, Any], key: str, flag: str, check: Callable[[str], object],
           default: object = None) -> list[str]:
    """``[flag, value]`` of a study input key for ``t2hx simulate``, the value checked with
    the option's own argparse type (t2hx.argtypes): a campaign checks every input before it
    starts (t2hx.campaign.preflight), not each case when it runs."""
    value = inp.get(key, default)
    if value is None:
        raise WorkloadError(f"input {inp} has no {key}", field=f"input.{key}",
                            fix=f"give {key}")
    try:
        check(str(value))
    except argparse.ArgumentTypeError as err:
        message, _, fix = str(err).partition(" (fix: ")
        raise WorkloadError(message, field=f"input.{key}", fix=fix.removesuffix(")")) from None
    return [flag, str(value)]


def no_options(inp: dict[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class Workload(Generic[R]):
    """How the simulator runs a benchmark. ``result`` is a dataclass of JSON-typed fields
    (numbers, strings, lists, nested such dataclasses): the run cache keeps it
    (t2hx/benchmarks/results.py), each repetition applies its noise factor with ``perturb``
    (times multiplied by f, rates divided) and prints it with ``render``."""
    result: type[R]
    run: Callable[[SimRequest, SimNetwork], R]     # the request's run on an opened network
    render: Callable[[R], str]                     # numbers -> upstream text, no header
    perturb: Callable[[R, float], R]               # the noise rule on the numbers
    header: Callable[[SimRequest], dict[str, object]] = no_header   # extra header pairs
    fluid_job: FluidJob | None = None              # its job in the capacity mix
    seeded: bool = False                           # draws from the request's seed
    from_app: Callable[[AppResult, int], R] | None = None   # codes the model runs: a
    #                                                 model run at n ranks -> the numbers


@dataclass(frozen=True)
class Benchmark:
    key: str                       # study key (conf/studies/); the check's perflog benchmark
    title: str
    group: str                     # one of GROUPS
    check: str                     # check class name in checks/
    parser: str                    # module in t2hx/post/parsers
    metric: str                    # Table-2 metric, as the parser names it
    unit: str
    spack_spec: str
    markers: tuple[str, ...]       # regexes a finished real run's output contains
    workload: Workload
    sim_markers: tuple[str, ...] | None = None   # on the simulator, when they differ
    metric_filter: str | None = None   # parser ``benchmark`` to keep; {variant} = lower name
    sized: bool = False            # a message-size sweep: the largest size is the metric
    unsized_variants: tuple[str, ...] = ()       # variants without a size (IMB Barrier)
    variants: tuple[str, ...] = ()  # the check's parameter, as the binary spells them
    output_file: str = ""          # raw output file of the real binary ('' = stdout)
    local_binary: str = ""         # its executable in the Spack view (bin/): `local` runs it
    sim_options: Callable[[dict[str, Any]], list[str]] = no_options  # study input as
    #                                `t2hx simulate` options (the check passes them)
    app: AppSpec | None = None     # the code the model runs (proxy apps, x500): skeleton,
    #                                input rules; its case input goes to `simulate --input`
    aliases: tuple[str, ...] = ()
    module: str = ""               # the module that declares it (set by the registry)

    def name(self, variant: str | None = None) -> str:
        """The perflog/check name: ``imb-bcast`` for a variant, else the key."""
        return f"{self.key}-{variant.lower()}" if variant else self.key

    def metric_benchmark(self, variant: str | None = None) -> str | None:
        if self.metric_filter is None:
            return None
        return self.metric_filter.format(variant=(variant or "").lower())

    def is_sized(self, variant: str | None = None) -> bool:
        return self.sized and variant not in self.unsized_variants
