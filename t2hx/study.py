"""Load and validate a study description (``conf/studies/<name>.yaml``; docs/studies.md).

The study is data: combos, benchmarks with inputs per scale, node ladders, repetitions,
walltime, the capacity mix and named profiles (``quick``). The ReFrame checks in ``checks/``
take every parameter from here. A bad file raises ConfError with one line naming file, field
and fix, like :mod:`t2hx.conf`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from t2hx import ROOT, routing_engines
from t2hx.conf import ENGINES, System, load_system, system_path
from t2hx.errors import ConfError
from t2hx.schema import F, validate
from t2hx.simrequest import FLOW_MODEL, NETWORK_MODELS, PACKET_MODEL
from t2hx.textfile import load_yaml

STUDIES = ROOT / "conf" / "studies"
DEFAULT_STUDY = "hyperx-vs-fattree-sc19"     # seed 000's study, the default
DEFAULT = STUDIES / f"{DEFAULT_STUDY}.yaml"
PROFILE_ENV = "T2HX_STUDY_PROFILE"
STUDY_ENV = "T2HX_STUDY"                      # a study name (conf/studies/) or a file
PLACEMENTS = ("linear", "clustered", "random", "spread", "two-opt", "hierarchical", "ring",
              "circulant")
#: A refined placement keeps a base placement's nodes and re-places its ranks by two-opt
#: (seed 001 §3.3.2: job mapping, then rank placement) for one collective and objective:
#: ``<base>+two-opt-<objective>-<collective>``, e.g. ``random+two-opt-hops-alltoall``.
TWO_OPT_OBJECTIVES = ("hops", "contention")            # t2hx.placement.hostfiles.OBJECTIVES
TWO_OPT_COLLECTIVES = ("bcast", "allreduce", "alltoall")   # t2hx.placement.collective_messages
REFINED_RE = re.compile(r"^([a-z-]+)\+two-opt-([a-z]+)-([a-z]+)$")
#: ``<base>+cco``: the base's nodes in seed 001's Chain Concatenation Order (§2.4.2, the
#: thesis' competitor in §3.4.2), for no collective in particular.
CCO = "cco"
PLACEMENT_FIX = (f"one of {', '.join(PLACEMENTS)}, <base>+{CCO}, or "
                 "<base>+two-opt-<objective>-<collective>"
                 f" with objective {'|'.join(TWO_OPT_OBJECTIVES)} and collective "
                 f"{'|'.join(TWO_OPT_COLLECTIVES)}, e.g. random+two-opt-hops-alltoall")


def split_placement(name: str) -> tuple[str, tuple[str, str | None] | None]:
    """(base placement, (objective, collective) of its refinement or None); the CCO order is
    the objective ``cco`` for no collective. A name that is neither raises ValueError."""
    if name in PLACEMENTS:
        return name, None
    base, _, tail = name.partition("+")
    if tail == CCO and base in PLACEMENTS and base != "two-opt":
        return base, (CCO, None)
    m = REFINED_RE.match(name)
    if m and m[1] in PLACEMENTS and m[1] != "two-opt" and m[2] in TWO_OPT_OBJECTIVES \
            and m[3] in TWO_OPT_COLLECTIVES:
        return m[1], (m[2], m[3])
    raise ValueError(name)


def _placement(value: str) -> str | None:
    try:
        split_placement(value)
    except ValueError:
        return PLACEMENT_FIX
    return None
#: More repetitions than any study needs (seed 000 runs 10): a typo such as 1e9 is refused
#: instead of generating billions of cases.
MAX_REPETITIONS = 1000
DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


def _duration(value: str) -> str | None:
    return None if DURATION_RE.match(value) else "a duration such as 15m, 3h or 90s"


#: A campaign's name, the folder of its log under log/ (t2hx/reframe_site.py checks it too).
LOG_NAME_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def _log_name(value: str) -> str | None:
    return None if LOG_NAME_RE.match(value) else "a log name of letters, digits, '-' and '_'"


def _capacity_app(value: int | dict) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return None if value >= 1 else "a node count of at least 1"
    if isinstance(value, dict) and set(value) == {"benchmark", "nodes"} \
            and isinstance(value["benchmark"], str) and isinstance(value["nodes"], int) \
            and not isinstance(value["nodes"], bool) and value["nodes"] >= 1:
        return None
    return "a node count, or {benchmark: <name>, nodes: <count>}"


SCALE_KEY = re.compile(r"^x(\d+(?:\.\d+)?)$")      # a compute scale as a key: x2, x10, x2.5


def _scale_keys(value: dict) -> str | None:
    ok = all(SCALE_KEY.match(str(k)) for k in value)
    return None if ok else "compute scales as keys, x<scale>, e.g. {x2: 50s}"


def workload_window(spec: dict, compute_scale: float) -> float:
    """Simulated seconds of a workload at ``compute_scale``: its ``window_at`` entry, else
    ``window``."""
    at = {float(str(k).lstrip("x")): v for k, v in (spec.get("window_at") or {}).items()}
    return seconds(at.get(float(compute_scale), spec["window"]))


def seconds(duration: str) -> float:
    match = DURATION_RE.match(duration)
    assert match is not None, f"{duration!r} passed the schema's duration check"
    number, unit = match.groups()
    return float(number) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]


COMBO = {
    "name": F(str, required=True, doc="combo label, e.g. name: hx-parx-clustered"),
    "plane": F(str, required=True, doc="plane of the system, e.g. plane: hyperx"),
    "routing": F(str, required=True, choices=ENGINES),
    "placement": F(str, required=True, check=_placement),
    "system": F(str, default=None,
                doc="the conf system of this combo when a study compares systems (seed 003's "
                "fat-tree configurations), e.g. system: sc17-dr-hdr; default: any system"),
    "compute_scale": F((int, float), default=1.0, min=0,
                       doc="apps compute this many times faster (seed 003 §5.2: 2, 10, 25, 50); "
                       "0 = communication only (compute turned off, seed 003 §5.1)"),
    "background": F(str, default=None,
                    doc="a job file (from the checkout) of the other jobs running beside the "
                    "benchmark, which an engine reading job files routes for too (seed 004 "
                    "Fig 8 on a busy system; t2hx history background), e.g. background: "
                    "conf/traces/backgrounds/sc16-taurus-day30-1200.txt"),
}
SCALE = {
    "from": F(int, required=True, min=1, doc="node count from which the override applies"),
    "set": F(dict, required=True, doc="input parameters replaced at this scale"),
}
SCALINGS = ("weak", "strong")
BENCHMARK = {
    "title": F(str, default=""),
    "ladder": F(str, required=True, doc="a key of ladders:, e.g. ladder: pow2"),
    "variants": F(list, default=[], items=F(str),
                  doc="sub-benchmarks run as separate cases, e.g. IMB collectives"),
    "input": F(dict, default={}, doc="benchmark parameters, e.g. input: {cube: 128}"),
    "scale": F(list, default=[], items=SCALE),
    "scaling": F(str, default=None, choices=SCALINGS,
                 doc="the paper's input rule over node counts (seed 000 Table 2): weak = "
                 "the input per process is held, strong = one input split over the "
                 "processes; the app models follow it (tests/test_app_work_laws.py), "
                 "e.g. scaling: weak"),
    "exclude": F(list, default=[], items=F(int), doc="node counts of the ladder left out"),
    "combos": F(list, default=None, items=F(str),
                doc="only these combos (default: all), e.g. combos: [sr-edr-comm, dr-hdr-comm]"),
    "model": F(str, default=FLOW_MODEL, choices=NETWORK_MODELS,
               doc="network model of its simulated cases: flow (max-min, the default) or "
               "packet (docs/modelling.md#packet-engine), e.g. model: packet"),
    "nodes": F(list, default=None, items=F(int, min=1),
               doc="node counts of its ladder it runs at (default: all), e.g. nodes: [28]"),
    "packet_up_to": F(int, default=None, min=1,
                      doc="with model: packet, the flow model above this node count"),
    "draws": F(int, default=1, min=1, max=MAX_REPETITIONS,
               doc="mapping draws: its runs are one per draw of each combo's placement, "
               "repetition r on draw r (hostfiles <n>.r<r>.txt, draw 0 = <n>.txt) instead of "
               "`repetitions` runs on one hostfile, e.g. draws: 10 (seed 001's box plots)"),
    "ranks_per_node": F(int, default=None, min=1,
                        doc="ranks per node of its cases (default: the study's), e.g. "
                        "ranks_per_node: 1"),
    "ranks": F(int, default=None, min=1,
               doc="the job's processes, held over its ladder: each node count runs "
               "ranks / nodes per node (seed 003 §5.3's strong scaling, 16,384 processes "
               "on 256 and 1,024 nodes: 64 and 16 per node), e.g. ranks: 16384"),
    "figures": F(dict, default=None, values=F(list, items=F(str)),
                 doc="seed 001's collective-time figures: groups of its combos drawn "
                 "together, e.g. figures: {circ: [circ-random, circ-ring]} (default: one "
                 "group of all)"),
}
CAPACITY = {
    "window": F(str, default="3h", check=_duration),
    "repetitions": F(int, default=1, min=1, max=MAX_REPETITIONS),
    "apps": F(dict, required=True, values=F((int, dict), check=_capacity_app),
              doc="app: node count, e.g. apps: {amg: 56}; or app: {benchmark: B, nodes: N} "
              "to run a benchmark twice under two names, e.g. hpl-b: {benchmark: hpl, nodes: 2}"),
    "min_nodes": F(int, default=2, min=2,
                   doc="smallest node count of an app when the mix shrinks to a system"),
    "note": F(str, default="", doc="why this window (the report prints it)"),
}
WORKLOADS = {
    "combos": F(list, required=True, items=F(str), doc="combos the workloads run on"),
    "count": F(int, default=3, min=1, doc="randomly generated workloads (seed 003 §6: 3)"),
    "seed": F(int, default=0, min=0, doc="seed of the app draws and job placement"),
    "jobs": F(int, required=True, min=1, doc="jobs per workload (seed 003 §6: 17)"),
    "nodes_per_job": F(int, required=True, min=1, doc="nodes of each job (seed 003 §6: 256)"),
    "cluster": F(int, default=16, min=1, doc="nodes per cluster of the randomized-clusters "
                 "placement (t2hx/placement/jobs.py)"),
    "apps": F(list, required=True, items=F(str), doc="applications the jobs are drawn from"),
    # A case runs at its combo's compute_scale (seed 003 §6 runs 2x, then 10x for Figs 9-10):
    # this key, kept for study files that state it, may only restate the combos' one value.
    "compute_scale": F((int, float), min=0,
                       doc="the compute scaling every listed combo has (left out: each combo's)"),
    "window": F(str, default="10s", check=_duration, doc="simulated time per workload"),
    "window_at": F(dict, default={}, values=F(str, check=_duration), check=_scale_keys,
                   doc="the window at a compute scale, e.g. window_at: {x2: 50s} (slower steps "
                   "need a longer window to hold as many)"),
    "note": F(str, default="", doc="what the window leaves out (the report prints it)"),
}
#: How a trace without node lists gets nodes (t2hx/history/sampling.py, docs/history.md).
PLACEMENT_POLICIES = ("first-fit", "least-recent", "random")
HISTORIES = {
    "combos": F(list, required=True, items=F(str),
                doc="combos whose system and plane replay the history (routing: sar; the "
                "replay compares it with updn, ftree and dfsssp)"),
    "trace": F(str, required=True, doc="job trace, relative to the repository, e.g. "
               "trace: conf/traces/LLNL-Atlas-2006-2.1-cln.swf.gz (docs/history.md)"),
    "interval": F(str, default="10m", check=_duration, doc="sampling interval (§4.2: 10m)"),
    "first_day": F(int, default=0, min=0, doc="days of the trace skipped before the replay"),
    "days": F(int, default=1, min=1, max=3660, doc="days replayed, one case per day"),
    "placement": F(str, default="first-fit", choices=PLACEMENT_POLICIES,
                   doc="how a trace without node lists gets nodes (docs/history.md#placement)"),
    "note": F(str, default="", doc="what the replay stands for (the report prints it)"),
}
NETWORK_KINDS = ("random-shortcut", "circulant", "dragonfly")  # t2hx.placement.network_analysis
NETWORKS = {
    "kinds": F(list, default=list(NETWORK_KINDS), items=F(str, choices=NETWORK_KINDS),
               doc="generated networks analysed (seed 001 Ch. 5)"),
    "switches": F(list, required=True, items=F(int, min=4),
                  doc="network sizes, powers of two (degree 2·log2 N − 1), e.g. [16, 32, 64]"),
    "seed": F(int, default=1, min=0, doc="seed of the random shortcuts and mappings"),
    "iterations": F(int, default=200_000, min=0, doc="two-opt swap trials (§5.2.1: 200,000)"),
    "two_opt_up_to": F(int, default=1024, min=1,
                       doc="largest size whose collectives two-opt re-places"),
    "p2p_switches": F(int, default=1024, min=4, doc="Fig 5.12's network size"),
    "table_switches": F(int, default=1024, min=4, doc="Tables 3.4–3.6's network size"),
    "table_ranks": F(int, default=512, min=2, doc="Tables 3.4–3.6's ranks"),
    "table_iterations": F(int, default=200_000, min=0,
                          doc="two-opt swap trials of Tables 3.4–3.6 (§3.4.2: 200,000)"),
    "p2p_system": F(str, default="", doc="conf system whose model and link rate time the "
                    "point-to-point exchanges (Fig 5.13), e.g. thesis-rsn1024; empty: hops only"),
    "p2p_bytes": F(int, default=128, min=1, doc="bytes each way of one exchange (§5.3.2: 128)"),
    "annealing": F(dict, default=None, fields={
        "iterations": F(list, required=True, items=F(int, min=1, max=1_000_000),
                        doc="simulated annealing iterations compared (§3.5.1: 72, 1000, 10000)"),
        "degree": F(int, default=8, min=3, doc="degree of the random network (§3.5.2: 8)"),
        "two_opt_trials": F(int, default=5000, min=0, doc="two-opt's swaps (§3.5.1: 5,000)"),
        "up_to": F(int, default=4096, min=4, doc="largest network size compared"),
        "trials_up_to": F(int, default=1_000_000, min=1,
                          doc="an annealing run of more swap trials (iterations × N) is left "
                          "out")},
        doc="§3.5's two-opt against simulated annealing on random shortcut networks (Figs "
        "3.17, 3.18); absent: not run"),
    "note": F(str, default="", doc="what the sweep stands for (the report prints it)"),
}
FIGURE_SETS = ("capability", "configs", "histories")
# t2hx.flowsim.noise.MODELS (not imported: this module stays light)
NOISE_MODELS = ("none", "lognormal", "slowdown")
NOISE_GROUPS = ("network", "app", "x500")  # the registry's groups (t2hx/benchmarks/base.py)
NOISE = {
    "model": F(str, default="none", choices=NOISE_MODELS,
               doc="run-to-run noise of simulated repetitions (docs/modelling.md)"),
    "seed": F(int, default=0, min=0, doc="seed of the noise draws, e.g. seed: 2019"),
    "cv": F(dict, default={}, values=F((int, float), min=0, max=1),
            doc="coefficient of variation per registry group, e.g. cv: {network: 0.05}"),
    "source": F(str, default="", doc="where the cv values were measured"),
}
PROFILE = {
    "repetitions": F(int, default=None, min=1, max=MAX_REPETITIONS),
    "ladders": F(dict, default=None, values=F(list, items=F(int, min=1))),
    "benchmarks": F(list, default=None, items=F(str)),
    "variants": F(dict, default=None, values=F(list, items=F(str)),
                  doc="a subset of a benchmark's variants, e.g. variants: {imb: [Bcast]}"),
    "capacity": F(dict, default=None, fields={
        "window": F(str, default=None, check=_duration),
        "repetitions": F(int, default=None, min=1, max=MAX_REPETITIONS),
        "note": F(str, default=None, doc="why this window (the report prints it)")}),
    "noise": F(dict, default=None, fields={
        "model": F(str, default=None, choices=NOISE_MODELS),
        "seed": F(int, default=None, min=0)}),
    "combos": F(list, default=None, items=F(str), doc="a subset of the combos"),
    "inputs": F(dict, default=None, values=F(dict),
                doc="input keys set per benchmark, e.g. inputs: {ebb: {rounds: 100}}"),
    "models": F(dict, default=None, values=F(str, choices=NETWORK_MODELS),
                doc="network model per benchmark, e.g. models: {ebb: flow}"),
    "nodes": F(dict, default=None, values=F(list, items=F(int, min=1)),
               doc="node counts per benchmark, a subset of its ladder, e.g. nodes: {mpigraph: [28]}"),
    "draws": F(dict, default=None, values=F(int, min=1, max=MAX_REPETITIONS),
               doc="mapping draws per benchmark, e.g. draws: {npb-ft: 10}"),
    "packet_up_to": F(int, default=None, min=1,
                      doc="packet-engine benchmarks run on the flow engine above this node count"),
    "ranks_per_node": F(int, default=None, min=1,
                        doc="the study's ranks per node in this profile (a benchmark's own "
                        "ranks_per_node stays; its ranks give way), e.g. ranks_per_node: 1"),
    "workloads": F(dict, default={}, fields={
        "count": F(int, default=None, min=1),
        "window": F(str, default=None, check=_duration),
        "window_at": F(dict, default=None, values=F(str, check=_duration), check=_scale_keys),
        "note": F(str, default=None)}),
    "networks": F(dict, default={}, fields={
        "switches": F(list, default=None, items=F(int, min=4)),
        "iterations": F(int, default=None, min=0),
        "note": F(str, default=None)}),
    "histories": F(dict, default={}, fields={
        "first_day": F(int, default=None, min=0),
        "days": F(int, default=None, min=1, max=3660),
        "placement": F(str, default=None, choices=PLACEMENT_POLICIES),
        "note": F(str, default=None)}),
}
EXTRA_COMBO = {**COMBO, "only": F(dict, required=True, values=F(list, items=F(int, min=1)),
                                   doc="benchmark: node counts, e.g. only: {mpigraph: [28]}")}
STUDY = {
    "name": F(str, required=True),
    "system": F(str, required=True, doc="conf/systems/<name>.yaml the study was written for"),
    "baseline": F(str, required=True, doc="combo name gains are relative to"),
    "combos": F(list, required=True, items=COMBO),
    "extra_combos": F(list, default=[], items=EXTRA_COMBO,
                      doc="combos outside the grid, run only for some benchmarks and node counts"),
    "ladders": F(dict, required=True, values=F(list, items=F(int, min=1))),
    "repetitions": F(int, default=10, min=1, max=MAX_REPETITIONS),
    "walltime": F(str, default="15m", check=_duration),
    "ranks_per_node": F(int, default=1, min=1),
    "reroute_engines": F(list, default=list(routing_engines.input_aware()),
                         items=F(str, choices=ENGINES)),
    "benchmarks": F(dict, required=True, values=BENCHMARK),
    "capacity": F(dict, default={}, fields=CAPACITY,
                  doc="seed 000's capacity mix (a study without one has no capacity runs)"),
    "workloads": F(dict, default={}, fields=WORKLOADS,
                   doc="seed 003's multi-job workloads (checks/workload.py)"),
    "histories": F(dict, default={}, fields=HISTORIES,
                   doc="seed 004's job-history replay (checks/history.py)"),
    "networks": F(dict, default={}, fields=NETWORKS,
                  doc="seed 001's analysis of generated networks (checks/network.py)"),
    "figures": F(str, default="capability", choices=FIGURE_SETS,
                 doc="the figure set replay draws: capability (seed 000) or configs "
                 "(seed 003's fat-tree configurations)"),
    "local": F(dict, default=None, fields={
        "nodes": F(list, default=[2], items=F(int, min=1)),
        "repetitions": F(int, default=1, min=1, max=MAX_REPETITIONS),
        "input": F(dict, default={}, values=F(dict),
                   doc="per-benchmark input overrides for this small machine")}),
    "noise": F(dict, default=None, fields=NOISE),
    "profiles": F(dict, default={}, values=PROFILE),
    # Where run/reproduce writes a profile's campaign unless --campaign names one: the
    # committed logs. Not a setting of the runs (t2hx/post/freshness.py leaves it out).
    "logs": F(dict, default={}, values=F(str, check=_log_name),
              doc="the log (log/<name>) run/reproduce writes each profile to by default, "
              "e.g. logs: {quick: shortcut-npb}"),
}


@dataclass(frozen=True)
class Combo:
    name: str
    plane: str
    routing: str
    placement: str
    only: dict | None = None       # extra combos: {benchmark: [node counts]} they run for
    system: str | None = None      # None: the combo runs on any conf system with the plane
    compute_scale: float = 1.0     # 0: communication only
    background: str | None = None  # job file of the other running jobs (from the checkout)

    @property
    def partition(self) -> str:
        """The ReFrame valid_systems expression of the sim/real partitions this combo runs on
        (extras and features of t2hx.reframe_site): the plane, and a plane whose conf lists
        the combo's engine in ``opensm.routing`` (a port without PARX never runs PARX)."""
        where = f"%plane={self.plane} +{routing_feature(self.routing)}"
        if self.system:
            where += f" %conf_system={self.system}"
        # Scaled compute is a what-if of the model: no real machine can run it.
        return where if self.compute_scale == 1 else f"+sim {where}"

    def runs(self, bench: str, nodes: int) -> bool:
        return self.only is None or nodes in self.only.get(bench, [])


