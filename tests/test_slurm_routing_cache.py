"""The routing cache shared by concurrent jobs (t2hx.routing.cache): a router killed with
SIGKILL mid-routing leaves no entry behind, and a second router waits on the entry's lock
instead of routing the same plane at the same time."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2hx.routing.cache import STAMP, routing_dir
from tests.conftest import MINI

pytestmark = pytest.mark.slurm
ENGINE = "dfsssp"
ROUTER = f"""
import sys
from pathlib import Path
from t2hx.conf import load_system
from t2hx.fabric.build import build_plane
from t2hx.routing.cache import ensure_routing
system = load_system({str(MINI)!r})
fabric = build_plane(system, "hyperx")
print(ensure_routing(system, "hyperx", {ENGINE!r}, 0, Path(sys.argv[1]), fabric))
"""


def router(work: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", ROUTER, str(work)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_under(work: Path) -> None:
    """SIGKILL everything running in or naming ``work`` (the killed job's ibsim/OpenSM:
    on a cluster Slurm's process tracking ends them with the job)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if int(pid) != os.getpid() and (str(work) in cmd or cwd.startswith(str(work))):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def wait_for(cond, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


def test_killed_router_leaves_no_entry_and_routers_take_turns(tmp_path, mini):
    work = tmp_path / "work"
    entry = routing_dir(work, mini, "hyperx", ENGINE, 0)
    temps = lambda: list(entry.parent.glob(f".{entry.name}.*.tmp"))   # noqa: E731
    killed = router(work)
    try:
        wait_for(lambda: temps() and any(temps()[0].iterdir()))      # OpenSM has started
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    finally:
        kill_under(work)
    assert not entry.exists()                 # nothing half-written where readers look
    # A second router while someone holds the lock: it waits, routing nothing meanwhile.
    with open(entry.parent / f".{entry.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        waiting = router(work)
        time.sleep(1.5)
        assert waiting.poll() is None and not entry.exists()
        assert len(temps()) == 1              # only the killed router's leftover
    out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err
    assert Path(out.strip()) == entry and (entry / STAMP).is_file()
    assert temps() == []                      # the leftover was cleaned under the lock
    assert (entry / "opensm-lfts.dump").stat().st_size > 0
    # Two more at once: both find the stamped entry and reuse it (not routed again).
    before = (entry / STAMP).stat().st_mtime_ns
    pair = [router(work), router(work)]
    assert all(p.wait(timeout=120) == 0 for p in pair)
    assert (entry / STAMP).stat().st_mtime_ns == before
