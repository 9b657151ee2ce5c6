"""Every wire format of t2hx/wire.py round-trips: what a writer renders, the reader parses
back to the same values."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pytest

from t2hx import ROOT, wire
from t2hx.post.perflog import read_perflog


def test_simulated_header_round_trips() -> None:
    pairs = {"fabric": "mini/hyperx", "routing": "dfsssp", "hostfile": "hostfiles/a b.txt",
             "model": "maxmin", "compute_scale": 10.0, "noise": "lognormal:cv=0.3:seed=7"}
    line = wire.sim_header(pairs)
    assert line.startswith(wire.SIM_MARKER + " fabric=mini/hyperx ") and line.endswith("\n")
    assert line.count("\n") == 1
    header = wire.parse_sim_header(line.rstrip("\n"))
    assert header == wire.SimHeader({k: str(v) for k, v in pairs.items()}, None)
    capacity = wire.sim_header({"system": "mini", "window": "0.5"}, kind="capacity")
    assert capacity == "# t2hx-simulated: capacity system=mini window=0.5\n"
    assert wire.parse_sim_header(capacity) == wire.SimHeader(
        {"system": "mini", "window": "0.5"}, "capacity")
    body, meta = wire.split_simulated(line + "rest\nof it\n")
    assert body == "rest\nof it\n" and meta == header.pairs
    assert wire.split_simulated("real output\n") == ("real output\n", None)
    assert wire.parse_sim_header("# t2hx simulated: x=1") is None


@pytest.mark.parametrize("seconds", [0.0, 1.5, 12.345678, 3600.25, 1e-6])
def test_walltime_line_round_trips(seconds: float) -> None:
    line = wire.walltime_line(seconds)
    assert wire.walltimes(f"noise\n{line}\nmore\n") == [f"{seconds:.6f}"]
    assert float(wire.walltimes(line)[0]) == pytest.approx(seconds, abs=5e-7)
    for bad in (line.replace(" s", " ms"), "# " + line, line.replace(": ", ":  ")):
        assert wire.walltimes(bad) == []


def test_capacity_lines_round_trip() -> None:
    lines = [wire.capacity_line("finished", app="amg", run=0, start="0.000", end="1.250"),
             wire.capacity_line("cut", app="hpl", run=3, start="10", end="20"),
             wire.capacity_line("failed", app="mupp", run=1, status=137, start="5", end="6")]
    assert lines[0] == "T2HX capacity finished: app=amg run=0 start=0.000 end=1.250"
    text = "\n".join([wire.sim_header({"window": "20"}, kind="capacity"), *lines,
                      wire.CAPACITY_ABORTED, wire.CAPACITY_CLOSED]) + "\n"
    events = wire.capacity_events(text)
    assert [(e.event, e.app, e.run) for e in events] == [("finished", "amg", 0),
                                                          ("cut", "hpl", 3),
                                                          ("failed", "mupp", 1)]
    assert events[0].fields == {"app": "amg", "run": "0", "start": "0.000", "end": "1.250"}
    assert events[2].fields["status"] == "137"
    for line, event in zip(lines, ("finished", "cut", "failed")):
        assert line.startswith(wire.capacity_mark(event) + " ")
    with pytest.raises(ValueError):
        wire.capacity_mark("nosuch")


def test_workload_lines_round_trip() -> None:
    jobs = [wire.WorkloadJob(0, "swfft", 16, 12, 0.125, 20, 0.0625),
            wire.WorkloadJob(1, "minife", 8, 3, 1.23456789, 3, 1.2)]
    text = "".join(wire.workload_line(j) + "\n" for j in jobs) + wire.WORKLOAD_CLOSED + "\n"
    assert wire.workload_jobs(text) == jobs
    none = wire.WorkloadJob(2, "amg", 4, 0, math.nan, 0, math.nan)    # no step in the window
    back = wire.workload_jobs(wire.workload_line(none))[0]
    assert back.steps == 0 and math.isnan(back.step_s) and math.isnan(back.alone_step_s)


def test_run_metadata_round_trips(tmp_path: Path) -> None:
    meta = {"benchmark": "imb-bcast", "campaign": "c", "system": "sim",
            "partition": "mini-hyperx", "topology": "hyperx", "routing": "dfsssp",
            "placement": "linear", "combo": "hx-dfsssp-linear", "nodes": 8, "repetition": 1,
            "msg_size": None, "git_hash": "abc", "simulated": True,
            "timestamp": wire.run_timestamp(), "input": {"msglog": "0:22"},
            "sim": {"cache": "hit", "repeat_of": 0}}
    path = tmp_path / wire.RUN_META
    path.write_text(wire.run_meta_text(meta))
    assert wire.parse_run_meta(path.read_text()) == meta
    stamp = dt.datetime.fromisoformat(meta["timestamp"])
    assert stamp.tzinfo is not None and set(wire.RUN_META_KEYS) <= set(meta)
    for bad, why in (({"nodes": 3}, "benchmark"), ({**meta, "nodes": [8]}, "'nodes'")):
        with pytest.raises(ValueError, match=why):
            wire.parse_run_meta(wire.run_meta_text(bad))


def test_perflog_line_round_trips(tmp_path: Path) -> None:
    values = {"system": "sim", "partition": "mini-hyperx", "campaign": "c",
              "combo": "hx-dfsssp-linear", "benchmark": "imb-bcast", "num_nodes": "8",
              "repetition": "1", "msg_size": "4194304", "simulated": "True",
              "perf_var": "t_min", "perf_value": "12.5", "perf_unit": "us", "result": "pass"}
    line = wire.perflog_line(**values)
    back = wire.perflog_values(line)
    assert {k: v for k, v in back.items() if v is not None} == values
    assert set(back) == set(wire.PERFLOG_FIELDS)
    path = tmp_path / "IMB.log"
    path.write_text(wire.PERFLOG_HEADER + "\n" + line + "\n")
    frame = read_perflog(path).frames[0]
    assert {k: frame[k].iloc[0] for k in values} == values
    with pytest.raises(ValueError, match="no perflog field"):
        wire.perflog_line(nodes=8)
    with pytest.raises(ValueError, match="fields"):
        wire.perflog_values("a|b")


def test_a_cut_run_far_longer_than_its_apps_finished_runs_is_stalled() -> None:
    """Real driver outputs of the test cluster (tests/data/capacity/README.md): the hung run
    after a finished one is found; a first run that hung leaves no finished run to compare
    (the check fails that app on its count); the window's ordinary cuts are not stalls."""
    data = ROOT / "tests" / "data" / "capacity"

    def stalls(name: str) -> list[tuple[str, int]]:
        events = wire.capacity_events((data / name).read_text())
        return [(e.app, e.run) for e in wire.stalled_runs(events)]

    assert stalls("slurm-pmix-hang-late.out") == [("hpl-b", 1)]
    assert stalls("slurm-pmix-hang.out") == []
    assert stalls("healthy.out") == []
    events = wire.capacity_events((data / "healthy.out").read_text())
    assert wire.stalled_runs(events, factor=0.1)       # the healthy cuts are short, not absent