def hostfile_name(nodes: int, draw: int = 0) -> str:
    """A hostfile of a placement directory: ``<n>.txt``, or ``<n>.r<k>.txt`` for mapping draw
    ``k`` of a benchmark with ``draws`` (t2hx/placement/hostfiles.py writes them)."""
    return f"{nodes}.txt" if draw == 0 else f"{nodes}.r{draw}.txt"


def routing_feature(engine: str) -> str:
    """The ReFrame partition feature of a plane that routes with ``engine`` (one per entry of
    its conf's ``opensm.routing``; t2hx.reframe_site.site_configuration)."""
    return f"routing_{engine}"


def cannot_run(plane: str, routing: str, system: System) -> str | None:
    """Why ``system`` cannot run a combo of ``plane`` and ``routing`` (None: it can)."""
    if plane not in system.planes:
        return f"no plane {plane}"
    engines = system.planes[plane].opensm["routing"]
    if routing not in engines:
        return f"plane {plane} routes {', '.join(engines)} (opensm.routing), not {routing}"
    return None


def usable_count(system: System) -> int:
    return system.nodes["racks"] * system.nodes["per_rack"] - len(system.nodes["down"])


@dataclass
class Study:
    path: Path
    profile: str
    name: str
    system: str
    baseline: str
    combos: list[Combo]
    ladders: dict[str, list[int]]
    repetitions: int
    walltime: str
    ranks_per_node: int
    reroute_engines: list[str]
    benchmarks: dict[str, dict]
    capacity: dict
    local: dict
    catalog: dict[str, dict]     # every benchmark of the file (capacity apps, any profile)
    noise: dict                  # model, seed, cv per registry group, source
    extra_combos: list[Combo] = field(default_factory=list)   # e.g. seed 000 Fig 1's PARX
    workloads: dict | None = None   # seed 003's multi-job workloads (checks/workload.py)
    figures: str = "capability"     # the figure set replay draws (FIGURE_SETS)
    histories: dict | None = None   # seed 004's job-history replay (checks/history.py)
    networks: dict | None = None    # seed 001's generated networks (checks/network.py)
    logs: dict[str, str] = field(default_factory=dict)   # profile -> its default log name

    def all_combos(self) -> list[Combo]:
        return [*self.combos, *self.extra_combos]

    def systems(self) -> list[str]:
        """The conf systems the combos name (empty: the study runs on any system)."""
        return list(dict.fromkeys(c.system for c in self.all_combos() if c.system))

    def own_systems(self) -> list[str]:
        """The systems this study was written for: its ``system:`` and those its combos name
        (what ``--system sim`` simulates, and where its seed's claims are scored)."""
        return list(dict.fromkeys([self.system, *self.systems()]))

    def noise_of(self, group: str) -> tuple[str, float, int]:
        """(model, cv, seed) of a registry group's simulated repetitions."""
        cv = float(self.noise["cv"].get(group, 0.0))
        return (self.noise["model"] if cv > 0 else "none"), cv, self.noise["seed"]

    def combo(self, name: str) -> Combo:
        for combo in self.all_combos():
            if combo.name == name:
                return combo
        raise ConfError(f"no combo '{name}'", file=self.path, field="combos",
                        fix="use one of: " + ", ".join(c.name for c in self.all_combos()))

    def benchmark(self, name: str) -> dict:
        if name not in self.benchmarks:
            raise ConfError(f"no benchmark '{name}' in profile '{self.profile}'", file=self.path,
                            field="benchmarks", fix="use one of: " + ", ".join(self.benchmarks))
        return self.benchmarks[name]

    def nodes(self, name: str) -> list[int]:
        """The node ladder of a benchmark (before clipping to a system's size)."""
        return _rungs({"ladders": self.ladders}, self.catalog[name])

    def variants(self, name: str) -> list[str]:
        return list(self.benchmarks.get(name, self.catalog[name])["variants"]) or [""]

    def model(self, name: str, nodes: int | None = None) -> str:
        """The network model a benchmark's simulated cases run on (``model:``; the flow
        model above ``packet_up_to`` nodes, where the packet model's cost outgrows the run)."""
        bench = self.catalog[name]
        limit = bench["packet_up_to"]
        if bench["model"] == PACKET_MODEL and nodes is not None and limit is not None \
                and nodes > limit:
            return FLOW_MODEL
        return bench["model"]

    def ranks_per_node_of(self, name: str, nodes: int | None = None) -> int:
        """Ranks per node of a benchmark's cases at ``nodes`` nodes: its ``ranks`` over
        them, else its own ``ranks_per_node``, else the study's. Without ``nodes`` (a job
        of a workload, which holds no process count) the latter two."""
        bench = self.catalog[name]
        if bench.get("ranks") and nodes:
            return bench["ranks"] // nodes
        return bench["ranks_per_node"] or self.ranks_per_node

    def input(self, name: str, nodes: int) -> dict:
        """The benchmark's input at this node count (scale overrides applied in order)."""
        bench = self.catalog[name]
        out = dict(bench["input"])
        for rule in sorted(bench["scale"], key=lambda r: r["from"]):
            if nodes >= rule["from"]:
                out.update(rule["set"])
        return out

    def cases(self, name: str, max_nodes: int | None = None,
              combos: list[Combo] | None = None) -> int:
        """How many capability test cases this benchmark has on a system of max_nodes (on
        ``combos`` only, when given: those a system can run, :meth:`cases_on`)."""
        combos = self.all_combos() if combos is None else combos
        ladder = [n for n in self.nodes(name) if max_nodes is None or n <= max_nodes]
        extra = sum(1 for c in combos if c.only is not None for n in c.only.get(name, [])
                    if max_nodes is None or n <= max_nodes)
        grid = len([c for c in combos if c.only is None and self.runs_on(name, c.name)])
        return len(self.variants(name)) * (grid * len(ladder) + extra) * self.runs_of(name)

    def runs_of(self, name: str) -> int:
        """Runs per case: one per mapping draw for a benchmark with ``draws`` above one (each
        on its own hostfile), else the study's ``repetitions`` (on one hostfile)."""
        draws = self.draws(name)
        return draws if draws > 1 else self.repetitions

    def draws(self, name: str) -> int:
        """A benchmark's mapping draws (``draws:``, as its profile sets it; 1: none)."""
        bench = self.benchmarks.get(name) or self.catalog.get(name) or {}
        return int(bench.get("draws", 1))

    def draws_at(self, system: str, placement: str, nodes: int) -> int:
        """Hostfile draws of a placement at a node count: the most any benchmark that runs
        there on a combo of ``system`` with that placement asks for (1: one hostfile)."""
        return max([self.draws(b) for b in self.benchmarks
                    if nodes in self.nodes(b)
                    for c in self.all_combos()
                    if c.system in (None, system) and c.placement == placement
                    and (self.runs_on(b, c.name) if c.only is None else c.runs(b, nodes))],
                   default=1)

    def runs_on(self, name: str, combo: str) -> bool:
        """Whether a benchmark runs on a grid combo (its ``combos:`` subset, if any)."""
        subset = self.catalog[name].get("combos")
        return subset is None or combo in subset

    def all_cases(self, max_nodes: int | None = None) -> int:
        capacity = len(self.combos) * self.capacity["repetitions"] if \
            self.capacity["apps"] else 0
        workloads = len([c for c in self.combos if c.name in self.workloads["combos"]]) * \
            self.workloads["count"] if self.workloads else 0
        return sum(self.cases(b, max_nodes) for b in self.benchmarks) + capacity + workloads \
            + self.history_cases() + self.network_cases()

    def network_cases(self) -> int:
        n = self.networks
        return len(n["kinds"]) * len(n["switches"]) if n else 0

    def needs_hostfiles(self, system: str) -> bool:
        """Whether ``system`` runs placed cases, which read hostfiles: a benchmark of a combo
        it can run, capacity or workloads. A job-history replay places the trace's own jobs."""
        if self.capacity["apps"] or self.workloads:
            return True
        placed = {name for b in self.benchmarks.values()
                  for name in (b["combos"] or [c.name for c in self.all_combos()])}
        return any(c.name in placed and c.system in (None, system) for c in self.all_combos())

    def history_cases(self) -> int:
        h = self.histories
        return len([c for c in self.combos if c.name in h["combos"]]) * h["days"] if h else 0

    def left_out(self, system: System) -> dict[str, str]:
        """Combos of this study that ``system`` cannot run, with the reason: a plane it lacks,
        or an engine its plane's ``opensm.routing`` does not list. Combos written for another
        system (``system:``) are not listed: they never were this system's."""
        out = {}
        for combo in self.all_combos():
            if combo.system and combo.system != system.name:
                continue
            reason = cannot_run(combo.plane, combo.routing, system)
            if reason:
                out[combo.name] = reason
        return out

    def combos_on(self, system: System, simulated: bool = True) -> list[Combo]:
        """The combos (grid and extra) ``system`` runs: its own or any-system combos on a
        plane it has with an engine that plane lists; real systems run compute scale 1 only."""
        skip = self.left_out(system)
        return [c for c in self.all_combos() if c.name not in skip
                and c.system in (None, system.name)
                and (simulated or c.compute_scale == 1)]

    def cases_on(self, system: System, simulated: bool = True) -> int:
        """Every case a campaign runs on ``system`` (what `t2hx campaign status` expects and a
        dry run generates): its combos (:meth:`combos_on`), ladders clipped to its usable
        nodes, capacity and workloads when they fit it."""
        usable = usable_count(system)
        combos = self.combos_on(system, simulated)
        grid = [c for c in combos if c.only is None]
        count = sum(self.cases(b, usable, combos) for b in self.benchmarks)
        if self.capacity["apps"] and self.capacity_nodes(usable) <= usable:
            count += len(grid) * self.capacity["repetitions"]
        if self.workloads and simulated and \
                self.workloads["jobs"] * self.workloads["nodes_per_job"] <= usable:
            count += len([c for c in grid if c.name in self.workloads["combos"]]) * \
                self.workloads["count"]
        if self.histories and simulated:
            count += len([c for c in grid if c.name in self.histories["combos"]]) * \
                self.histories["days"]
        if self.networks and simulated and system.name == self.system:
            count += self.network_cases()
        return count

    def node_counts(self, limit: int | None = None) -> list[int]:
        """Every node count of every ladder (hostfiles exist for these), up to ``limit``."""
        return sorted({n for ladder in self.ladders.values() for n in ladder
                       if limit is None or n <= limit})

    def placements(self, system: str | None = None) -> list[str]:
        """The placements the combos use, in combo order; given ``system``, those of the
        combos it runs (its own and the any-system ones)."""
        return list(dict.fromkeys(c.placement for c in self.combos
                                  if system is None or c.system in (None, system)))

    def capacity_nodes(self, usable: int | None = None) -> int:
        return sum(self.capacity_apps(usable).values())

    def capacity_apps(self, usable: int | None = None) -> dict[str, int]:
        """The capacity mix on a system with ``usable`` nodes (docs/modelling.md, capacity).

        The study's node counts when they fit; otherwise every count scaled by
        usable / (the mix's nodes), rounded down to a power of two for apps on a pow2
        ladder and to an even count for the rest (MuPP pairs ranks), never below
        ``min_nodes``. Same apps, same order, so a port runs capacity unedited."""
        apps = self.capacity["apps"]
        total = sum(apps.values())
        if usable is None or usable >= total:
            return dict(apps)
        factor = usable / total
        low = self.capacity.get("min_nodes", 2)
        return {app: max(low, _round_to_ladder(int(n * factor),
                                               self._pow2(app))) for app, n in apps.items()}

    def capacity_benchmark(self, app: str) -> str:
        """The benchmark a capacity app runs (the app's own name unless the mix names one)."""
        return self.capacity.get("benchmarks", {}).get(app, app)

    def _pow2(self, app: str) -> bool:
        ladder = self.ladders[self.catalog[self.capacity_benchmark(app)]["ladder"]]
        return all(n & (n - 1) == 0 for n in ladder)


