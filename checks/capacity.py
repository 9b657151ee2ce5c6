"""Capacity mode (seed 000 §4.4.2): every capacity app of the study starts at once on its own
disjoint node set and reruns back to back until the window closes (3 h real; simulated time
on `sim`). Every finished run is recorded; the perf variables are finished runs per app.

Node counts: the study's mix, scaled to the system's usable nodes when it does not fit
(``Study.capacity_apps``, docs/modelling.md). Node sets: the combo's placement order of all
usable nodes (its hostfile of every usable node), cut into consecutive chunks of the apps'
sizes in study order. Record format, one line per run, printed by the driver script (real) or
``t2hx campaign simulate-capacity`` (sim):
``T2HX capacity finished: app=<app> run=<k> start=<s> end=<s>``, ``T2HX capacity cut: ...``
(the window ended the run: not counted, in both modes) and, on a real cluster, ``T2HX
capacity failed: ... status=<n>`` (the run failed: the driver stops every app, the case
fails); simulated, also one ``T2HX capacity run length: app=... launch= setup= solve= alone=``
per app (its whole run alone, docs/modelling.md#run-overheads); the window's end is ``T2HX
capacity window closed``. The metric counts finished runs only.

On a real cluster the whole mix is one job: one allocation of every app's nodes
(``--nodelist``), inside which the driver starts each app the way the partition starts an
ordinary case (srun with the app's hostfile as ``SLURM_HOSTFILE``, or mpirun --hostfile;
t2hx.launcher.launch_command), with the CPUs and OpenMP threads per rank of a capability job
of the same app (t2hx.launcher.binding, thread_env). The sanity check fails when a launch failed, an app
finished no run, or a run hung (``wire.stalled_runs``: cut after over twice its app's
longest finished run; docs/cluster.md, "Known limits").

Each app runs a benchmark of the registry (t2hx/benchmarks/; ``Study.capacity_benchmark``):
the driver runs the command line and input files of that benchmark's own check
(``command``/``input_files`` of a Launch with nodes x ranks_per_node ranks) from the Spack
view; the flow model runs the fluid job its benchmark module declares (t2hx/benchmarks/).
"""

import json
import re
import shutil
from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.backends import getlauncher
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from t2hx import benchmarks, wire
from t2hx.atomic import staged_dir
from t2hx.checks import resume
from t2hx.checks.base import (
    ROUTING_DIR,
    SLURM_SCHEDULERS,
    STUDY,
    Launch,
    T2hxCheck,
    check_class,
    check_module,
    route_checks,
    routing_step,
    sim_lmc,
    write_inputs,
)
from t2hx.launcher import launch_command, shell_line, thread_env
from t2hx.paths import cli, log_root, work_root
from t2hx.routing.reroute import ROUTE_RECORD, demand_note
from t2hx.study import seconds

WINDOW_FILE = "window.json"
# The driver's shell expressions for the fields of its capacity lines (t2hx/wire.py).
SHELL_FIELDS = {"app": "$app", "run": "$k", "status": "$rc", "start": "$t0",
                "end": "$(date +%s)"}

# The check files whose classes capacity apps launch (their registry ``check`` field).
for _name in ("apps", "imb", "x500"):
    check_module(_name)


def app_launch(app: str, nodes: int, view: str | None = None) -> Launch:
    """One capacity app as a Launch: the study's input at that size, ranks_per_node each,
    the binaries of ``view``."""
    bench = STUDY.capacity_benchmark(app)
    return Launch(f"capacity-{app}", nodes, STUDY.ranks_per_node, STUDY.input(bench, nodes),
                  view=Path(view) if view else None)


def app_check(app: str) -> type[T2hxCheck]:
    bench = STUDY.capacity_benchmark(app)
    return check_class(benchmarks.get(bench, field=f"capacity.apps.{app}").check)


def app_command(app: str, nodes: int) -> tuple[str, list[str]]:
    """The app's check's own command line (checks/*.py), for the capacity job."""
    return app_check(app).command(app_launch(app, nodes))


