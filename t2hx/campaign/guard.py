"""What keeps a campaign's records whole across faults: one run per campaign at a time (a lock
on ``log/<campaign>/``), a perflog whose last line a kill or a full disk cut short set aside
before anything is appended to it, temporary files and directories of an earlier run swept,
and ReFrame with the cases it runs dying with the ``t2hx campaign run`` that started it.

ReFrame runs under a small supervisor (``python -m t2hx.campaign.guard -- reframe ...``,
:func:`run_guarded`) that dies with the campaign (PR_SET_PDEATHSIG). ReFrame's local
scheduler starts each case in a session of its own, so the cases are not in ReFrame's
process group and ReFrame's own cancel takes seconds; the supervisor is their subreaper
(PR_SET_CHILD_SUBREAPER: they stay its descendants even when ReFrame is gone) and kills
every one of them at once, while ReFrame, sent SIGTERM, cancels its batch jobs (scancel)
and exits (docs/cluster.md#faults).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.errors import T2hxError

LOCK = ".campaign.lock"
#: Names t2hx.atomic leaves behind when a process dies mid-write: staged files and
#: directories, and a directory moved aside to be replaced.
LEFTOVERS = (".*.tmp", ".*.old-*")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: Seconds ReFrame gets after SIGTERM to cancel its batch jobs and exit, before it and
#: whatever is left of its helpers are killed.
GRACE = 30.0


@contextmanager
def campaign_lock(folder: Path, campaign: str) -> Iterator[None]:
    """Hold the campaign's lock (a file in ``folder``: its ReFrame stage and output under the
    work root, which two runs would share) for the block; a second run on the same campaign
    refuses with the first one's pid. The kernel drops the lock when its holder dies, however
    it dies."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            raise T2hxError(f"campaign {campaign} is being run already ({holder})",
                            field="--campaign", fix="wait for that run to end, or use another "
                            "--campaign name") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                  .encode(), 0)
        yield
    finally:
        os.close(fd)


def repair_perflogs(folder: Path) -> list[str]:
    """Set aside the cut last line of every perflog under ``folder`` (into ``<log>.cut``)
    so the next record starts on a line of its own; one message per file repaired."""
    said = []
    for path in sorted(folder.rglob("*.log")) if folder.is_dir() else []:
        data = path.read_bytes()
        if not data or data.endswith(b"\n"):
            continue
        keep = data.rfind(b"\n") + 1
        with open(path.with_name(path.name + ".cut"), "ab") as cut:
            cut.write(data[keep:] + b"\n")
        atomic_write(path, data[:keep])
        said.append(f"{path}: its last line was cut short (a kill or a full disk); set aside in "
                    f"{path.name}.cut")
    return said


def sweep_temporaries(folder: Path) -> int:
    """Remove the temporary files and directories (``.<name>.<random>.tmp``) a dead run left
    under ``folder``; how many. Only called with the campaign's lock held."""
    import shutil

    gone = 0
    found = {p for pattern in LEFTOVERS for p in folder.rglob(pattern)} if folder.is_dir() \
        else set()
    for path in sorted(found, reverse=True):
        if not os.path.lexists(path):           # inside a leftover removed before it
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        gone += 1
    return gone