def _round_to_ladder(n: int, pow2: bool) -> int:
    if n < 1:
        return 0
    return 1 << (n.bit_length() - 1) if pow2 else n - n % 2


def study_names() -> list[str]:
    return sorted(p.stem for p in STUDIES.glob("*.yaml"))


def study_path(name: str | None = None) -> Path:
    """The file of a study: ``name`` (or $T2HX_STUDY) is a name under conf/studies/ or a
    path; neither given: the default study."""
    value = name or os.environ.get(STUDY_ENV) or DEFAULT_STUDY
    path = Path(value)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return path
    if (STUDIES / f"{value}.yaml").is_file():
        return STUDIES / f"{value}.yaml"
    raise ConfError(f"no study '{value}'", file=STUDIES, field=STUDY_ENV if not name else
                    "--study", fix="use one of: " + ", ".join(study_names()))


def load_study(path: str | Path | None = None, profile: str | None = None) -> Study:
    """Load a study; ``profile`` (or $T2HX_STUDY_PROFILE) selects a named subset."""
    named = path is not None
    path = study_path(str(path) if path else None)
    env_profile = os.environ.get(PROFILE_ENV) or None
    profile = profile or env_profile or "full"
    raw, _ = load_yaml(path, ConfError, "study file",
                       f"give a study name ({', '.join(study_names())}) or its file")
    data = validate(raw, STUDY, path)
    if not named:       # the study the environment selects: its profile must exist too
        _check_env_profile(data, env_profile, path)
    _check_ladders(data, path)
    if path.resolve().parent == STUDIES.resolve() and data["name"] != path.stem:
        raise ConfError(f"name '{data['name']}' differs from the file name", file=path,
                        field="name", fix=f"set name: {path.stem} (logs record the name)")
    data["capacity"] = _capacity(data["capacity"] or dict(NO_CAPACITY))
    if profile != "full":       # before the catalog: a profile's inputs hold everywhere
        data = _profile_benchmarks(data, profile, path)
    catalog = data["benchmarks"]
    if profile != "full":
        data = _apply_profile(data, profile, path)
    _check(data, catalog, path)
    _check_on_system(data, path)
    _check_logs(data, path)
    _check_backgrounds(data, path)
    combos = [Combo(**c) for c in data["combos"]]
    _local_nodes_override(data, path)
    return Study(path, profile, data["name"], data["system"], data["baseline"], combos,
                 data["ladders"], data["repetitions"], data["walltime"], data["ranks_per_node"],
                 data["reroute_engines"], data["benchmarks"], data["capacity"],
                 data["local"] or {"nodes": [2], "repetitions": 1, "input": {}}, catalog,
                 data["noise"] or {"model": "none", "seed": 0, "cv": {}, "source": ""},
                 [Combo(**c) for c in data["extra_combos"]], data["workloads"] or None,
                 data["figures"], data["histories"] or None, data["networks"] or None,
                 data["logs"])


