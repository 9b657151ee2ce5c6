"""Batch-job traces (t2hx/history/): Slurm host lists, the SWF and sacct readers, placement
on a system's nodes, 10-minute sampling, and the one-line errors of a malformed trace."""

from __future__ import annotations

import gzip
import json
import lzma
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from t2hx.cli import main
from t2hx.conf import load_system, system_path
from t2hx.history import hostlist
from t2hx.history.sample_routing import REROUTED
from t2hx.history.sampling import place, running, sample_times
from t2hx.history.trace import TraceError, read_trace

MINI = load_system(system_path("mini"))
HOSTS = MINI.hostnames()

SWF_HEADER = "; Version: 2.2\n; MaxNodes: 8\n; MaxProcs: 32\n; UnixStartTime: 1000000\n"
SWF_JOBS = [  # job submit wait run procs ... (18 fields)
    "1 0 10 3600 8 -1 -1 8 3600 -1 1 1 1 -1 1 -1 -1 -1",
    "2 100 20 7200 16 -1 -1 16 7200 -1 1 1 1 -1 1 -1 -1 -1",
    "3 200 -1 100 4 -1 -1 4 100 -1 5 1 1 -1 1 -1 -1 -1",
    "4 300 10 1800 64 -1 -1 64 1800 -1 1 1 1 -1 1 -1 -1 -1",
]
SACCT_HEADER = "JobIDRaw|JobName|Partition|NNodes|NodeList|Submit|Start|End|State"
SACCT_ROWS = [
    "11|a|p|2|m1n[01-02]|2026-11-27T10:00:00|2026-11-27T10:00:05|2026-11-27T11:00:05|COMPLETED",
    "11.batch|batch||1|m1n01|2026-11-27T10:00:05|2026-11-27T10:00:05|2026-11-27T11:00:05|COMPLETED",
    "12|b|p|3|m1n03,m2n[01-02]|2026-11-27T10:10:00|2026-11-27T10:20:00|Unknown|RUNNING",
    "13|c|p|1|None assigned|2026-11-27T10:30:00|Unknown|Unknown|PENDING",
]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_hostlist_expands_what_slurm_prints() -> None:
    assert hostlist.expand("m1n[01-03,07],gpu1") == ["m1n01", "m1n02", "m1n03", "m1n07", "gpu1"]
    assert hostlist.expand("a[8-10]b") == ["a8b", "a9b", "a10b"]
    # several bracket groups, as srun accepts them: the leftmost outermost
    assert hostlist.expand("r[01-02]n[01-02],x") == ["r01n01", "r01n02", "r02n01", "r02n02", "x"]
    for bad in ("a[1-", "a]", "a[3-1]", "a[x]", "a,,b", "a[1][2]", "r[1-2]n[x]", "r[1-2]n[2-1]"):
        with pytest.raises(ValueError):
            hostlist.expand(bad)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(HOSTS), min_size=1, unique=True))
def test_hostlist_compress_round_trips(names: list[str]) -> None:
    assert sorted(hostlist.expand(hostlist.compress(names))) == sorted(names)


def test_swf_jobs_start_after_their_wait_and_take_whole_nodes(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "t.swf", SWF_HEADER + "\n".join(SWF_JOBS) + "\n"))
    assert trace.format == "swf" and trace.epoch == 1_000_000
    assert [(j.id, j.start, j.end, j.nodes) for j in trace.jobs] == [
        ("1", 10, 3610, 2), ("2", 120, 7320, 4), ("4", 310, 2110, 16)]
    assert trace.skipped == {"no start time (wait -1)": 1}


def test_compressed_traces_read_like_plain_ones(tmp_path: Path) -> None:
    text = (SWF_HEADER + "\n".join(SWF_JOBS) + "\n").encode()
    plain = read_trace(write(tmp_path, "t.swf", text.decode()))
    for name, data in (("t.swf.gz", gzip.compress(text)), ("t.swf.xz", lzma.compress(text))):
        (tmp_path / name).write_bytes(data)
        assert read_trace(tmp_path / name).jobs == plain.jobs


