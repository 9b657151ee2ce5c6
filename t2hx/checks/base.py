"""The base class of every t2hx check: one case = (benchmark, combo, num_nodes, repetition).

Everything that varies comes from ``conf/studies/<study>.yaml`` (t2hx.study); everything about the
machine comes from the partition's ``extras`` (t2hx.reframe_site). The three run modes:

* ``real``  (system named after a conf system): Spack-built binary, mpirun with the case's
  hostfile (or srun --nodelist), MPI pinned to the plane's HCA by the partition;
* ``sim``   (system ``sim``): ``run/t2hx simulate`` runs the flow model instead of MPI and
  prints the benchmark's upstream-format output;
* ``local`` (system ``local``): the same command as ``real`` with the small inputs of
  ``conf/studies/<study>.yaml`` ``local:``, under real Open MPI on this machine, the binary taken from
  the Spack view (``T2HX_SPACK_VIEW``). A benchmark runs there only when the view holds its
  registry ``local_binary`` and the study gives it a local input; every other one is left out
  with its reason logged (:func:`local_reason`).

A check's identity (parser family, metric, unit, markers, Spack spec, its ``t2hx simulate``
options) comes from its ``benchmark``'s module in the registry, t2hx/benchmarks/. Its command line
and input files are static functions of a :class:`Launch` (nodes, ranks, input), so the
capacity driver (checks/capacity.py) launches the very same commands.

A case that already has a passing perflog record in the campaign is skipped (resume).
"""

from __future__ import annotations

import importlib.util
import json
import re
import os
import shlex
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (parameter, run_after, run_before, sanity_function,
                                   variable)

from t2hx.atomic import staged_dir
from t2hx import ROOT, benchmarks, wire
from t2hx.launcher import binding, thread_env
from t2hx.post import parsers
from t2hx.post.records import better_for
from t2hx.paths import cli, hostfiles_root, log_root, spack_view, work_root
from t2hx.reframe_site import campaign
from t2hx.routing.reroute import demand_meta, route_record
from t2hx.routing_engines import routing_engine
from t2hx.simrequest import FLOW_MODEL
from t2hx.study import hostfile_name, load_study

from t2hx.checks import resume


STUDY = load_study()
LOCAL = "local"           # the pseudo-combo of the `local` system (no planes)


def _git_hash() -> str:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


GIT_HASH = _git_hash()


def study_parameters(bench: str):
    """(combo, num_nodes, repetition) parameters of a benchmark, from the study. When the
    selected profile leaves the benchmark out, one placeholder case that no system accepts
    (set_case), so ReFrame neither runs nor warns about it."""
    if bench not in STUDY.benchmarks and bench in STUDY.local["input"]:
        # Run here only (seed 001's NPB EP: built and calibrated, not in the thesis' runs).
        return (parameter([LOCAL], type=str), parameter(sorted(STUDY.local["nodes"]), type=int),
                parameter(range(STUDY.local["repetitions"]), type=int))
    if bench not in STUDY.benchmarks:
        nodes = STUDY.nodes(bench)[:1] if bench in STUDY.catalog else [1]
        return (parameter([STUDY.combos[0].name], type=str),
                parameter(nodes, type=int), parameter([0], type=int))
    combos = [c.name for c in STUDY.all_combos()] + [LOCAL]
    extra = {n for c in STUDY.extra_combos for n in (c.only or {}).get(bench, [])}
    nodes = sorted(set(STUDY.nodes(bench)) | set(STUDY.local["nodes"]) | extra)
    reps = max(STUDY.runs_of(bench), STUDY.local["repetitions"])
    return (parameter(combos, type=str), parameter(nodes, type=int),
            parameter(range(reps), type=int))


@dataclass(frozen=True)
class Launch:
    """What a benchmark's command line and input files depend on: one MPI job of the study
    (a check's case, or one app of the capacity mix)."""
    name: str                 # the job's name (HPL.dat's case line)
    nodes: int
    ranks_per_node: int
    input: dict
    variant: str | None = None   # the registry variant (IMB collective)
    view: Path | None = None     # the Spack view the binaries come from (None: on PATH)

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node