def _check_backgrounds(data: dict, path: Path) -> None:
    """A combo's background is a job file an engine that reads job files routes for."""
    for k, combo in enumerate(data["combos"] + data["extra_combos"]):
        where = f"combos[{k}].background" if k < len(data["combos"]) else \
            f"extra_combos[{k - len(data['combos'])}].background"
        if combo.get("background") is None:
            continue
        if routing_engines.routing_engine(combo["routing"]).reads != routing_engines.JOBS:
            raise ConfError(f"combo '{combo['name']}' routes with {combo['routing']}, which "
                            "reads no job file", file=path, field=where,
                            fix="give a background only to a combo routed by " +
                            "/".join(routing_engines.reading(routing_engines.JOBS)))
        if not (ROOT / combo["background"]).is_file():
            raise ConfError(f"no job file {combo['background']}", file=path, field=where,
                            fix="write it with t2hx history background (a path from the "
                            "checkout)")


def _check_logs(data: dict, path: Path) -> None:
    """Each ``logs:`` key names a profile (or ``full``): a typo would send a run elsewhere."""
    known = ["full", *(data["profiles"] or {})]
    for name in data["logs"]:
        if name not in known:
            raise ConfError(f"unknown profile '{name}'", file=path, field=f"logs.{name}",
                            fix="use one of: " + ", ".join(known))


