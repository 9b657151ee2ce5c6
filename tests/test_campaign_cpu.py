"""A campaign run records how busy the machine's cores were while it ran (provenance.json
runs[].cpu), and bench/paper_scale.py turns a log's reports into slot occupancy: the
packing #46 asks to measure."""

from __future__ import annotations

import json
import os
import time

from t2hx.campaign.provenance import cpu_times, record_cpu
from t2hx import ROOT


def test_cpu_times_count_a_busy_loop(tmp_path) -> None:
    before = cpu_times()
    assert before is not None
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    after = cpu_times()
    assert after[0] - before[0] >= 0.25          # our own busy loop, at least
    assert after[1] - before[1] >= after[0] - before[0] - 1e-6     # ticks as floats


def test_record_cpu_adds_to_the_last_run(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("T2HX_LOG_ROOT", str(tmp_path))
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "provenance.json").write_text(json.dumps({"runs": [{"date": "a"},
                                                                        {"date": "b"}]}))
    before = cpu_times()
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass
    record_cpu("c", before, 0.5)
    runs = json.loads((tmp_path / "c" / "provenance.json").read_text())["runs"]
    assert "cpu" not in runs[0]
    cpu = runs[1]["cpu"]
    assert cpu["cores"] == os.cpu_count() and cpu["wall_s"] == 0.5
    assert cpu["busy_s"] >= 0.15 and 0 < cpu["busy_fraction"] <= 1


def _report(jobs: list[tuple[float, float]], start: float, end: float) -> dict:
    cases = [{"job_submit_time": a, "job_completion_time_unix": b, "result": "pass"}
             for a, b in jobs]
    return {"session_info": {"time_start_unix": start, "time_end_unix": end},
            "runs": [{"testcases": cases}]}


def test_slot_occupancy_of_a_session() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("paper_scale", ROOT / "bench" /
                                                  "paper_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # two slots: one job 0-10, another 0-5, nothing 10-20: (10 + 5) / (2 x 20)
    got = mod.packing(_report([(0, 10), (0, 5)], 0, 20), cores=2)
    assert got["efficiency"] == 0.375 and got["under_cores_s"] == 15.0
    # three jobs at once fill two slots, no more
    assert mod.packing(_report([(0, 10)] * 3, 0, 10), cores=2)["efficiency"] == 1.0
