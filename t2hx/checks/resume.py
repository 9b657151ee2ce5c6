"""Resume: a case that already has a passing perflog record in its campaign is skipped.

The record is the perflog line (t2hx.post.perflog), keyed by (benchmark, combo, num_nodes,
repetition) within log/<campaign>/perflogs/<system>/<partition>/. ReFrame writes it only when
the case has finished, after the case's raw outputs were stored (base.keep_raw_output), and a
line cut short by a kill is ignored by the reader, so an interrupted campaign reruns exactly
the cases without a complete record. Set T2HX_RESUME=0 to rerun everything.
"""

from __future__ import annotations

import os
from functools import cache

from t2hx.post.perflog import recorded_cases
from t2hx.paths import log_root


@cache
def recorded(campaign: str, system: str, partition: str) -> frozenset:
    """Keys of the cases with a passing record (read once per ReFrame session)."""
    return recorded_cases(log_root() / campaign / "perflogs" / system / partition)


def case_key(check) -> tuple:
    return (check.benchmark, check.combo, str(check.num_nodes), str(check.repetition))


def skip_if_recorded(check) -> None:
    if os.environ.get("T2HX_RESUME", "1") == "0" or check.is_dry_run():
        return
    done = recorded(check.campaign, check.current_system.name, check.current_partition.name)
    check.skip_if(case_key(check) in done,
                  f"already recorded in campaign {check.campaign} (resume)")