def _capacity(spec: dict) -> dict:
    """apps as node counts, and each app's benchmark (its own name unless it names one)."""
    apps = spec["apps"]
    return {**spec, "apps": {a: v if isinstance(v, int) else v["nodes"] for a, v in apps.items()},
            "benchmarks": {a: v["benchmark"] if isinstance(v, dict) else a
                           for a, v in apps.items()}}


#: A study without a capacity mix (seed 003 has none): no capacity cases.
NO_CAPACITY = {"window": "3h", "repetitions": 1, "apps": {}, "min_nodes": 2, "note": ""}
LOCAL_NODES_ENV = "T2HX_LOCAL_NODES"


def _local_nodes_override(data: dict, path: Path) -> None:
    """``$T2HX_LOCAL_NODES`` (e.g. ``1,2,4``) replaces ``local.nodes``: `t2hx calibrate` runs
    the local checks at several rank counts without editing the study."""
    text = os.environ.get(LOCAL_NODES_ENV, "").strip()
    if not text:
        return
    try:
        nodes = sorted({int(v) for v in text.split(",")})
    except ValueError:
        nodes = []
    if not nodes or nodes[0] < 1:
        raise ConfError(f"{LOCAL_NODES_ENV}={text!r} is not a list of rank counts", file=path,
                        field="local.nodes", fix=f"set {LOCAL_NODES_ENV} like 1,2,4 or unset it")
    data["local"] = dict(data["local"] or {"repetitions": 1, "input": {}}, nodes=nodes)


