"""Generated networks of seed 001's Chapter 5 (random shortcut, circulant, Dragonfly of
2^k switches, degree 2k − 1), each analysed once: diameter and ASPL, total hops of the
thesis' collective algorithms under its mappings (two-opt on the random shortcut
network), point-to-point hops per mapped node count, the two-opt tables, cable length
(``t2hx campaign analyse-network``, t2hx/placement/network_analysis.py).

One case per (kind, switches) of the study's ``networks:``, on the study's own system (the
analysis does not depend on it). Simulation only: graph computations, nothing measured. The
perf variables are the headline numbers; the whole analysis goes to
``log/<campaign>/networks/`` for the figures and the claims (t2hx/post/generated_networks.py).
"""

from pathlib import Path

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from t2hx import wire
from t2hx.checks import keep, resume
from t2hx.checks.base import STUDY, T2hxCheck
from t2hx.paths import cli

SPEC = STUDY.networks or {}
UNITS = {"diameter": "hops", "aspl": "hops", "cable_mean_m": "m", "bcast_hops": "hops",
         "allreduce_hops": "hops", "alltoall_hops": "hops"}


def annealing_options(spec: dict | None) -> list[str]:
    """§3.5's comparison (study ``networks.annealing``) as analyse-network options."""
    if not spec:
        return []
    return ["--sa-iterations", ",".join(str(k) for k in spec["iterations"]),
            "--sa-degree", str(spec["degree"]), "--sa-two-opt-trials", str(spec["two_opt_trials"]),
            "--sa-up-to", str(spec["up_to"]), "--sa-trials-up-to", str(spec["trials_up_to"])]


class NetworkAnalysis(T2hxCheck):
    benchmark = wire.NETWORK_BENCHMARK   # not a registry benchmark: a graph analysis
    combo = parameter(SPEC.get("kinds", []), type=str)     # the network kind
    num_nodes = parameter(SPEC.get("switches", []), type=int)
    repetition = variable(int, value=0)
    metric = "aspl"
    unit = "hops"

    @run_after("init")
    def set_case(self):
        """Replaces T2hxCheck.set_case: no registry entry; one case per kind and size."""
        self.descr = "a generated network: path lengths, collective hops, cables"
        self.time_limit = "2h"
        self.topology, self.routing, self.placement = self.combo, "minimal", "graph"
        self.valid_systems = [f"+sim %conf_system={STUDY.system}"]

    @run_before("run")
    def stage_inputs(self):
        """Nothing to stage: the network is generated."""

    @run_after("setup")
    def configure(self):
        resume.skip_if_recorded(self)
        self.simulated = True
        self.num_tasks = 1
        self.executable = cli()
        self.executable_opts = [
            "campaign", "analyse-network", "--kind", self.combo,
            "--switches", str(self.num_nodes), "--seed", str(SPEC["seed"]),
            "--iterations", str(SPEC["iterations"]),
            "--two-opt-up-to", str(SPEC["two_opt_up_to"]),
            "--p2p-switches", str(SPEC["p2p_switches"]),
            "--table-switches", str(SPEC["table_switches"]),
            "--table-ranks", str(SPEC["table_ranks"]),
            "--table-iterations", str(SPEC["table_iterations"]),
            *(["--p2p-system", SPEC["p2p_system"], "--p2p-bytes", str(SPEC["p2p_bytes"])]
              if SPEC["p2p_system"] else []),
            *annealing_options(SPEC.get("annealing")),
            "--rows", wire.NETWORK_ROWS]

    @run_before("run")
    def launch(self):
        """Replaces T2hxCheck.launch: one local process, no routing."""

    @sanity_function
    def completed(self):
        return sn.assert_found(wire.NETWORK_DONE, self.stdout)

    @run_after("sanity")
    def keep_raw_output(self):
        """The whole analysis goes to log/<campaign>/networks/ (the figures need all of it)."""
        keep.keep_files(self, "networks", f"network_{self.combo}_{self.num_nodes}",
                        {wire.NETWORK_ROWS: wire.NETWORK_ROWS})

    @run_before("performance")
    def set_perf_variables(self):
        if self.is_dry_run():
            return
        text = (Path(self.stagedir) / str(self.stdout)).read_text(errors="replace")
        values = wire.network_metrics(text)
        self.perf_variables = {m: sn.make_performance_function(sn.defer(values[m]), unit)
                               for m, unit in UNITS.items() if m in values}


if SPEC:        # a study without networks has no network cases (and no empty parameter)
    rfm.simple_test(NetworkAnalysis)