class T2hxCheck(rfm.RunOnlyRegressionTest):
    """Subclasses set ``benchmark`` (a registry name, t2hx/benchmarks/) and the parameters
    (``study_parameters``), and implement the static ``command(launch)`` (real binary +
    args), optionally ``input_files(launch)`` and ``local_command()``."""

    # --- what the perflog records (t2hx.post.perflog fields) -----------------------------
    benchmark = variable(str)
    family = variable(str)                 # t2hx.post.parsers family of the output
    campaign = variable(str, value=campaign())
    topology = variable(str, value="")
    routing = variable(str, value="")
    placement = variable(str, value="")
    msg_size = variable(int, type(None), value=None)
    git_hash = variable(str, value=GIT_HASH)
    simulated = variable(bool, value=False)

    # --- how it is measured: filled from the registry entry (identify) -------------------
    metric = variable(str)                 # the Table 2 metric (parser's metric name)
    unit = variable(str)
    metric_benchmark = variable(str, type(None), value=None)   # parser benchmark filter
    sized = variable(bool, value=False)    # several message sizes: log the largest
    output_file = variable(str, value="")  # raw output file ('' = the job's stdout)
    markers = variable(list, value=[])     # completion markers the sanity check requires
    sim_markers = variable(list, type(None), value=None)   # on sim, if they differ
    spack_spec = variable(str, value="")
    local_binary = variable(str, value="")

    valid_prog_environs = ["*"]
    tags = {"t2hx"}
    maintainers = ["t2hx"]

    # --- case setup ------------------------------------------------------------------------
    def init_benchmark(self) -> None:
        """Hook for checks whose benchmark name depends on a parameter (IMB collectives)."""

    @property
    def entry(self) -> benchmarks.Benchmark:
        return benchmarks.get(self.benchmark)

    @property
    def variant(self) -> str | None:
        return benchmarks.resolve(self.benchmark)[1]

    def identify(self) -> None:
        """Everything the registry knows about ``benchmark``: one place per benchmark."""
        self.init_benchmark()
        entry = self.entry
        self.family, self.metric, self.unit = entry.parser, entry.metric, entry.unit
        self.metric_benchmark = entry.metric_benchmark(self.variant)
        self.sized = entry.is_sized(self.variant)
        self.output_file, self.markers = entry.output_file, list(entry.markers)
        self.sim_markers = None if entry.sim_markers is None else list(entry.sim_markers)
        self.spack_spec, self.local_binary = entry.spack_spec, entry.local_binary
        self.descr = STUDY.catalog.get(entry.key, {}).get("title") or entry.title

    @run_after("init")
    def set_case(self):
        self.identify()
        self.time_limit = STUDY.walltime
        if self.combo == LOCAL:
            ok = (self.num_nodes in STUDY.local["nodes"]
                  and self.repetition < STUDY.local["repetitions"])
            if ok and (reason := self.local_reason()):
                announce_left_out(self.entry.key, reason)
                ok = False
            self.valid_systems = ["local"] if ok else []
            self.topology, self.routing, self.placement = "local", "none", "linear"
            return
        combo = STUDY.combo(self.combo)
        known = self.study_name in STUDY.benchmarks
        on_ladder = known and (self.num_nodes in STUDY.nodes(self.study_name)
                               and STUDY.runs_on(self.study_name, combo.name)
                               if combo.only is None
                               else combo.runs(self.study_name, self.num_nodes))
        ok = on_ladder and self.repetition < STUDY.runs_of(self.study_name)
        self.valid_systems = [combo.partition] if ok else []
        self.topology, self.routing, self.placement = combo.plane, combo.routing, \
            combo.placement

    @property
    def study_name(self) -> str:
        return self.entry.key

    @property
    def input(self) -> dict:
        # A benchmark the study runs only locally, or not at all (a placeholder case), has no
        # study input.
        data = STUDY.input(self.study_name, self.num_nodes) \
            if self.study_name in STUDY.catalog else {}
        if self.combo == LOCAL:
            data.update(STUDY.local["input"].get(self.study_name, {}))
        return data

    @property
    def extras(self) -> dict:
        return self.current_partition.extras

    @property
    def mode(self) -> str:
        return self.extras["mode"]

    @property
    def hostfile(self) -> str:
        return str(hostfiles_root() / self.extras["conf_system"] / self.placement /
                   hostfile_name(self.num_nodes, self.draw))

    @property
    def draw(self) -> int:
        """The mapping draw this run uses: its repetition for a benchmark the study runs over
        several draws (seed 001's box plots), else the one hostfile (draw 0)."""
        found = benchmarks.find(self.benchmark)    # None: not a registry benchmark (capacity)
        return self.repetition if found and STUDY.draws(found[0].key) > 1 else 0

    @run_after("setup")
    def configure(self):
        resume.skip_if_recorded(self)
        self.skip_if(self.num_nodes > self.extras["nodes"],
                     f"{self.num_nodes} nodes > {self.extras['nodes']} of "
                     f"{self.extras['conf_system']}")
        self.simulated = self.mode == "sim"
        cores = int(self.extras["cores"])
        self.env_vars.update(thread_env(cores))
        if self.mode == "local":
            self.num_tasks = self.launch_spec().ranks
            self.executable, self.executable_opts = self.local_command()
            return
        if not Path(self.hostfile).is_file():
            # Hostfiles exist for every rung of the study's ladders: a missing one is a
            # stale hostfiles/ (e.g. a rung added to the study), never a case to skip.
            raise FileNotFoundError(
                f"{self.hostfile}: no hostfile (fix: run/t2hx hostfiles --system "
                f"{self.extras['conf_file']})")
        if self.mode == "sim":
            # `reframe -r` without `t2hx campaign` skips its preflight: the same line here
            from t2hx.campaign.preflight import check_ranks_per_node

            check_ranks_per_node(STUDY)
            self.num_tasks = 1
            self.executable = cli()
            self.executable_opts = self.sim_command()
            if self.model != FLOW_MODEL:       # the flow model's run of the same case
                self.executable_opts += ["--companion-output", wire.COMPANION_OUTPUT]
            return
        self.num_tasks = self.launch_spec().ranks
        self.num_tasks_per_node = self.ranks_per_node()
        self.num_cpus_per_task = cores
        self.executable, self.executable_opts = self.command(self.launch_spec())

    @run_before("run")
    def launch(self):
        opts = list(self.extras.get("launcher_options", []))
        if self.mode == "real":
            hosts = Path(self.hostfile).read_text().split()
            if self.current_partition.scheduler.registered_name in SLURM_SCHEDULERS:
                self.extra_resources = {"nodelist": {"nodelist": ",".join(hosts)}}
            # The binding a capacity step of the same app gets too (t2hx.launcher.binding).
            bind = binding(self.extras, self.ranks_per_node())
            if self.extras.get("hostfile_env"):      # srun: hostfile order
                self.env_vars[self.extras["hostfile_env"]] = shlex.quote(self.hostfile)
                opts = [*bind, *opts]
                # ReFrame adds its own --cpus-per-task only where this machine's srun is
                # 22.05 or later: the script must not depend on where it was generated.
                self.job.launcher.use_cpus_per_task = False
            else:
                opts += [self.extras["hostfile_option"], self.hostfile, *bind]
            # The engine's MPI side (PARX: the patch's MCA parameters), for every launcher.
            self.env_vars.update(self.extras["mca"].get(self.routing, {}))
        # ReFrame joins launcher options unquoted: each one stays one shell word.
        self.job.launcher.options = [shlex.quote(o) for o in opts]
        self.prerun_cmds += routing_step(self, ["--hostfile", self.hostfile,
                                                "--benchmark", self.benchmark, "--input",
                                                json.dumps(self.input, sort_keys=True)])

    def ranks_per_node(self) -> int:
        """The study's ranks per node for this case's node count (a benchmark holding its
        process count, seed 003's strong scaling, has one per rung)."""
        return STUDY.ranks_per_node_of(self.study_name, self.num_nodes)

    def launch_spec(self) -> Launch:
        """This case as a Launch: on `local` one rank per node (real Open MPI here)."""
        rpn = 1 if self.combo == LOCAL else self.ranks_per_node()
        # Outside a partition (a probe of the check's command) the binaries are on PATH.
        extras = self.current_partition.extras if self.current_partition else {}
        view = extras.get("spack_view") if extras.get("mode") in ("real", "local") else None
        return Launch(self.unique_name, self.num_nodes, rpn, self.input, self.variant,
                      Path(view) if view else None)

    @run_before("run")
    def stage_inputs(self):
        if self.mode in ("real", "local"):
            write_inputs(type(self), self.launch_spec(), Path(self.stagedir))

    def sim_command(self) -> list[str]:
        opts = ["simulate", "--system", self.extras["conf_file"], "--plane", self.topology,
                "--routing", self.routing, "--hostfile", self.hostfile,
                "--benchmark", self.benchmark, "--seed", str(self.repetition),
                "--work", str(work_root()), "--repetition", str(self.repetition)]
        model, cv, seed = STUDY.noise_of(self.entry.group)
        if model != "none":       # docs/modelling.md#run-to-run-noise
            opts += ["--noise", model, "--noise-cv", str(cv), "--noise-seed", str(seed)]
        opts += sim_lmc(self.routing)
        rpn = self.ranks_per_node()
        if rpn > 1:                 # Open MPI's --map-by ppr:N:node, as a real run places them
            opts += ["--ranks-per-node", str(rpn)]
        if self.model != FLOW_MODEL:   # the study's engine: for this benchmark
            opts += ["--model", self.model]
        if self.routing in STUDY.reroute_engines:
            # The tables `t2hx campaign reroute` made for this job, when it had a demand.
            opts.append('$([ -d routing ] && echo --routing-dir routing)')
        if self.entry.app:
            # The model runs this case's input (HPL's N, Graph500's SCALE, ...): the same
            # the real binary would get (the input rules of its module, t2hx/benchmarks/).
            opts += ["--input", shlex.quote(json.dumps(self.input, sort_keys=True))]
            scale = STUDY.combo(self.combo).compute_scale
            if scale != 1:          # seed 003 §5.2: a node that computes `scale` times faster
                opts += ["--compute-scale", f"{scale:g}"]
        # The benchmark's own inputs as `t2hx simulate` options (its module says which).
        return opts + self.entry.sim_options(self.input)

    @property
    def model(self) -> str:
        """The network model of this benchmark's simulated cases (the study's ``model:``)."""
        return STUDY.model(self.study_name, self.num_nodes)

    @staticmethod
    def command(launch: Launch) -> tuple[str, list[str]]:
        """The real binary and its arguments; every benchmark check defines it."""
        raise TypeError("a t2hx check must define command(launch) "
                        "(fix: return (executable, [args]) for the real binary)")

    @staticmethod
    def input_files(launch: Launch) -> dict[str, str]:
        """Input files the real binary reads from its working directory: name -> text."""
        return {}

    def local_command(self) -> tuple[str, list[str]]:
        """The command on the `local` system: the real one (the view is on PATH)."""
        return self.command(self.launch_spec())

    def local_reason(self) -> str | None:
        """Why this benchmark cannot run on `local`, or None when it can."""
        return local_reason(self.entry)

    # --- results ----------------------------------------------------------------------------
    def output_path(self) -> Path:
        stage = Path(self.stagedir)
        name = self.output_file if self.mode != "sim" and self.output_file else self.stdout
        if "*" in str(name):          # e.g. HPCG's HPCG-Benchmark_<version>_<date>.txt
            found = sorted(stage.glob(str(name)))
            return found[-1] if found else stage / str(name)
        return stage / str(name)

    @sanity_function
    def completed(self):
        path = self.output_path()
        markers = self.markers
        if self.mode == "sim" and self.sim_markers is not None:
            markers = self.sim_markers
        checks = [sn.assert_found(m, str(path), msg=f"no completion marker {m!r} in "
                                  f"{path.name}") for m in markers]
        checks += route_checks(self)
        if self.mode == "sim" and self.model != FLOW_MODEL:
            companion = Path(self.stagedir) / wire.COMPANION_OUTPUT
            checks.append(sn.assert_found(re.escape(wire.SIM_MARKER), str(companion),
                                          msg=f"no flow-model companion {companion.name}"))
        return sn.all(checks + [sn.assert_true(_has_metric(self),
                                               msg=f"no {self.metric} in {path.name}")])

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {self.metric: sn.make_performance_function(
            _metric_value(self), self.unit)}

    @run_after("sanity")
    def keep_raw_output(self):
        """Copy the raw output and its parameters to log/<campaign>/runs/ (t2hx.post reads
        them: every message size, mpiGraph matrices). Written before the perflog line and
        replaced atomically, so a killed run never leaves a half or a duplicate record."""
        if self.is_dry_run():
            return
        case = f"{self.benchmark}_{self.combo}_{self.num_nodes}n_r{self.repetition}"
        rel = Path(self.current_system.name) / self.current_partition.name / case
        final = log_root() / self.campaign / "runs" / rel
        meta = {"benchmark": self.benchmark, "campaign": self.campaign,
                "system": self.current_system.name, "partition": self.current_partition.name,
                "topology": self.topology, "routing": self.routing,
                "placement": self.placement, "combo": self.combo, "nodes": self.num_nodes,
                "repetition": self.repetition, "msg_size": None, "git_hash": self.git_hash,
                "timestamp": wire.run_timestamp(), "simulated": self.simulated,
                "hostfile": None if self.mode == "local" else self.hostfile, "input": self.input,
                **(sim_marks(self.output_path()) if self.mode == "sim" else {})}
        if routed_for_real(self):      # what the SM host confirmed before the run
            meta["route"] = route_record(Path(self.stagedir) / ROUTING_DIR)
        meta.update(demand_meta(Path(self.stagedir) / ROUTING_DIR))   # PARX without demand
        companion = Path(self.stagedir) / wire.COMPANION_OUTPUT
        if self.mode == "sim" and companion.is_file():
            keep_run(log_root() / self.campaign / wire.COMPANION_DIR / wire.COMPANION_ENGINE / rel,
                     companion, self.output_path().name, {**meta, **sim_marks(companion)})
        keep_run(final, self.output_path(), self.output_path().name, meta)