def _profile(data: dict, profile: str, path: Path) -> dict:
    if profile not in data["profiles"]:
        raise ConfError(f"no profile '{profile}'", file=path, field="profiles",
                        fix=f"set {PROFILE_ENV} to full or one of: "
                        + ", ".join(data["profiles"]))
    return data["profiles"][profile]


def _profile_benchmarks(data: dict, profile: str, path: Path) -> dict:
    """A profile's ``inputs:`` and ``models:`` set into its benchmarks' entries."""
    prof = _profile(data, profile, path)
    benches = dict(data["benchmarks"])
    for key, what in (("inputs", "input"), ("models", "model"), ("nodes", "nodes"),
                      ("draws", "draws")):
        for name, value in (prof[key] or {}).items():
            if name not in benches:
                raise ConfError(f"unknown benchmark '{name}'", file=path,
                                field=f"profiles.{profile}.{key}.{name}",
                                fix="use names of benchmarks: " + ", ".join(benches))
            new = {**benches[name][what], **value} if what == "input" else value
            benches[name] = {**benches[name], what: new}
    if prof["ranks_per_node"] is not None:
        # A profile that asks N per node runs every benchmark so that has no count of its
        # own: a process count held over the ladder would ask another per node at each rung.
        benches = {name: {**b, "ranks": None} for name, b in benches.items()}
    if prof["packet_up_to"] is not None:
        benches = {name: {**b, "packet_up_to": prof["packet_up_to"]}
                   if b["model"] == PACKET_MODEL else b for name, b in benches.items()}
    return {**data, "benchmarks": benches}