def test_first_fit_placement_packs_and_frees_nodes(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "t.swf", SWF_HEADER + "\n".join(SWF_JOBS) + "\n"))
    placement = place(trace, HOSTS)
    assert [j.hosts for j in placement.jobs] == [tuple(HOSTS[0:2]), tuple(HOSTS[2:6]),
                                                 tuple(HOSTS[6:22])]
    # A later job takes the nodes an ended one freed; one wider than the system is counted.
    late = "5 4000 0 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1"
    huge = "6 4000 0 100 1000 -1 -1 1000 100 -1 1 1 1 -1 1 -1 -1 -1"
    trace = read_trace(write(tmp_path, "u.swf", SWF_HEADER + "\n".join(
        SWF_JOBS + [late, huge]) + "\n"))
    placement = place(trace, HOSTS)
    assert placement.jobs[-1].hosts == tuple(HOSTS[0:2])
    assert placement.left_out == {"larger than the system": 1}


def test_least_recent_placement_hands_out_the_nodes_free_longest(tmp_path: Path) -> None:
    late = "5 4000 0 100 8 -1 -1 8 100 -1 1 1 1 -1 1 -1 -1 -1"
    trace = read_trace(write(tmp_path, "u.swf", SWF_HEADER + "\n".join(SWF_JOBS + [late])
                             + "\n"))
    jobs = place(trace, HOSTS, "least-recent").jobs
    assert [j.hosts for j in jobs[:3]] == [tuple(HOSTS[0:2]), tuple(HOSTS[2:6]),
                                           tuple(HOSTS[6:22])]
    # Job 1's nodes were freed last: the late job gets the never-used ones after job 4's.
    assert jobs[-1].hosts == tuple(HOSTS[22:24])


def _overlaps(jobs) -> list[str]:
    """Hosts two jobs hold at once (a placement must never double-book a node)."""
    events = sorted([(j.end, 0, j) for j in jobs] + [(j.start, 1, j) for j in jobs],
                    key=lambda e: (e[0], e[1]))
    held: set[str] = set()
    clash = []
    for _, starts, job in events:
        if starts:
            clash += [h for h in job.hosts if h in held]
            held |= set(job.hosts)
        else:
            held -= set(job.hosts)
    return clash


@pytest.mark.parametrize("policy", ["first-fit", "least-recent", "random"])
def test_no_policy_double_books_a_node_and_each_places_the_same_way_twice(policy: str) -> None:
    from t2hx.history import samples

    system = load_system(system_path("sc16-taurus"))
    trace, placement, _ = samples.load(ATLAS, system, policy=policy)
    assert _overlaps(placement.jobs) == []
    assert placement.jobs == samples.load(ATLAS, system, policy=policy)[1].jobs


def test_the_fragmenting_policies_spread_jobs_over_more_leaves_than_first_fit() -> None:
    from statistics import mean

    from t2hx.history import samples

    from t2hx.fabric.build import build_plane
    from t2hx.routing.sarjobs import leaf_of

    system = load_system(system_path("sc16-taurus"))
    leaf = leaf_of(build_plane(system, "ib"))
    leaf_size = max(Counter(leaf.values()).values())
    excess = {}
    for policy in ("first-fit", "least-recent", "random"):
        jobs = samples.load(ATLAS, system, policy=policy)[1].jobs[5000:8000]
        excess[policy] = mean(len({leaf[h] for h in j.hosts}) / -(-len(j.hosts) // leaf_size)
                              for j in jobs)
    assert 1.0 <= excess["first-fit"] < excess["least-recent"] < excess["random"]


def test_sacct_keeps_node_lists_skips_steps_and_pending_and_runs_open_jobs_to_the_end(
        tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "s.txt", "\n".join([SACCT_HEADER] + SACCT_ROWS) + "\n"),
                       hosts=HOSTS)
    assert trace.format == "sacct"
    assert [(j.id, j.start, j.end, j.hosts) for j in trace.jobs] == [
        ("11", 0, 3600, ("m1n01", "m1n02")),
        ("12", 1195, 3600, ("m1n03", "m2n01", "m2n02"))]
    assert trace.skipped == {"job step (not an allocation)": 1, "never started": 1}


