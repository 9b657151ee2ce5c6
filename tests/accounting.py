"""Slurm accounting for a test Slurm: a MariaDB server and ``slurmdbd`` from Debian's packages,
run as root in the foreground from one temp directory, so ``sacct`` answers from a real
database as on a site. The database listens on 127.0.0.1 only, with grant tables off (no
users or passwords to set up); slurmdbd reads its ``slurmdbd.conf`` beside ``slurm.conf``.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


class Accounting:
    """``start(spawn, wait)`` with the caller's process spawner and waiter (the daemons then
    stop with the caller's), then ``conf_lines()`` go into slurm.conf."""

    def __init__(self, root: Path, slurm_dir: Path, munge_socket: Path, cluster: str) -> None:
        self.root, self.slurm_dir, self.munge_socket = root, slurm_dir, munge_socket
        self.cluster = cluster
        self.db_port, self.dbd_port = free_port(), free_port()

    def conf_lines(self) -> list[str]:
        return ["AccountingStorageType=accounting_storage/slurmdbd",
                "AccountingStorageHost=127.0.0.1", f"AccountingStoragePort={self.dbd_port}",
                # Messages to slurmdbd take the MUNGE socket from here, not from AuthInfo.
                f"AccountingStoragePass={self.munge_socket}",
                "JobAcctGatherType=jobacct_gather/none"]

    def start(self, spawn: Callable[[str, list[str]], None],
              wait: Callable[[Callable[[], bool], str], None]) -> None:
        db = self.root / "db"
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={db}",
                        "--auth-root-authentication-method=normal", "--user=root",
                        "--skip-test-db"], check=True, capture_output=True, timeout=120)
        spawn("mariadbd", ["mariadbd", "--no-defaults", f"--datadir={db}",
                           f"--port={self.db_port}", "--bind-address=127.0.0.1",
                           f"--socket={self.root}/db.sock", f"--pid-file={self.root}/db.pid",
                           "--user=root", "--skip-grant-tables",
                           "--innodb-buffer-pool-size=16M"])
        wait(lambda: listening(self.db_port), "MariaDB")
        conf = self.slurm_dir / "slurmdbd.conf"
        conf.write_text("\n".join([
            "AuthType=auth/munge", f"AuthInfo=socket={self.munge_socket}",
            "DbdAddr=127.0.0.1", "DbdHost=localhost", f"DbdPort={self.dbd_port}",
            "SlurmUser=root", f"PidFile={self.root}/slurmdbd.pid",
            f"LogFile={self.root}/slurmdbd.log",
            "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
            f"StoragePort={self.db_port}", "StorageUser=root",
            "StorageLoc=slurm_acct_db"]) + "\n")
        os.chmod(conf, 0o600)                # slurmdbd refuses a conf others can read
        spawn("slurmdbd", ["slurmdbd", "-D"])
        wait(lambda: listening(self.dbd_port), "slurmdbd")

    def register(self, env: dict[str, str]) -> None:
        """The cluster in the database before slurmctld starts (its records need it)."""
        out = subprocess.run(["sacctmgr", "-i", "add", "cluster", self.cluster], env=env,
                             capture_output=True, text=True, timeout=60)
        if out.returncode:
            log = (self.root / "slurmdbd.log")
            raise RuntimeError(f"sacctmgr add cluster: {out.stdout} {out.stderr}\n"
                               + (log.read_text()[-2000:] if log.exists() else ""))