def _apply_profile(data: dict, profile: str, path: Path) -> dict:
    prof = _profile(data, profile, path)
    data = dict(data)
    if prof["repetitions"] is not None:
        data["repetitions"] = prof["repetitions"]
    if prof["ranks_per_node"] is not None:
        data["ranks_per_node"] = prof["ranks_per_node"]
    if prof["ladders"] is not None:
        unknown = [name for name in prof["ladders"] if name not in data["ladders"]]
        if unknown:       # a typo would add an unused ladder and run the full one
            raise ConfError(f"unknown ladder '{unknown[0]}'", file=path,
                            field=f"profiles.{profile}.ladders.{unknown[0]}",
                            fix="use one of: " + ", ".join(data["ladders"]))
        data["ladders"] = {**data["ladders"], **prof["ladders"]}
    if prof["benchmarks"] is not None:
        unknown = [b for b in prof["benchmarks"] if b not in data["benchmarks"]]
        if unknown:
            raise ConfError(f"unknown benchmark '{unknown[0]}'", file=path,
                            field=f"profiles.{profile}.benchmarks",
                            fix="use names of benchmarks:")
        data["benchmarks"] = {b: data["benchmarks"][b] for b in prof["benchmarks"]}
    for name, subset in (prof["variants"] or {}).items():
        field = f"profiles.{profile}.variants.{name}"
        if name not in data["benchmarks"]:
            raise ConfError(f"benchmark '{name}' is not in the profile", file=path, field=field,
                            fix="list it under benchmarks: or drop it here")
        known = data["benchmarks"][name]["variants"]
        bad = [v for v in subset if v not in known]
        if bad or not subset:
            raise ConfError(f"unknown variant '{bad[0]}'" if bad else "no variants", file=path,
                            field=field, fix="use some of: " + ", ".join(known))
        data["benchmarks"] = {**data["benchmarks"],
                              name: {**data["benchmarks"][name], "variants": list(subset)}}
    if prof["capacity"] is not None:
        data["capacity"] = {**data["capacity"],
                            **{k: v for k, v in prof["capacity"].items() if v is not None}}
    if prof["combos"] is not None:
        known = {c["name"]: c for c in data["combos"]}
        bad = [c for c in prof["combos"] if c not in known]
        if bad:
            raise ConfError(f"unknown combo '{bad[0]}'", file=path,
                            field=f"profiles.{profile}.combos", fix="use names of combos:")
        data["combos"] = [known[c] for c in prof["combos"]]
    if prof["workloads"] and data["workloads"]:
        data["workloads"] = {**data["workloads"],
                             **{k: v for k, v in prof["workloads"].items() if v is not None}}
    if prof["histories"] and data["histories"]:
        data["histories"] = {**data["histories"],
                             **{k: v for k, v in prof["histories"].items() if v is not None}}
    if prof["networks"] and data["networks"]:
        data["networks"] = {**data["networks"],
                            **{k: v for k, v in prof["networks"].items() if v is not None}}
    if prof["noise"] is not None:
        data["noise"] = {**data["noise"],
                         **{k: v for k, v in prof["noise"].items() if v is not None}}
    return data


def _check_ranks(data: dict, catalog: dict, path: Path) -> None:
    """A process count held over a ladder is a whole number per node at every rung, and
    says what ``ranks_per_node`` would say otherwise: both would be two answers."""
    for name, bench in catalog.items():
        if not bench.get("ranks"):
            continue
        field = f"benchmarks.{name}.ranks"
        if bench["ranks_per_node"]:
            raise ConfError("both ranks and ranks_per_node", file=path, field=field,
                            fix="keep one: ranks holds the processes, ranks_per_node the "
                            "per-node count")
        off = [n for n in _rungs(data, bench) if bench["ranks"] % n]
        if off:
            raise ConfError(f"{bench['ranks']} processes on {off[0]} nodes are not a whole "
                            "number per node", file=path, field=field,
                            fix=f"use a multiple of every node count it runs at "
                            f"(ladders.{bench['ladder']})")


def _rungs(data: dict, bench: dict) -> list[int]:
    """The node counts of a benchmark's ladder it runs at (its ``exclude`` and ``nodes``)."""
    return [n for n in data["ladders"][bench["ladder"]] if n not in bench["exclude"]
            and (bench["nodes"] is None or n in bench["nodes"])]


def _check(data: dict, catalog: dict, path: Path) -> None:
    names = [c["name"] for c in data["combos"] + data["extra_combos"]]
    if len(set(names)) != len(names):
        raise ConfError("combo names repeat", file=path, field="combos", fix="give unique names")
    if data["baseline"] not in names:
        raise ConfError(f"baseline '{data['baseline']}' is not a combo", file=path,
                        field="baseline", fix="use one of: " + ", ".join(names))
    # The catalog, not only the profile's benchmarks: capacity apps outside the profile
    # still look their ladder up.
    for name, bench in catalog.items():
        if bench["ladder"] not in data["ladders"]:
            raise ConfError(f"unknown ladder '{bench['ladder']}'", file=path,
                            field=f"benchmarks.{name}.ladder",
                            fix="use one of: " + ", ".join(data["ladders"]))
        off = [n for n in bench["nodes"] or [] if n not in data["ladders"][bench["ladder"]]]
        if off:       # a count off the ladder would silently run nothing
            raise ConfError(f"{off[0]} nodes are not on the '{bench['ladder']}' ladder",
                            file=path, field=f"benchmarks.{name}.nodes",
                            fix="use counts of ladders." + bench["ladder"])
        if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):
            raise ConfError("benchmark names are lower-case words and dashes", file=path,
                            field=f"benchmarks.{name}", fix="rename it, e.g. ring-allreduce")
    _check_noise(data["noise"], path)
    _check_ranks(data, catalog, path)
    for name, bench in catalog.items():
        bad = [c for c in bench["combos"] or [] if c not in names]
        if bad:
            raise ConfError(f"unknown combo '{bad[0]}'", file=path,
                            field=f"benchmarks.{name}.combos", fix="use names of combos:")
        for group, members in (bench.get("figures") or {}).items():
            ran = bench["combos"] or names
            bad = [c for c in members if c not in ran]
            if bad or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", group):
                raise ConfError(f"figure group '{group}' " + (f"names '{bad[0]}', not a combo "
                                "of the benchmark" if bad else "is not a lower-case word"),
                                file=path, field=f"benchmarks.{name}.figures.{group}",
                                fix="name combos of its combos: list under a word, e.g. "
                                "circ: [circ-random]")
    _check_extra_only(data["extra_combos"], catalog, path)
    _check_workloads(data["workloads"], data["combos"] + data["extra_combos"], catalog, path)
    _check_histories(data["histories"], data["combos"], path)
    _check_networks(data["networks"], path)
    for app, bench in data["capacity"]["benchmarks"].items():
        if bench not in catalog:
            raise ConfError(f"capacity app '{app}' runs '{bench}', which is not a benchmark",
                            file=path, field=f"capacity.apps.{app}",
                            fix="use names of benchmarks: (or {benchmark: <name>, nodes: N})")


