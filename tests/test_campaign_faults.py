"""Faults a campaign survives (t2hx/campaign/guard.py): a second run on the same campaign
refuses while the first holds its lock, a kill of ``t2hx campaign run`` takes ReFrame and
its cases with it (the cases at once, though they are not in ReFrame's process group) and
the rerun records every case once, a perflog line cut short is set
aside before anything is appended, and temporaries of a dead run are swept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.campaign import guard
from t2hx.errors import T2hxError
from t2hx.post.perflog import read_perflog

from tests.test_reframe import env_for

T2HX = str(Path(sys.executable).parent / "t2hx")
HOLD = ("import sys, time; from pathlib import Path; from t2hx.campaign import guard\n"
        "with guard.campaign_lock(Path(sys.argv[1]), 'c'):\n"
        "    print('held', flush=True); time.sleep(60)\n")


def test_a_second_run_on_a_locked_campaign_refuses_with_the_first_ones_pid(tmp_path) -> None:
    folder = tmp_path / "work" / "reframe" / "c"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(T2hxError, match=f"campaign c is being run already \\(pid {holder.pid}"):
            with guard.campaign_lock(folder, "c"):
                pass
        # through the CLI: one line, exit 2, before ReFrame starts or provenance is written
        env = env_for(tmp_path, campaign="c")
        out = subprocess.run([T2HX, "campaign", "run", "--system", "sim", "--profile",
                              "quick", "--campaign", "c"], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert f"being run already (pid {holder.pid}" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "log" / "c" / "provenance.json").exists()
    finally:
        holder.kill()
        holder.wait()
    with guard.campaign_lock(folder, "c"):             # a dead holder's lock is free
        pass


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def alive(pids: set[int]) -> set[int]:
    out = set()
    for p in pids:
        try:
            state = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.add(p)
    return out


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except ProcessLookupError:
        return None


def records(log: Path) -> Counter:
    """How often each case was recorded: its passing perflog lines. A case a fault failed
    after its performance stage (its cleanup on a full disk) also has a ``fail`` line, which
    is no record (t2hx/checks/resume.py reruns such a case, ingest skips the line)."""
    keys: Counter = Counter()
    for path in sorted((log / "perflogs").rglob("*.log")):
        for frame in read_perflog(path).frames:
            passed = frame[frame["result"].fillna("").str.strip() == "pass"]
            for row in passed[["benchmark", "combo", "num_nodes", "repetition",
                               "perf_var"]].itertuples(index=False):
                keys[tuple(str(v) for v in row)] += 1
    return keys


def small_campaign(root: Path, name: str) -> tuple[dict, list[str], Path]:
    """(env, command, log folder) of a campaign of ten cheap cases under ``root``."""
    cmd = [T2HX, "-q", "campaign", "run", "--system", "sim", "--profile", "quick",
           "--campaign", name, "--no-report", "--", "-n", "MpiGraph", "-P", "num_nodes=7"]
    return env_for(root, campaign=name), cmd, root / "log" / name


def wait_for_a_record(run: subprocess.Popen, log: Path) -> None:
    """Until the campaign has recorded its first case (and is still running)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and not records(log):
        assert run.poll() is None, f"the campaign ended first: {run.stderr.read()[-2000:]}"
        time.sleep(0.1)
    assert records(log), "the campaign recorded nothing in 240 s"


def test_killing_the_campaign_kills_reframe_and_the_rerun_records_each_case_once(tmp_path
                                                                                ) -> None:
    env, cmd, log = small_campaign(tmp_path, "k")
    run = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    family: set[int] = set()
    try:
        wait_for_a_record(run, log)                               # mid-campaign
        family = descendants(run.pid)
        assert records(log) and family, "the campaign never got going"
        # The cases: ReFrame's local scheduler starts each in a session of its own.
        cases = {p for p in family if _session(p) not in (None, os.getsid(run.pid))}
        run.send_signal(signal.SIGKILL)
        run.wait()
        deadline = time.monotonic() + 5
        while alive(cases) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(cases), "a case outlived the killed campaign by 5 s"
        deadline = time.monotonic() + 60
        while alive(family) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not alive(family), "ReFrame or a case outlived the killed campaign"
    finally:                        # whatever failed, nothing of it may outlive the test
        for pid in alive(family | descendants(run.pid)) | {run.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        run.wait()
    again = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                           timeout=900)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    counts = records(log)
    assert counts and max(counts.values()) == 1, [k for k, n in counts.items() if n > 1]
    assert not [p for p in log.rglob(".*") if p.name.endswith(".tmp") or ".old-" in p.name]


def test_a_cut_perflog_line_is_set_aside_before_the_next_run_appends(tmp_path) -> None:
    folder = tmp_path / "perflogs" / "sim" / "p"
    folder.mkdir(parents=True)
    whole = "a|b|1\nc|d|2\n"
    (folder / "x.log").write_text(whole + "e|f|")
    (folder / "ok.log").write_text(whole)
    said = guard.repair_perflogs(tmp_path / "perflogs")
    assert len(said) == 1 and "x.log" in said[0] and "x.log.cut" in said[0]
    assert (folder / "x.log").read_text() == whole
    assert (folder / "x.log.cut").read_text() == "e|f|\n"
    assert (folder / "ok.log").read_text() == whole
    assert guard.repair_perflogs(tmp_path / "perflogs") == []


