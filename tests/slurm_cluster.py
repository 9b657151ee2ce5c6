"""A real Slurm for the tests: munged, slurmctld and slurmd from Debian's packages, run as
root in the foreground from one temp directory, configured by t2hx.slurmconf from a conf
system. Every daemon is a child of the test process and is stopped by :meth:`stop` (called
from a fixture finalizer, so also when a test fails); tests/conftest.py's stray-process guard
fails the suite if one outlives it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from t2hx.conf import System
from t2hx.slurmconf import SlurmLayout, node_name, slurm_conf

DAEMONS = ("munged", "slurmctld", "slurmd")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def die_with_parent() -> None:
    """In a daemon's child process: SIGTERM when the test process that started it dies, even
    by SIGKILL (a killed pytest worker runs no finalizer)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)    # PR_SET_PDEATHSIG


def command_says(cmd: list[str], env: dict[str, str], *wanted: str) -> bool:
    """``cmd`` succeeds and prints one of ``wanted``."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=30)
    return out.returncode == 0 and any(w in out.stdout for w in wanted)


def wait_for(ready, what: str, procs: dict[str, subprocess.Popen], outputs: Path, logs,
             timeout: float = 60) -> None:
    """Poll ``ready()`` until it holds; fail at once when a daemon of ``procs`` exited (its
    ``<outputs>/<name>.out`` and ``logs()`` in the message), or after ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for name, proc in procs.items():
            if proc.poll() is not None:
                out = (outputs / f"{name}.out").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{name} exited ({proc.returncode}) waiting for {what}: "
                                   f"{out}\n{logs()}")
        if ready():
            return
        time.sleep(0.3)
    raise RuntimeError(f"timed out waiting for {what}\n{logs()}")


class SlurmCluster:
    def __init__(self, system: System, root: Path, cpus: int = 2) -> None:
        self.system = system
        self.layout = SlurmLayout(root, free_port(), free_port())
        self.cpus = cpus
        self.procs: dict[str, subprocess.Popen] = {}

    @property
    def env(self) -> dict[str, str]:
        """The environment of a Slurm client talking to this instance."""
        return {**os.environ, "SLURM_CONF": str(self.layout.conf)}

    @property
    def node(self) -> str:
        return node_name(self.system)

    def start(self) -> SlurmCluster:
        root = self.layout.root
        for sub in ("state", "spool", "munge"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.layout.conf.write_text(slurm_conf(self.system, self.layout, self.cpus))
        self.layout.munge_key.write_bytes(os.urandom(1024))
        os.chmod(self.layout.munge_key, 0o400)
        os.chmod(root / "munge", 0o700)
        munge = root / "munge"
        self._spawn("munged", ["munged", "--foreground", "--force",
                               f"--socket={self.layout.munge_socket}",
                               f"--key-file={self.layout.munge_key}",
                               f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                               f"--seed-file={munge}/munged.seed"])
        self._wait(lambda: self.layout.munge_socket.exists(), "munged socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.layout.conf)])
        self._wait(lambda: self._ok(["scontrol", "ping"], "UP"), "slurmctld")
        self.start_slurmd()
        return self

    def start_slurmd(self) -> None:
        self._spawn("slurmd", ["slurmd", "-D", "-N", self.node, "-f", str(self.layout.conf)])
        self._wait(self._node_up, "slurmd to register", timeout=120)

    def _node_up(self) -> bool:
        """The node answers (no ``*``) and is usable; after a crash it may still be
        completing the killed job's step (``comp``, ``mix-``), which is fine."""
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=self.env,
                             capture_output=True, text=True, timeout=20)
        state = out.stdout.strip()
        return (out.returncode == 0 and bool(state) and not state.endswith("*")
                and not state.startswith(("down", "drain", "fail", "unk")))

    def kill_slurmd(self) -> None:
        """A crashed node daemon (SIGKILL: no clean shutdown)."""
        proc = self.procs.pop("slurmd")
        proc.kill()
        proc.wait()

    def stop(self) -> None:
        for name in reversed(DAEMONS):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        # Job steps slurmd started (slurmstepd) are its children's children: end any left.
        out = subprocess.run(["pgrep", "-f", str(self.layout.root)], capture_output=True,
                             text=True)
        for pid in out.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass

    def run(self, *cmd: str, check: bool = True, timeout: float = 60) -> str:
        out = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True,
                             timeout=timeout)
        if check and out.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {out.stderr.strip()}\n{self.logs()}")
        return out.stdout

    def logs(self) -> str:
        parts = []
        for name in ("slurmctld.log", "slurmd.log"):
            log = self.layout.root / name
            if log.exists():
                parts.append(f"--- {name}\n" + "\n".join(log.read_text().splitlines()[-15:]))
        return "\n".join(parts)

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.layout.root / f"{name}.out", "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            env=self.env, start_new_session=True,
                                            preexec_fn=die_with_parent)

    def _ok(self, cmd: list[str], *wanted: str) -> bool:
        return command_says(cmd, self.env, *wanted)

    def _wait(self, ready, what: str, timeout: float = 60) -> None:
        wait_for(ready, what, self.procs, self.layout.root, self.logs, timeout)
