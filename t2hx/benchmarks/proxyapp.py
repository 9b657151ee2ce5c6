"""The proxy-app pattern: a code the flow model runs (the proxy apps of seed 000 §4.2, and
the x500 codes with their own output).

A code is an :class:`AppSpec`: its skeleton (one solver iteration's compute and
communication, for codes without a calibration) and its input rules, which the calibrated
model (t2hx/flowsim/appmodel.py) asks for: the per-rank work of a run, the per-rank share of
the input that the study's ``scaling`` rule (seed 000 Table 2) holds or divides, the measures
its traffic scales with, and the seconds of a calibration run's metric. A proxy app's module is
then one call of :func:`proxy_app`; its metric is the agreed solver walltime line
(t2hx/wire.py) that our patches print, on real runs and on the flow model alike.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from collections.abc import Callable

from t2hx import wire
from t2hx.benchmarks.base import Benchmark, Workload
from t2hx.errors import WorkloadError
from t2hx.simrequest import SimRequest

if TYPE_CHECKING:
    import numpy as np

    from t2hx.flowsim.apps import AppResult
    from t2hx.flowsim.models import SimNetwork
    from t2hx.flowsim.fluid import Job
    from t2hx.flowsim.network import Network

K, M = 1024, 1024 * 1024
R = TypeVar("R")
#: A rule of a study input: (input, ranks) -> a number.
Rule = Callable[[dict[str, Any], int], float]


@dataclass(frozen=True)
class Skeleton:
    compute_s: float                      # per iteration on the reference node
    iterations: int
    comm: tuple[tuple[str, int], ...]     # (kind, bytes) steps per iteration


def metric_seconds(run: dict[str, Any], inp: dict[str, Any]) -> float:
    """A walltime metric is the timed seconds themselves."""
    return float(run["value"])


INPUT_FIX = "give the keys the study file documents, as numbers in their ranges"


@dataclass(frozen=True)
class AppSpec:
    """A code the flow model runs and what its study input means to the model."""
    key: str
    skeleton: Skeleton
    work_rule: Rule                       # per-rank work (only ratios of one code's are used)
    measure_rules: tuple[tuple[str, Rule], ...] = ()   # name -> measure (conf/appmodels.yaml)
    metric_rule: Callable[[dict[str, Any], dict[str, Any]], float] = metric_seconds
    #                                       a calibration run's (run, input) -> timed seconds
    sets_rule: Callable[[dict[str, Any], float], int] | None = None
    #    a whole run's repeats of the modelled timed section: (input, seconds of one) -> count
    #    (HPCG times sets for the input's seconds); None: one
    share_rule: Rule | None = None
    #    the input a rank holds, which weak scaling keeps and strong scaling divides (HPL's
    #    matrix bytes, qb@ll's atoms); None: the work itself (work linear in the share)

    def measure(self, name: str, inp: dict[str, Any], ranks: int) -> float:
        """``one`` (independent of the input) or one of the code's measures."""
        rules = dict(self.measure_rules)
        rule = one if name == "one" else rules.get(name)
        if rule is None:
            raise WorkloadError(f"no measure '{name}' for '{self.key}'",
                                field=f"models.{self.key}",
                                fix=f"use one of: one, {', '.join(rules)}")
        return self._guarded(rule, inp, ranks)

    def work(self, inp: dict[str, Any], ranks: int) -> float:
        return self._guarded(self.work_rule, inp, ranks)

    def share(self, inp: dict[str, Any], ranks: int) -> float:
        return self._guarded(self.share_rule or self.work_rule, inp, ranks)

    def seconds_of(self, run: dict[str, Any], inp: dict[str, Any]) -> float:
        return self.metric_rule(run, inp)

    def _guarded(self, rule: Rule, inp: dict[str, Any], ranks: int) -> float:
        field = f"benchmarks.{self.key}.input"
        try:
            value = float(rule(inp, ranks))
        except KeyError as err:
            raise WorkloadError(f"{self.key} input {inp} has no {err.args[0]}", field=field,
                                fix="give the keys the study file documents for it") from None
        except (TypeError, ValueError, ArithmeticError) as err:
            # A value of the wrong type or range (gib_per_rank: lots, cube: 0) breaks the
            # rule's arithmetic: name the input, not the rule's line.
            raise WorkloadError(f"{self.key} input {inp} is not usable "
                                f"({err})", field=field, fix=INPUT_FIX) from None
        if not (math.isfinite(value) and value >= 0):
            raise WorkloadError(f"{self.key} input {inp} gives a work of "
                                f"{value:g}", field=field, fix=INPUT_FIX)
        return value