def keep_run(final: Path, output: Path, name: str, meta: dict) -> None:
    """A run's directory (its raw output and t2hx-run.json), swapped in atomically."""
    with staged_dir(final) as tmp:
        shutil.copyfile(output, tmp / name)
        (tmp / wire.RUN_META).write_text(wire.run_meta_text(meta))


def view_binary(name: str) -> Path:
    return spack_view() / "bin" / name


def local_reason(entry: benchmarks.Benchmark) -> str | None:
    """The rule that selects a benchmark for `local` (None: selected), as a reason a user can
    act on: a registry binary that the Spack view holds, and a small input in the study."""
    if not entry.local_binary:
        return f"no local_binary in its module ({entry.module})"
    if not os.access(view_binary(entry.local_binary), os.X_OK):
        return (f"the Spack view {spack_view()} has no bin/{entry.local_binary} "
                "(fix: build spack-env, or point T2HX_SPACK_VIEW at its view)")
    if entry.key not in STUDY.local["input"]:
        return f"no small input (fix: add local.input.{entry.key} to conf/studies/<study>.yaml)"
    return None


_ANNOUNCED: set[str] = set()


def announce_left_out(benchmark: str, reason: str) -> None:
    """One visible line per benchmark left out of `local` (listing and run output), only
    when ReFrame runs for the `local` system."""
    from reframe.core.logging import getlogger
    from reframe.core.runtime import runtime

    if benchmark in _ANNOUNCED or runtime().system.name != "local":
        return
    _ANNOUNCED.add(benchmark)
    getlogger().warning(f"local: {benchmark} not selected: {reason}")