class Capacity(T2hxCheck):
    benchmark = "capacity"           # not a registry benchmark: the mix of capacity apps
    combo = parameter([c.name for c in STUDY.combos], type=str)
    repetition = parameter(range(STUDY.capacity["repetitions"]), type=int)
    num_nodes = variable(int, value=STUDY.capacity_nodes())   # a variable: in the perflog
    metric = "runs"
    unit = "runs"

    @run_after("init")
    def set_case(self):
        """Replaces T2hxCheck.set_case: no registry entry (the finished-run records are
        parsed here, by ``_finished``) and one case per combo and repetition."""
        self.descr = "capacity: all apps at once for the window"
        self.window = seconds(STUDY.capacity["window"])
        # The window plus time for the last runs to be cut and the records written.
        self.time_limit = f"{int(self.window + 600)}s"
        combo = STUDY.combo(self.combo)
        self.topology, self.routing, self.placement = combo.plane, combo.routing, \
            combo.placement
        self.valid_systems = [combo.partition]

    @run_before("run")
    def stage_inputs(self):
        """Replaces T2hxCheck.stage_inputs: write_driver writes each app's inputs."""

    @property
    def hostfile(self) -> str:
        return str(Path(self.stagedir) / "capacity.hosts")

    def node_sets(self) -> dict[str, list[str]]:
        """The combo's placement order of every usable node (the hostfile of all of them,
        written for any study with a capacity mix), cut in study order: the mix, scaled to
        the usable nodes, always fits, whatever rung of the ladders does."""
        folder = Path(T2hxCheck.hostfile.fget(self)).parent
        every = folder / f"{self.extras['nodes']}.txt"
        if not every.is_file():
            raise FileNotFoundError(f"{every}: no hostfile of all {self.extras['nodes']} usable "
                                    f"nodes (fix: run/t2hx hostfiles --system "
                                    f"{self.extras['conf_file']})")
        order = every.read_text().split()
        sets, at = {}, 0
        for app, size in self.apps.items():
            sets[app] = order[at:at + size]
            at += size
        return sets

    @run_after("setup")
    def configure(self):
        # The mix scaled to the system's usable nodes (Study.capacity_apps): a port runs it.
        # Before the resume check: the record's num_nodes is the scaled mix's.
        self.apps = STUDY.capacity_apps(self.extras["nodes"])
        self.num_nodes = sum(self.apps.values())
        resume.skip_if_recorded(self)
        self.skip_if(self.num_nodes > self.extras["nodes"],
                     f"capacity mix needs {self.num_nodes} nodes > {self.extras['nodes']}")
        self.simulated = self.mode == "sim"
        stage = Path(self.stagedir)
        sets = self.node_sets()
        Path(self.hostfile).write_text("".join(h + "\n" for s in sets.values() for h in s))
        jobs = {}
        for app, hosts in sets.items():
            (stage / f"{app}.hosts").write_text("".join(h + "\n" for h in hosts))
            bench = STUDY.capacity_benchmark(app)
            jobs[app] = {"hostfile": str(stage / f"{app}.hosts"), "nodes": len(hosts),
                         "benchmark": bench, "params": STUDY.input(bench, len(hosts))}
        (stage / "capacity.json").write_text(json.dumps(jobs, indent=2) + "\n")
        # What the report states about this capacity run (t2hx/post/report.py).
        (stage / WINDOW_FILE).write_text(json.dumps({
            "window_s": self.window, "nodes": self.num_nodes, "apps": self.apps,
            "note": STUDY.capacity.get("note", "")}, indent=2) + "\n")
        if self.mode == "sim":
            self.num_tasks = 1
            self.executable = cli()
            self.executable_opts = [
                "campaign", "simulate-capacity", "--system", self.extras["conf_file"],
                "--plane", self.topology, "--routing", self.routing,
                "--capacity", str(stage / "capacity.json"),
                "--window", str(int(self.window)),
                "--work", str(work_root()), *sim_lmc(self.routing)]
            if self.routing in STUDY.reroute_engines:
                self.executable_opts.append("$([ -d routing ] && echo --routing-dir routing)")
            return
        # Real: one allocation holding every app's nodes; the driver starts the apps in it.
        self.num_tasks = self.num_nodes * STUDY.ranks_per_node
        self.num_tasks_per_node = STUDY.ranks_per_node
        self.num_cpus_per_task = int(self.extras["cores"])
        # Each step's threads as a capability job of its app has them (t2hx.launcher).
        self.env_vars.update(thread_env(self.num_cpus_per_task))
        self.write_driver(sets)
        self.executable = "bash"
        self.executable_opts = ["capacity.sh"]

    def write_driver(self, sets: dict[str, list[str]]) -> None:
        """A bash driver: one rerun loop per app, all started at once, cut at the window.
        A run that fails before the window's end stops every app (an allocation of hundreds
        of nodes must not relaunch a broken command for hours)."""
        stage = Path(self.stagedir)
        lines = ["#!/bin/bash", "# t2hx capacity driver (checks/capacity.py)", "set -u",
                 f"end=$(( $(date +%s) + {int(self.window)} ))",
                 "trap 'kill $(jobs -p) 2>/dev/null; wait; "
                 f"echo \"{wire.CAPACITY_ABORTED}\"; "
                 "exit 1' USR1",
                 "loop() {  # app command...",
                 "  local app=$1 k=0 t0 rc; shift; mkdir -p \"$app\"",
                 "  while t0=$(date +%s); [ \"$t0\" -lt \"$end\" ]; do",
                 "    (cd \"$app\" && exec timeout --signal=TERM --kill-after=30 "
                 "$(( end - t0 )) \"$@\" > \"run_$k.out\" 2>&1); rc=$?",
                 "    if [ \"$rc\" -eq 0 ]; then",
                 f"      echo \"{wire.capacity_line('finished', **SHELL_FIELDS)}\"",
                 "    elif [ \"$(date +%s)\" -ge \"$end\" ]; then",
                 f"      echo \"{wire.capacity_line('cut', **SHELL_FIELDS)}\"",
                 "    else",
                 f"      echo \"{wire.capacity_line('failed', **SHELL_FIELDS)}\"; "
                 "kill -USR1 $$; return 1",
                 "    fi", "    k=$((k + 1))", "  done", "}"]
        for app, hosts in sets.items():
            launch = app_launch(app, len(hosts), self.extras.get("spack_view"))
            exe, args = app_check(app).command(launch)
            prefix = launch_command(self.extras, str(stage / f"{app}.hosts"), launch.ranks,
                                    STUDY.ranks_per_node)
            lines.append(f"loop {app} {shell_line([*prefix, exe, *args])} &")
            # Each app runs in <stage>/<app>/: its inputs (HPL.dat) go there.
            write_inputs(app_check(app), launch, stage / app)
        lines += ["wait", f"echo \"{wire.CAPACITY_CLOSED}\""]
        (stage / "capacity.sh").write_text("\n".join(lines) + "\n")

    @run_before("run")
    def launch(self):
        # The driver starts the apps' own launches: it runs as a plain process (inside the
        # allocation on Slurm: the sbatch script itself).
        self.job.launcher = getlauncher("local")()
        if self.mode == "real":
            if self.current_partition.scheduler.registered_name in SLURM_SCHEDULERS:
                hosts = Path(self.hostfile).read_text().split()
                self.extra_resources = {"nodelist": {"nodelist": ",".join(hosts)}}
            self.env_vars.update(self.extras["mca"].get(self.routing, {}))
        self.prerun_cmds += routing_step(
            self, ["--jobs-json", str(Path(self.stagedir) / "capacity.json")])

    @sanity_function
    def completed(self):
        checks = [*route_checks(self)]
        if self.mode == "real":     # the likeliest cause first: ReFrame reports the first
            checks.append(sn.assert_not_found(wire.capacity_mark("failed"), self.stdout,
                                              msg="a capacity launch failed (see its run_*.out)"))
        checks.append(sn.assert_found(wire.CAPACITY_CLOSED, self.stdout))
        if self.mode == "real":
            checks += [sn.assert_true(sn.count(sn.findall(
                rf"^{wire.capacity_mark('finished')} app={re.escape(app)} ", self.stdout)),
                msg=f"{app} finished no run in the window") for app in self.apps]
            checks.append(sn.assert_false(_stalled(self), msg=(
                "a capacity run hung: {0} (cut after over "
                f"{wire.STALL_FACTOR:g}x its app's longest finished run; see its run_*.out)")))
        return sn.all(checks)

    @run_after("sanity")
    def keep_raw_output(self):
        """The finished-run list, node sets, driver and confirmed route go to
        log/<campaign>/capacity/ (not runs/: the perflog holds the metric; t2hx.post has no
        parser for this list)."""
        if self.is_dry_run():
            return
        case = f"capacity_{self.combo}_r{self.repetition}"
        final = log_root() / self.campaign / "capacity" / self.current_system.name / \
            self.current_partition.name / case
        stage = Path(self.stagedir)
        with staged_dir(final) as tmp:         # whole, or the old record stays
            for name in [str(self.stdout), "capacity.json", "capacity.hosts", WINDOW_FILE,
                         "capacity.sh", f"{ROUTING_DIR}/{ROUTE_RECORD}",
                         demand_note(Path(ROUTING_DIR)).name]:
                if (stage / name).is_file():
                    shutil.copyfile(stage / name, tmp / Path(name).name)

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = {
            app: sn.make_performance_function(_finished(self, app), "runs")
            for app in STUDY.capacity["apps"]}


# A study without a capacity mix (seed 003) has no capacity cases.
if STUDY.capacity["apps"]:
    rfm.simple_test(Capacity)


@sn.deferrable
def _finished(check, app: str) -> int:
    text = (Path(check.stagedir) / str(check.stdout)).read_text(errors="replace")
    return len({e.run for e in wire.capacity_events(text)
                if e.event == "finished" and e.app == app})


@sn.deferrable
def _stalled(check) -> str:
    """The hung runs (wire.stalled_runs), as ``app run k`` words; empty when none."""
    text = (Path(check.stagedir) / str(check.stdout)).read_text(errors="replace")
    return ", ".join(f"{e.app} run {e.run}" for e in wire.stalled_runs(
        wire.capacity_events(text)))