def one(inp: dict[str, Any], ranks: int) -> float:
    """The measure of traffic that does not grow with the input."""
    return 1.0


def face(volume: float) -> float:
    """The area of one face of a cubic subdomain of ``volume``."""
    return volume ** (2 / 3)


# --- a simulated run --------------------------------------------------------------------------

def app_result(app: AppSpec, request: SimRequest, net: SimNetwork) -> AppResult:
    """The code's run on the request's input and the conf node's rates. The input is always
    explicit here (``t2hx simulate`` fills in the study's): the run cache keys on it, and
    the simulator never reads the study file."""
    from t2hx.flowsim import appmodel, apps

    if request.input is None:
        raise WorkloadError(f"{app.key}: no input", field="--input",
                            fix="give --input as a JSON object (t2hx simulate gives the "
                            "study's input by default)")
    inp = request.input
    opts = request.options
    return apps.run_app(net, app, opts.compute_scale, opts.iterations, inp,
                        appmodel.system_node(request.system))


def compute_scale_header(request: SimRequest) -> dict[str, object]:
    """A code's run depends on the compute scale: the header records it for post."""
    return {"compute_scale": request.options.compute_scale}


def fluid_job(app: AppSpec) -> Callable[..., Job]:
    """The code's job in the capacity mix: its model iterations, repeated."""
    def job(net: Network, ranks: np.ndarray, repeat: int, inp: dict | None,
            node: dict | None) -> Job:
        from t2hx.flowsim import apps

        return apps.app_job(net, app, ranks, repeat=repeat, inp=inp, node=node)
    return job


def app_workload(app: AppSpec, result: type[R], output: Callable[[AppResult, int], R],
                 render: Callable[[R], str], perturb: Callable[[R, float], R]) -> Workload:
    """A code's workload: its model run, printed the way the real code prints its metric
    (``output`` turns the run and its rank count into the typed numbers)."""
    def run(request: SimRequest, net: SimNetwork) -> R:
        return output(app_result(app, request, net), net.ranks)
    return Workload(result, run, render, perturb, header=compute_scale_header,
                    fluid_job=fluid_job(app), from_app=output)


# --- the proxy apps' metric: the solver walltime line -----------------------------------------

@dataclass(frozen=True)
class Walltime:
    seconds: float


def walltime(result: AppResult, ranks: int) -> Walltime:
    return Walltime(result.seconds)


def render_walltime(out: Walltime) -> str:
    return wire.walltime_line(out.seconds) + "\n"


def perturb_walltime(out: Walltime, f: float) -> Walltime:
    return Walltime(out.seconds * f)


def proxy_app(key: str, title: str, check: str, spack_spec: str, *, skeleton: Skeleton,
              work: Rule, measures: dict[str, Rule], local_binary: str,
              share: Rule | None = None, parser: str | None = None,
              markers: tuple[str, ...] = (), aliases: tuple[str, ...] = ()) -> Benchmark:
    """A proxy app of seed 000 §4.2: its walltime line is the metric, on real runs (our
    patches print it) and on the flow model."""
    app = AppSpec(key, skeleton, work, tuple(measures.items()), share_rule=share)
    return Benchmark(
        key, title, "app", check, parser or key, metric="solver_walltime", unit="s",
        spack_spec=spack_spec, markers=(wire.WALLTIME_MARKER, *markers),
        workload=app_workload(app, Walltime, walltime, render_walltime, perturb_walltime),
        sim_markers=(wire.WALLTIME_MARKER,), local_binary=local_binary, app=app,
        aliases=aliases)