def test_samples_hold_the_jobs_running_at_each_time(tmp_path: Path) -> None:
    trace = read_trace(write(tmp_path, "t.swf", SWF_HEADER + "\n".join(SWF_JOBS) + "\n"))
    jobs = place(trace, HOSTS).jobs
    times = sample_times(jobs, 600)
    assert times[0] == 10 and times[-1] < 7320
    sets = running(jobs, times)
    for t, ids in zip(times, sets):
        assert ids == [i for i, j in enumerate(jobs) if j.start <= t < j.end]


def test_sample_command_writes_the_samples_file(tmp_path: Path, capsys) -> None:
    trace = write(tmp_path, "t.swf", SWF_HEADER + "\n".join(SWF_JOBS) + "\n")
    out = tmp_path / "samples.json"
    assert main(["history", "sample", str(trace), "--system", "mini", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["format"] == "t2hx-history-samples/1" and doc["interval_s"] == 600
    assert [j["hosts"] for j in doc["jobs"]] == ["m1n[01-02]", "m1n[03-06]",
                                                 "m1n[07-16],m2n[01-06]"]
    assert doc["samples"][1] == {"t": 610.0, "jobs": [0, 1, 2]}
    assert "3 placed" in capsys.readouterr().out


MALFORMED = {
    "truncated line": ("t.swf", SWF_HEADER + SWF_JOBS[0] + "\n" + SWF_JOBS[1][:20] + "\n",
                       "line 6: 6 fields where SWF has 18"),
    "cut file": ("t.swf", SWF_HEADER + SWF_JOBS[0] + "\n" + SWF_JOBS[1], "no line end"),
    "negative run": ("t.swf", SWF_HEADER + SWF_JOBS[0].replace(" 3600 8", " -5 8") + "\n",
                     "line 5: run -5 is negative"),
    "negative submit": ("t.swf", SWF_HEADER + "1 -7" + SWF_JOBS[0][3:] + "\n",
                        "submit -7 is negative"),
    "not a number": ("t.swf", SWF_HEADER + SWF_JOBS[0].replace("3600 8", "3600 x") + "\n",
                     "procs 'x' is not a number"),
    "unknown node": ("s.txt", f"{SACCT_HEADER}\n{SACCT_ROWS[0].replace('m1n[01-02]', 'zz9')}\n",
                     "line 2: node 'zz9' is not a node of the system"),
    "end before start": ("s.txt", f"{SACCT_HEADER}\n" + SACCT_ROWS[0].replace(
        "2026-11-27T11:00:05|COMPLETED", "2026-11-27T09:00:05|COMPLETED") + "\n",
                         "End 2026-11-27T09:00:05 is before Start"),
    "bad node list": ("s.txt", f"{SACCT_HEADER}\n{SACCT_ROWS[0].replace('[01-02]', '[02-01')}\n",
                      "NodeList: unbalanced"),
    "missing column": ("s.txt", "JobIDRaw|Start|End\n1|x|y\n", "header has no NodeList"),
    "short sacct row": ("s.txt", f"{SACCT_HEADER}\n11|a|p|2\n", "4 fields where the header"),
    "not a trace": ("x.txt", "hello world\n", "neither an SWF trace nor sacct"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_trace_is_one_line_and_writes_nothing(tmp_path: Path, capsys,
                                                          case: str) -> None:
    name, text, message = MALFORMED[case]
    trace = write(tmp_path, name, text)
    out = tmp_path / "samples.json"
    assert main(["history", "sample", str(trace), "--system", "mini", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and str(trace) in err and "fix:" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_read_trace_refuses_a_damaged_archive(tmp_path: Path) -> None:
    (tmp_path / "t.swf.xz").write_bytes(lzma.compress(b"; x\n")[:-8])
    with pytest.raises(TraceError, match="compressed trace is damaged"):
        read_trace(tmp_path / "t.swf.xz")


ATLAS = Path(__file__).resolve().parents[1] / "conf/traces/LLNL-Atlas-2006-2.1-cln.swf.gz"


def test_the_shipped_atlas_trace_reads_whole() -> None:
    """The archive's LLNL Atlas log: every data line is a job or a counted skip, its start
    times come from the submit field (no arrival times), nodes from 8 cores per node."""
    lines = [ln for ln in gzip.open(ATLAS, "rt") if ln.strip() and not ln.startswith(";")]
    trace = read_trace(ATLAS)
    assert trace.epoch == 1163199901 and trace.procs_per_node() == 8
    assert len(trace.jobs) + sum(trace.skipped.values()) == len(lines) == 43778
    assert set(trace.skipped) == {"did not run (run time 0 or -1)"}
    lo, hi = trace.span
    assert 150 < (hi - lo) / 86400 < 200
    assert max(j.nodes for j in trace.jobs) <= 1152
    ran = sorted(float(ln.split()[1]) for ln in lines if float(ln.split()[3]) > 0)
    assert [j.start for j in trace.jobs] == ran


# ---- the replay (real OpenSM under ibsim on mini's fat-tree plane) -----------------------

def _samples(tmp_path: Path, jobs: list[str], sets: list[list[int]]) -> Path:
    doc = {"format": "t2hx-history-samples/1", "system": "mini", "nodes": len(HOSTS),
           "interval_s": 600.0, "trace": {}, "left_out": {},
           "jobs": [{"id": str(k), "start": 0, "end": 1, "hosts": h} for k, h in enumerate(jobs)],
           "samples": [{"t": 600.0 * k, "jobs": s} for k, s in enumerate(sets)]}
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(doc))
    return path


def test_replay_routes_sar_once_per_multi_switch_job_set(tmp_path: Path, capsys) -> None:
    """mini's fat-tree: 8 leaves of 8 nodes. Job 0 sits on one leaf (not in SAR's set),
    jobs 1 and 2 span leaves; job 3 has job 1's nodes under another id (same set)."""
    jobs = ["m1n[01-04]", "m1n[05-08],m1n[09-12]", "m2n[01-12]", "m1n[05-08],m1n[09-12]"]
    path = _samples(tmp_path, jobs, [[0], [0, 1], [1, 2], [2, 3], [0, 1]])
    out = tmp_path / "out"
    assert main(["-q", "history", "route", str(path), "--system", "mini", "--plane",
                 "fattree", "--out", str(out), "--work", str(tmp_path / "work")]) == 0
    rows = json.loads((out / "replay.json").read_text())
    sar = [r for r in rows if r["engine"] in REROUTED]
    assert [r["multi_switch_jobs"] for r in sar] == [0, 1, 2, 2, 1]
    # Sets: {}, {1}, {1,2}, {2,3}={1,2}, {1}: three distinct, so three SAR routings, and a
    # re-routing only where the set changed.
    assert [r["rerouted"] for r in sar] == [True, True, True, False, True]
    table = json.loads((out / "table1.json").read_text())
    assert table["sar_routings"] == 3 and table["samples"] == 5
    for r in rows:
        assert 0 <= r["dark_fiber"] <= 100
        assert (r["max_efi"] == 0) == (r["multi_switch_jobs"] == 0)
    # The oblivious tables do not depend on the jobs: the same job gives the same numbers.
    ftree = [r for r in rows if r["engine"] == "ftree"]
    assert ftree[1] == {**ftree[4], "t": ftree[1]["t"]}
    assert "5 samples, 3 SAR routings" in capsys.readouterr().out


def test_a_sighup_reroute_gives_the_tables_of_a_fresh_routing(tmp_path: Path) -> None:
    """The replay's SAR session (one OpenSM re-routed by SIGHUP) against a fresh ibsim and
    OpenSM per job set: the same forwarding tables for the same set, whatever came before."""
    import numpy as np

    from t2hx.fabric.build import build_plane
    from t2hx.routing.cache import ensure_routing
    from t2hx.routing.engines import route_args
    from t2hx.routing.lft import load_tables
    from t2hx.routing.sarjobs import job_file_text
    from t2hx.routing.session import Session
    from t2hx.routing_engines import JOBS, RoutingInput

    fabric = build_plane(MINI, "fattree")
    sets = [[tuple(HOSTS[4:12])], [tuple(HOSTS[4:12]), tuple(HOSTS[20:36])]]
    fresh = []
    for k, jobs in enumerate(sets):
        path = tmp_path / f"jobs{k}.txt"
        path.write_text(job_file_text(jobs))
        out = ensure_routing(MINI, "fattree", "sar", None, tmp_path / "fresh", fabric,
                             routing_input=RoutingInput(JOBS, str(path)))
        fresh.append(load_tables(fabric, out).lft)
    assert not np.array_equal(fresh[0], fresh[1])        # the job set changes the routes
    live = tmp_path / "live"
    live.mkdir()
    jobs = live / "jobs.txt"
    jobs.write_text(job_file_text(sets[1]))
    args = route_args(fabric, "sar", MINI.plane("fattree").opensm, MINI.path,
                      routing_input=RoutingInput(JOBS, str(jobs)))
    with Session(fabric, live, "sar", args, jobs) as session:
        assert np.array_equal(load_tables(fabric, live).lft, fresh[1])
        for k in (0, 1, 0):
            session.reroute(job_file_text(sets[k]))
            assert np.array_equal(load_tables(fabric, live).lft, fresh[k]), k
        assert session.reroutes == 3
        opensm = session.procs[-1]
    assert opensm.poll() is not None                     # stopped with the session


def test_improvements_follow_table_1s_reading() -> None:
    from t2hx.history.sample_routing import improvements

    rows = [{"t": t, "engine": e, "max_efi": v, "avg_job_links": v}
            for t, e, v in ((0, "sar", 10), (0, "ftree", 20), (1, "sar", 30), (1, "ftree", 30))]
    assert improvements(rows, "max_efi", "ftree") == {
        "max": 10.0, "max_pct": 50.0, "avg": 5.0, "avg_pct": 25.0}
    # Links per job: higher is better, so SAR's fewer links are a negative improvement.
    assert improvements(rows, "avg_job_links", "ftree")["max"] == 0.0
    assert improvements(rows, "avg_job_links", "ftree")["avg"] == -5.0


@pytest.mark.parametrize("change,message", [
    (lambda d: d.update(system="t2hx"), "placed on t2hx, not mini"),
    (lambda d: d["jobs"][0].update(hosts="zz[1-"), "jobs[0].hosts: not a host list"),
    (lambda d: d["samples"][0].update(jobs=[7]), "samples[0]: needs t and jobs"),
    (lambda d: d["jobs"][0].update(hosts="zz1"), "host 'zz1' is not on plane fattree"),
    (lambda d: d.update(format="x"), "not a t2hx-history-samples/1 file"),
])
def test_replay_refuses_a_samples_file_it_cannot_use(tmp_path: Path, capsys, change,
                                                     message: str) -> None:
    path = _samples(tmp_path, ["m1n[01-04]"], [[0]])
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    out = tmp_path / "out"
    assert main(["-q", "history", "replay", str(path), "--system", "mini", "--plane",
                 "fattree", "--out", str(out), "--work", str(tmp_path / "work")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not out.exists()


def test_real_sacct_output_of_the_test_cluster_reads() -> None:
    """tests/data/history/sacct-testcluster.txt: what Slurm 22.05's sacct printed for the
    jobs of tests/test_sar_watch.py (slurmdbd on MariaDB; CANCELLED states, a host list)."""
    root = Path(__file__).resolve().parents[1]
    system = load_system(root / "docs" / "examples" / "cluster64.yaml")
    trace = read_trace(root / "tests/data/history/sacct-testcluster.txt",
                       hosts=system.hostnames())
    assert trace.format == "sacct"
    assert [(j.id, j.hosts, j.end - j.start) for j in trace.jobs] == [
        ("1", ("cn001", "cn009"), 6), ("2", ("cn002",), 5)]