def test_temporaries_of_a_dead_run_are_swept_and_nothing_else(tmp_path) -> None:
    runs = tmp_path / "runs" / "case"
    (runs / ".out.abc123.tmp" / "deep").mkdir(parents=True)
    (runs / ".out.abc123.tmp" / "deep" / "f").write_text("x")
    (runs / ".meta.json.q1w2.tmp").write_text("{")
    (runs / ".old.old-4242").mkdir()
    (runs / "out").mkdir()
    (runs / "out" / "keep.txt").write_text("kept")
    (runs / "notes.tmp").write_text("not ours: no leading dot")
    assert guard.sweep_temporaries(tmp_path) == 3
    assert sorted(p.name for p in runs.iterdir()) == ["notes.tmp", "out"]
    assert (runs / "out" / "keep.txt").read_text() == "kept"


def test_reframe_dies_with_its_parent() -> None:
    """The hook on its own: a child started with it by a parent that is then killed."""
    code = ("import os, subprocess, sys, time\nfrom functools import partial\n"
            "from t2hx.campaign import guard\n"
            "p = subprocess.Popen(['sleep', '60'], preexec_fn=partial(guard.die_with_parent, "
            "os.getpid()))\nprint(p.pid, flush=True)\ntime.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert alive({child})
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while alive({child}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive({child})


# A stand-in for ReFrame: its local scheduler starts each case in a session of its own
# (start_new_session), and on SIGTERM it takes its time before cancelling them.
SLOW_REFRAME = ("import signal, subprocess, sys, time\n"
                "case = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
                "print(case.pid, flush=True)\n"
                "signal.signal(signal.SIGTERM, lambda *a: (time.sleep(20), case.kill(), "
                "sys.exit(1)))\n"
                "time.sleep(300)\n")
CAMPAIGN = ("import sys\nfrom t2hx.campaign import guard\n"
            "guard.run_guarded([sys.executable, '-c', sys.argv[1]])\n")


def test_a_killed_campaign_takes_the_cases_of_reframe_with_it_at_once() -> None:
    """SIGKILL of the campaign: its cases (in sessions of their own, which ReFrame's
    process group does not hold) die within seconds, not when ReFrame gets round to
    cancelling them; ReFrame itself is told to stop and is gone after its grace."""
    campaign = subprocess.Popen([sys.executable, "-c", CAMPAIGN, SLOW_REFRAME], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)
    assert campaign.stdout is not None
    case = int(campaign.stdout.readline())
    family = descendants(campaign.pid)
    try:
        assert case in family and alive({case})
        assert os.getsid(case) != os.getsid(campaign.pid)
        campaign.send_signal(signal.SIGKILL)
        campaign.wait()
        deadline = time.monotonic() + 5
        while alive({case}) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive({case}), "a case outlived the killed campaign"
        deadline = time.monotonic() + guard.GRACE + 15
        while alive(family) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not alive(family), "ReFrame or its supervisor outlived the campaign"
    finally:
        for pid in alive(family):
            os.kill(pid, signal.SIGKILL)


def _fill(disk: Path) -> Path:
    """Fill the file system of ``disk`` to the last byte with one ballast file."""
    ballast = disk / "ballast"
    chunk = b"\0" * (1 << 20)
    with open(ballast, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
        try:
            while True:                         # the last partial megabyte too
                f.write(b"\0" * 4096)
        except OSError:
            pass
    return ballast


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a size-limited tmpfs needs root")
def test_a_full_disk_loses_and_duplicates_nothing_and_leaves_no_temporaries(tmp_path) -> None:
    """The campaign's log and work roots on a small tmpfs, filled to the last byte once the
    first case is recorded: the run fails, and after space is freed the rerun records every
    case exactly once, with no cut line and no temporary left behind."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256m", "t2hx-full", str(disk)],
                   check=True)
    try:
        env, cmd, log = small_campaign(disk, "f")
        run = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        wait_for_a_record(run, log)
        ballast = _fill(disk)
        try:
            out, err = run.communicate(timeout=600)
        finally:
            ballast.unlink()
        assert run.returncode != 0, "a full disk went unnoticed"
        assert "Traceback" not in err, err[-3000:]
        again = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                               timeout=900)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        counts = records(log)
        assert len(counts) >= 10 and max(counts.values()) == 1, \
            [k for k, n in counts.items() if n > 1]
        assert not list(log.rglob("*.cut")), "a cut line was left in a perflog"
        left = [p for root in (log, disk / "work") for p in root.rglob(".*")
                if p.name.endswith(".tmp") or ".old-" in p.name]
        assert not left, left
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