def write_inputs(check: type[T2hxCheck], launch: Launch, folder: Path) -> None:
    """A check's input files for ``launch`` into ``folder`` (a stage dir, a capacity app's
    working dir)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in check.input_files(launch).items():
        (folder / name).write_text(text)


def sim_marks(output: Path) -> dict:
    """What the simulated first line says about this run: ``cache`` (miss: simulated here;
    hit: the output of repetition ``repeat_of``, deterministic), ``noise`` and its factor."""
    with open(output, errors="replace") as fh:
        _, meta = wire.split_simulated(fh.readline())
    if meta is None:
        return {}
    marks: dict[str, str | int] = {k: meta[k] for k in ("model", "cache", "noise", "noise_factor")
                                   if k in meta}
    if "repeat_of" in meta:
        marks["repeat_of"] = int(meta["repeat_of"])
    return {"sim": marks}


#: The check files (ReFrame loads them by path; so does :func:`check_module`).
CHECKS = ROOT / "checks"


def check_module(name: str) -> types.ModuleType:
    """``checks/<name>.py`` as a module of its own, loaded by its path (no sys.path entry)
    once per process: the capacity check launches other check files' apps by their
    classes. Their tests register in this module, not in the file ReFrame loads, so ReFrame
    runs none of them twice."""
    key = f"t2hx_check_file_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, CHECKS / f"{name}.py")
        if spec is None or spec.loader is None:
            raise ImportError(f"{CHECKS / name}.py: not a check file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def check_class(name: str) -> type[T2hxCheck]:
    """The loaded check class a registry entry names (its ``check`` field)."""
    todo: list[type[T2hxCheck]] = [T2hxCheck]
    seen: dict[str, type[T2hxCheck]] = {}
    while todo:
        cls = todo.pop()
        seen.setdefault(cls.__name__, cls)
        todo += cls.__subclasses__()
    if name not in seen:
        raise TypeError(f"no check class {name!r} is loaded (fix: import its checks/ module "
                        "or correct the check of its module in t2hx/benchmarks/)")
    return seen[name]


def sim_lmc(routing: str) -> list[str]:
    """An engine with its own LMC (PARX: 2) routes with it whatever the plane's
    (docs/routing.md#lmc-and-lid-policy)."""
    own = routing_engine(routing).lmc
    return [] if own is None else ["--lmc", str(own)]


SLURM_SCHEDULERS = ("slurm", "squeue")
ROUTING_DIR = "routing"


def routed_for_real(check) -> bool:
    """A real case whose plane's OpenSM t2hx drives: it routes before it runs."""
    return check.mode == "real" and check.extras.get("sm_via", "none") != "none"


def routing_step(check, job: list[str]) -> list[str]:
    """The pre-run line that routes the plane for this job, or none. Real cluster: the
    plane's OpenSM runs the combo's engine and LMC (PARX/SAR with the job's demand or job
    file), confirmed by the SM host. Simulated: PARX/SAR re-route under ibsim. Its failure
    ends the job before the benchmark runs: nothing is recorded under a routing that was
    not in place (the sanity check also requires the real step's record)."""
    if not (routed_for_real(check) or check.mode == "sim" and
            check.routing in STUDY.reroute_engines):
        return []
    cmd = [cli(), "campaign", "reroute", "--system", check.extras["conf_file"],
           "--plane", check.topology, "--routing", check.routing, "--mode", check.mode,
           "--out", ROUTING_DIR, *job, *background_args(check)]
    return [" ".join(shlex.quote(a) for a in cmd) + " || { echo 't2hx: the routing step "
            f"failed: not running on unverified routing' >&2; exit {ROUTING_FAILED}; }}"]


ROUTING_FAILED = 3      # the job script's exit status when its routing step failed


def background_args(check) -> list[str]:
    """The combo's other running jobs, which its engine routes for beside this job's."""
    name = getattr(check, "combo", LOCAL)
    combo = None if name == LOCAL else STUDY.combo(name)
    if combo is None or combo.background is None:
        return []
    return ["--background", str(ROOT / combo.background)]


def route_checks(check) -> list:
    """Sanity: a real routed case ran on the routing its combo names, as the SM confirmed."""
    if not routed_for_real(check):
        return []
    record = route_record(Path(check.stagedir) / ROUTING_DIR) or {}
    return [sn.assert_true(record.get("verified") and record.get("engine_used") ==
                           check.routing, msg=f"no verified {check.routing} routing in "
                           f"{ROUTING_DIR}/route.json (the routing step failed or did not run)")]


def _records(check) -> list[dict]:
    """The output's records of the check's metric, parsed once for sanity and performance
    (kept on the check with the file's identity, so a rerun's new output is parsed anew)."""
    path = check.output_path()
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    parsed = getattr(check, "_t2hx_parsed", None)
    if parsed is None or parsed[0] != key:
        recs = parsers.parse_text(check.family, path.read_text(errors="replace"))
        parsed = (key, [r for r in recs if r["metric"] == check.metric and
                        (check.metric_benchmark is None or
                         r["benchmark"] == check.metric_benchmark)])
        check._t2hx_parsed = parsed
    return parsed[1]


@sn.deferrable
def _has_metric(check) -> bool:
    try:
        return bool(_records(check))
    except Exception:      # a parser's ParseError: no result in the output
        return False


@sn.deferrable
def _metric_value(check) -> float:
    """The Table 2 metric; for message-size sweeps the largest size's value (the others go
    to log/<campaign>/runs/), recorded as the check's msg_size."""
    recs = _records(check)
    if check.sized:
        size = max(int(r.get("msg_size") or 0) for r in recs)
        recs = [r for r in recs if int(r.get("msg_size") or 0) == size]
        check.msg_size = size
    pick = max if better_for(check.unit) == "higher" else min
    return pick(r["value"] for r in recs)