def die_with_parent(parent: int) -> None:
    """In a child between fork and exec: SIGTERM when ``parent`` dies (Linux), so a killed
    ``t2hx campaign run`` leaves no ReFrame behind; ReFrame then cancels its running jobs.
    A parent already gone before the request took effect ends the child at once."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def run_guarded(cmd: list[str], **popen: object) -> int:
    """Run ``cmd`` (ReFrame) under the supervisor; its exit status. Ctrl-C reaches ReFrame
    from the terminal (same process group): wait for it to wind down instead of killing
    it, which would leave its cases behind."""
    return _supervised(cmd, popen)[0]


def run_in_turn(cmds: list[list[str]], **popen: object) -> int:
    """Each command in turn as :func:`run_guarded` runs it; the first non-zero status. A
    command runs after another one failed, not after one was interrupted (Ctrl-C)."""
    status = 0
    for cmd in cmds:
        code, interrupted = _supervised(cmd, popen)
        status = status or code
        if interrupted:
            break
    return status


def _supervised(cmd: list[str], popen: dict[str, object]) -> tuple[int, bool]:
    """(exit status, whether Ctrl-C came while it ran)."""
    guard = subprocess.Popen([sys.executable, "-c", SUPERVISOR, "--", *cmd],
                             preexec_fn=partial(die_with_parent, os.getpid()),
                             **popen)  # type: ignore[call-overload]
    interrupted = False
    while True:
        try:
            return guard.wait(), interrupted
        except KeyboardInterrupt:
            interrupted = True


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, session, ...)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def descendants(pid: int) -> dict[int, int]:
    """Every live descendant of ``pid``: pid -> its session."""
    children: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append((int(entry), int(fields[3])))
    out: dict[int, int] = {}
    todo = [pid]
    while todo:
        for child, session in children.get(todo.pop(), []):
            out[child] = session
            todo.append(child)
    return out


def _kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def kill_descendants(pid: int) -> None:
    """SIGKILL to every live descendant of ``pid`` (the warm simulator's cases and what
    they started, t2hx/simserver.py: they are not ReFrame's, so kill_cases cannot see
    them)."""
    _kill(list(descendants(pid)))


class _Stop(Exception):
    """The campaign died (PDEATHSIG) or was told to stop."""


def _stop(signum: int, frame: object) -> None:
    raise _Stop


def kill_cases(reframe: subprocess.Popen) -> None:
    """SIGTERM to ReFrame (it cancels its batch jobs with scancel and exits); SIGKILL at
    once to every descendant outside this session (the cases: ReFrame's local scheduler
    gives each its own), again while ReFrame winds down; after GRACE seconds, everything."""
    own = os.getsid(0)
    reframe.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while reframe.poll() is None and time.monotonic() < deadline:
        _kill([p for p, session in descendants(os.getpid()).items() if session != own])
        time.sleep(0.2)
    _kill(list(descendants(os.getpid())))
    reframe.wait()


def supervise(cmd: list[str]) -> int:
    """Run ``cmd`` as this process's child; when this process is told to stop (the
    campaign died: PDEATHSIG), take it and every process it started with it."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the terminal's Ctrl-C is ReFrame's
    reframe = None
    try:
        reframe = subprocess.Popen(cmd, preexec_fn=_child_of(os.getpid()))
        while (status := _wait(reframe, 5.0)) is None:
            _reap_orphans(reframe.pid)
    except _Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if reframe is not None:
            kill_cases(reframe)
        return 128 + signal.SIGTERM
    _kill(list(descendants(os.getpid())))      # nothing may outlive the campaign
    return status


def _wait(proc: subprocess.Popen, seconds: float) -> int | None:
    try:
        return proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return None


def _reap_orphans(keep: int) -> None:
    """Collect the exit status of orphans handed to this subreaper that have ended (they
    would stay zombies, holding their pids, for the whole campaign); never ReFrame's."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        fields = _stat(int(entry)) if entry.isdigit() and int(entry) != keep else None
        if fields and fields[0] == "Z" and fields[1] == me:
            try:
                os.waitpid(int(entry), os.WNOHANG)
            except ChildProcessError:
                pass


def _child_of(parent: int):
    def setup() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)   # not inherited as ignored
        die_with_parent(parent)
    return setup


def main(args: list[str]) -> int:
    return supervise(args[1:] if args[:1] == ["--"] else args)


#: The supervisor's command line (``-c``: ``-m`` would import this module twice).
SUPERVISOR = "import sys; from t2hx.campaign.guard import main; sys.exit(main(sys.argv[1:]))"
