"""Job-history replay (seed 004 §4.2): a day of the study's ``histories:`` trace placed on the
combo's system, sampled every interval, and at every sample the routing metrics of the
running multi-switch jobs under updn, ftree, dfsssp and SAR, each routed by the real OpenSM
(``t2hx campaign simulate-history``, t2hx/history/sample_routing.py).

One case per (combo of ``histories.combos``, day); the day is the case's ``repetition``
(0 = ``histories.first_day``). Simulation only: it replays a trace, it measures nothing. The
perf variables are each engine's means over the day's samples (``<engine>-<metric>``); the
per-sample rows go to ``log/<campaign>/histories/`` for Table 1 and the figures
(t2hx/post/histories.py).
"""

from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from t2hx import ROOT, wire
from t2hx.checks import keep, resume
from t2hx.checks.base import STUDY, T2hxCheck
from t2hx.paths import cli, work_root
from t2hx.study import seconds

SPEC = STUDY.histories or {}
UNITS = {"max_efi": "routes", "avg_job_max_efi": "routes", "dark_fiber": "%",
         "avg_job_links": "links"}


def _combos() -> list[str]:
    return [c.name for c in STUDY.combos if c.name in SPEC.get("combos", [])]


class HistoryReplay(T2hxCheck):
    benchmark = "history"            # not a registry benchmark: a trace replay
    combo = parameter(_combos(), type=str)
    repetition = parameter(range(SPEC.get("days", 0)), type=int)   # the day
    num_nodes = variable(int, value=0)
    metric = "max_efi"
    unit = "routes"

    @run_after("init")
    def set_case(self):
        """Replaces T2hxCheck.set_case: no registry entry; one case per combo and day."""
        self.descr = "a day of a job history under four routings"
        # A day is up to 144 SAR routings of a 2,000-node plane by OpenSM under ibsim.
        self.time_limit = "6h"
        combo = STUDY.combo(self.combo)
        self.topology, self.routing, self.placement = combo.plane, combo.routing, "trace"
        self.valid_systems = [f"+sim {combo.partition}"]

    @run_before("run")
    def stage_inputs(self):
        """Nothing to stage: the command reads the trace from the repository."""

    @run_after("setup")
    def configure(self):
        self.num_nodes = self.extras["nodes"]
        resume.skip_if_recorded(self)
        self.simulated = True
        self.num_tasks = 1
        self.executable = cli()
        self.executable_opts = [
            "campaign", "simulate-history", "--system", self.extras["conf_file"],
            "--plane", self.topology, "--trace", str(ROOT / SPEC["trace"]),
            "--day", str(SPEC["first_day"] + self.repetition),
            "--interval", str(seconds(SPEC["interval"])), "--placement", SPEC["placement"],
            "--rows", wire.HISTORY_ROWS, "--work", str(work_root())]

    @run_before("run")
    def launch(self):
        """Replaces T2hxCheck.launch: one local process, no re-routing."""

    @sanity_function
    def completed(self):
        return sn.assert_found(wire.HISTORY_DONE, self.stdout)

    @run_after("sanity")
    def keep_raw_output(self):
        """The per-sample rows go to log/<campaign>/histories/ (Table 1 needs every one)."""
        keep.keep_files(self, "histories",
                        f"history_{self.combo}_d{SPEC['first_day'] + self.repetition}",
                        {name: name for name in (wire.HISTORY_ROWS, wire.HISTORY_JOBS)})

    @run_before("performance")
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        text = (Path(self.stagedir) / str(self.stdout)).read_text(errors="replace")
        self.perf_variables = {}
        for h in wire.history_engines(text):
            for m, unit in UNITS.items():
                self.perf_variables[f"{h.engine}-{m}"] = sn.make_performance_function(
                    sn.defer(getattr(h, m)), unit)


if SPEC:        # a study without histories has no history cases (and no empty parameter)
    rfm.simple_test(HistoryReplay)
