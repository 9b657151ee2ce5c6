"""What keeps a campaign's records whole across faults: one run per campaign at a time (a lock
on ``log/<campaign>/``), a perflog whose last line a kill or a full disk cut short set aside
before anything is appended to it, temporary files and directories of an earlier run swept,
and ReFrame (with the cases it runs) dying with the ``t2hx campaign run`` that started it.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.errors import T2hxError

LOCK = ".campaign.lock"
#: Names t2hx.atomic leaves behind when a process dies mid-write: staged files and
#: directories, and a directory moved aside to be replaced.
LEFTOVERS = (".*.tmp", ".*.old-*")
PR_SET_PDEATHSIG = 1


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
