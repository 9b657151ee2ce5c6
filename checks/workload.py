"""Multi-job workloads (seed 003 §6): the study's ``workloads:`` jobs at once on the flow
model, each repeating its time step for the simulated window, and each alone on the same
nodes (``t2hx campaign simulate-workload``, t2hx/flowsim/multijob.py).

One case per (combo of ``workloads.combos``, workload index), at the combo's compute scale
and the window the study gives that scale. Simulation only: seed 003's workloads are 17 jobs
on 4,352 nodes with compute scaled 2x and 10x, which no machine here runs.
The perf variables are each job's mean step time, in the workload (``j<k>-<app>``) and alone
(``j<k>-<app>-alone``; ReFrame splits perf variable names at colons); the per-job lines also go to
``log/<campaign>/workloads/`` for the figures (t2hx/post/configs.py).
"""

from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from t2hx import wire
from t2hx.checks import keep, resume
from t2hx.checks.base import STUDY, T2hxCheck
from t2hx.paths import cli, work_root
from t2hx.study import workload_window

SPEC = STUDY.workloads or {}


def _combos() -> list[str]:
    return [c.name for c in STUDY.combos if c.name in SPEC.get("combos", [])]


class Workload(T2hxCheck):
    benchmark = "workload"           # not a registry benchmark: a mix of jobs
    combo = parameter(_combos(), type=str)
    repetition = parameter(range(SPEC.get("count", 0)), type=int)   # the workload index
    num_nodes = variable(int, value=SPEC.get("jobs", 0) * SPEC.get("nodes_per_job", 0))
    metric = "step"
    unit = "s"

    @run_after("init")
    def set_case(self):
        """Replaces T2hxCheck.set_case: no registry entry; one case per combo and workload."""
        self.descr = "multi-job workload: jobs at once for the window, then each alone"
        self.window = workload_window(SPEC, STUDY.combo(self.combo).compute_scale)
        # The limit is on simulating, not on the jobs (they run in simulated time): about
        # 40 s of wall time per simulated second alone, several workloads share 2 cores.
        self.time_limit = f"{int(1800 + 600 * self.window)}s"
        combo = STUDY.combo(self.combo)
        self.topology, self.routing, self.placement = combo.plane, combo.routing, \
            "random-clusters"
        self.valid_systems = [f"+sim {combo.partition}"]

    @run_before("run")
    def stage_inputs(self):
        """Nothing to stage: the command draws the workload from the study."""

    @run_after("setup")
    def configure(self):
        resume.skip_if_recorded(self)
        self.skip_if(self.num_nodes > self.extras["nodes"],
                     f"workload needs {self.num_nodes} nodes > {self.extras['nodes']}")
        self.simulated = True
        self.num_tasks = 1
        self.executable = cli()
        self.executable_opts = [
            "campaign", "simulate-workload", "--system", self.extras["conf_file"],
            "--plane", self.topology, "--routing", self.routing,
            "--workload", str(self.repetition), "--work", str(work_root()),
            "--compute-scale", f"{STUDY.combo(self.combo).compute_scale:g}"]

    @run_before("run")
    def launch(self):
        """Replaces T2hxCheck.launch: one local process, no re-routing."""

    @sanity_function
    def completed(self):
        return sn.assert_found(wire.WORKLOAD_CLOSED, self.stdout)

    @run_after("sanity")
    def keep_raw_output(self):
        """The per-job lines go to log/<campaign>/workloads/ (the figures need every job)."""
        keep.keep_files(self, "workloads", f"workload_{self.combo}_w{self.repetition}",
                        {str(self.stdout): "workload.out"})

    @run_before("performance")
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        text = (Path(self.stagedir) / str(self.stdout)).read_text(errors="replace")
        self.perf_variables = {}
        for job in wire.workload_jobs(text):
            # Per job: Fig 10 normalises each job's step rate by its best configuration.
            name = f"j{job.job}-{job.app}"
            self.perf_variables[name] = sn.make_performance_function(
                sn.defer(job.step_s), "s")
            self.perf_variables[f"{name}-alone"] = sn.make_performance_function(
                sn.defer(job.alone_step_s), "s")


if SPEC:        # a study without workloads has no workload cases (and no empty parameter)
    rfm.simple_test(Workload)