def _check_env_profile(data: dict, env: str | None, path: Path) -> None:
    """A typo in $T2HX_STUDY_PROFILE is refused by every command, also those that always
    read the full study (``t2hx hostfiles``), instead of running the full study."""
    if env and env != "full" and env not in data["profiles"]:
        raise ConfError(f"{PROFILE_ENV}={env!r} is not a profile of this study", file=path,
                        field="profiles", fix=f"set {PROFILE_ENV} to full or one of: "
                        + ", ".join(data["profiles"]) + ", or unset it")


def _check_ladders(data: dict, path: Path) -> None:
    """Ladders climb: a repeated rung runs its cases twice under one name, and the figures
    and hostfiles assume increasing node counts."""
    ladders = [(f"ladders.{n}", rungs) for n, rungs in data["ladders"].items()]
    ladders += [(f"profiles.{p}.ladders.{n}", rungs) for p, prof in data["profiles"].items()
                for n, rungs in (prof["ladders"] or {}).items()]
    for where, rungs in ladders:
        for low, high in zip(rungs, rungs[1:]):
            if high <= low:
                what = "repeats" if high == low else f"comes after {low}"
                raise ConfError(f"node count {high} {what}", file=path, field=where,
                                fix="list each count once, smallest first: "
                                f"{sorted(set(rungs))}")


def _check_extra_only(extra: list[dict], catalog: dict, path: Path) -> None:
    """An extra combo's cases are named by benchmark: a misspelt one would vanish."""
    for k, combo in enumerate(extra):
        bad = [b for b in combo["only"] if b not in catalog]
        if bad:
            raise ConfError(f"unknown benchmark '{bad[0]}'", file=path,
                            field=f"extra_combos[{k}].only.{bad[0]}",
                            fix="use names of benchmarks: " + ", ".join(catalog))


def _check_on_system(data: dict, path: Path) -> None:
    """What the study asks of the systems it was written for (when their confs are at
    hand): its ranks fit a node's cores, and the baseline combo runs on its system."""
    file = system_path(data["system"])
    if file.is_file():
        system = load_system(file)
        cores = system.nodes["cores"]
        asked = [("ranks_per_node", data["ranks_per_node"])] + [
            (f"benchmarks.{name}.ranks_per_node", b["ranks_per_node"])
            for name, b in data["benchmarks"].items() if b["ranks_per_node"]] + [
            (f"benchmarks.{name}.ranks", b["ranks"] // n)
            for name, b in data["benchmarks"].items() if b.get("ranks")
            for n in _rungs(data, b)]
        for field, rpn in asked:
            if rpn > cores:
                raise ConfError(f"{rpn} ranks per node, but a node of {system.name} has "
                                f"{cores} cores", file=path, field=field,
                                fix=f"use at most {cores}, or set nodes.cores in {file}")
    base = next(c for c in data["combos"] + data["extra_combos"]
                if c["name"] == data["baseline"])
    file = system_path(base["system"] or data["system"])
    if not file.is_file():
        return
    system = load_system(file)
    reason = cannot_run(base["plane"], base["routing"], system)
    if reason:
        raise ConfError(f"baseline '{base['name']}' cannot run on {system.name}: {reason}",
                        file=path, field="baseline", fix=f"pick a combo {system.name} runs, "
                        f"or list {base['routing']} in planes.{base['plane']}.opensm.routing "
                        f"of {file}")


def _check_workloads(spec: dict | None, combos: list[dict], catalog: dict, path: Path) -> None:
    if not spec:
        return
    known = {c["name"]: c for c in combos}
    bad = [c for c in spec["combos"] if c not in known]
    if bad:
        raise ConfError(f"unknown combo '{bad[0]}'", file=path, field="workloads.combos",
                        fix="use names of combos:")
    stated = spec.get("compute_scale")
    other = [c for c in spec["combos"] if stated is not None
             and float(known[c].get("compute_scale", 1.0)) != float(stated)]
    if other:
        raise ConfError(f"compute_scale {stated:g} is not combo '{other[0]}''s "
                        f"({float(known[other[0]].get('compute_scale', 1.0)):g}); each workload "
                        "case runs at its combo's", file=path, field="workloads.compute_scale",
                        fix="leave compute_scale out, or list only combos of that scale")
    bad = [a for a in spec["apps"] if a not in catalog]
    if bad:
        raise ConfError(f"workload app '{bad[0]}' is not a benchmark", file=path,
                        field="workloads.apps", fix="use names of benchmarks:")
    if spec["nodes_per_job"] % spec["cluster"]:
        raise ConfError(f"{spec['nodes_per_job']} nodes per job are not whole clusters of "
                        f"{spec['cluster']}", file=path, field="workloads.cluster",
                        fix="pick a cluster size that divides nodes_per_job")


def _check_histories(spec: dict | None, combos: list[dict], path: Path) -> None:
    if not spec:
        return
    known = {c["name"]: c for c in combos}
    bad = [c for c in spec["combos"] if c not in known]
    if bad:
        raise ConfError(f"unknown combo '{bad[0]}'", file=path, field="histories.combos",
                        fix="use names of combos:")
    readers = routing_engines.reading(routing_engines.JOBS)
    other = [c for c in spec["combos"] if known[c]["routing"] not in readers]
    if other:
        raise ConfError(f"combo '{other[0]}' routes with {known[other[0]]['routing']}, the "
                        f"replay's routing under test is {'/'.join(readers)}", file=path,
                        field="histories.combos", fix=f"give the combo routing: {readers[0]}")
    if not (ROOT / spec["trace"]).is_file():
        raise ConfError(f"no trace {spec['trace']}", file=path, field="histories.trace",
                        fix="give a path relative to the repository, e.g. "
                        "conf/traces/LLNL-Atlas-2006-2.1-cln.swf.gz")


def _check_networks(spec: dict | None, path: Path) -> None:
    if not spec:
        return
    bad = [n for n in spec["switches"] if n & (n - 1) or n > 16384]
    if bad:
        raise ConfError(f"{bad[0]} switches is not a power of two up to 16384", file=path,
                        field="networks.switches", fix="use powers of two (seed 001 §4.2); "
                        "the all-pairs hop matrix of 16,384 switches takes 512 MiB")
    timing = spec["p2p_system"]
    if timing and not system_path(timing).is_file():
        raise ConfError(f"no conf system '{timing}'", file=path, field="networks.p2p_system",
                        fix="name a file of conf/systems/ (e.g. thesis-rsn1024) or leave it "
                        "empty for hops only")


def _check_noise(noise: dict | None, path: Path) -> None:
    if noise is None:
        return
    for group in noise["cv"]:
        if group not in NOISE_GROUPS:
            raise ConfError(f"unknown benchmark group '{group}'", file=path,
                            field=f"noise.cv.{group}", fix="use some of: "
                            + ", ".join(NOISE_GROUPS))
    if noise["model"] != "none":
        missing = [g for g in NOISE_GROUPS if g not in noise["cv"]]
        if missing:
            raise ConfError(f"no cv for group '{missing[0]}'", file=path,
                            field=f"noise.cv.{missing[0]}",
                            fix="give every group a measured cv (0 = no noise), "
                            "e.g. from bench/results/noise.json")
