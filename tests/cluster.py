"""A multi-node test cluster on this machine: the nodes of a conf system, each a host of its
own, a Slurm over them, and a subnet-manager host running one OpenSM per plane under ibsim.

Debian's Slurm is built without multiple-slurmd support, so every node is a set of Linux
namespaces instead: its own network (a veth on a bridge, its own address), host name (UTS)
and mount table (its /etc/hosts names every node; its PMIx directory is its own, as on
separate machines). In each runs a real ``slurmd``; ``slurmctld``, ``munged`` and the test
itself stay on the host, on the bridge. Jobs therefore run exactly as on a cluster: sbatch
with ``--nodelist``, ``srun --mpi=pmix --distribution=arbitrary`` with ``SLURM_HOSTFILE``,
``mpirun --hostfile`` inside an allocation, Open MPI between nodes over TCP.

The subnet-manager host (``sm01``, the conf's ``opensm.host``) is one more namespace with,
per plane, ``t2hx sm opensm --ibsim`` (the plane's fabric in ibsim and its OpenSM, restarted
when t2hx switches engines), the routing agent ``t2hx sm serve`` and an ``sshd``: the two
ways a job reaches a real SM host. Everything lives under one temp directory; :meth:`stop`
ends every daemon and removes every namespace and link, also after a failed start.
"""

from __future__ import annotations

import ipaddress
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from t2hx.conf import System
from t2hx.slurmconf import short_hostname
from tests.accounting import Accounting
from tests.slurm_cluster import command_says, die_with_parent, wait_for

T2HX = str(Path(sys.executable).parent / "t2hx")
SM_HOST = "sm01"
AGENT_PORT = 6934


def munge_socket(root: Path) -> Path:
    """Where the MUNGE daemon of the cluster under ``root`` listens."""
    return root / "munge" / "munge.socket"


def ssh_options(root: Path) -> list[str]:
    """ssh options (a conf's opensm.sm.ssh_options) that reach the SM host's sshd."""
    return ["-i", str(root / "ssh" / "id_t2hx"), "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"]


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True, timeout=30)


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 no interface of this machine uses (tests may run side by side)."""
    used = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True, text=True).stdout
    for _ in range(200):
        net = ipaddress.ip_network(f"10.{random.randint(100, 250)}.{random.randint(0, 255)}.0/24")
        if f" {net.network_address + 1}/" not in used and str(net)[:-5] not in used:
            return net
    raise RuntimeError("no free 10.x.y.0/24 subnet for the test cluster")


class TestCluster:
    """``nodes`` of ``system`` as Slurm nodes, and its SM host; ``start()``, then ``stop()``."""

    __test__ = False        # not a pytest class

    def __init__(self, system: System, root: Path, nodes: list[str],
                 accounting: bool = False) -> None:
        self.system, self.root, self.nodes = system, root, nodes
        self.tag = f"{random.randrange(16 ** 4):04x}"
        self.net = free_subnet()
        hosts = list(self.net.hosts())
        self.bridge_ip = str(hosts[0])
        self.addr = {name: str(hosts[10 + i]) for i, name in enumerate([SM_HOST, *nodes])}
        self.procs: dict[str, subprocess.Popen] = {}
        self.links: list[str] = []
        self.netns: list[str] = []
        self.ctld_port, self.slurmd_port = _free_port(), _free_port()
        self.ssh_key = Path(ssh_options(root)[1])
        # sacct from a real slurmdbd and MariaDB (tests/accounting.py), when asked for.
        self.accounting = Accounting(root / "acct", root / "slurm", self.munge_socket,
                                     f"t2hx-test-{self.tag}") if accounting else None

    # --- paths and environment ---------------------------------------------------------------
    @property
    def conf(self) -> Path:
        return self.root / "slurm" / "slurm.conf"

    @property
    def munge_socket(self) -> Path:
        return munge_socket(self.root)

    @property
    def env(self) -> dict[str, str]:
        """A Slurm and MUNGE client's environment (the test, ReFrame, the agent)."""
        return {**os.environ, "SLURM_CONF": str(self.conf),
                "T2HX_MUNGE_SOCKET": str(self.munge_socket)}

    def ns(self, name: str) -> str:
        return f"t2hx{self.tag}-{name}"

    # --- start -------------------------------------------------------------------------------
    def start(self) -> TestCluster:
        sweep_stale()
        try:
            self._network()
            self._munge()
            self._slurm()
            self._sm_host()
        except BaseException:
            self.stop()
            raise
        return self

    def _network(self) -> None:
        bridge = f"t2b{self.tag}"
        ip("link", "add", bridge, "type", "bridge")
        self.links.append(bridge)
        ip("addr", "add", f"{self.bridge_ip}/24", "dev", bridge)
        ip("link", "set", bridge, "up")
        for i, name in enumerate([SM_HOST, *self.nodes]):
            ns, outer, inner = self.ns(name), f"t2{self.tag}h{i}", f"t2{self.tag}n{i}"
            ip("netns", "add", ns)
            self.netns.append(ns)
            with open(self.root / NETNS_RECORD, "a") as record:    # conftest's stray check
                record.write(ns + "\n")
            ip("link", "add", outer, "type", "veth", "peer", "name", inner)
            self.links.append(outer)
            ip("link", "set", outer, "master", bridge, "up")
            ip("link", "set", inner, "netns", ns)
            ip("-n", ns, "addr", "add", f"{self.addr[name]}/24", "dev", inner)
            ip("-n", ns, "link", "set", inner, "up")
            ip("-n", ns, "link", "set", "lo", "up")
        lines = ["127.0.0.1 localhost", f"{self.bridge_ip} {short_hostname()}"]
        lines += [f"{addr} {name}" for name, addr in self.addr.items()]
        (self.root / "hosts").write_text("\n".join(lines) + "\n")

    def _munge(self) -> None:
        m = self.root / "munge"
        m.mkdir(parents=True)
        os.chmod(m, 0o700)
        (m / "munge.key").write_bytes(os.urandom(1024))
        os.chmod(m / "munge.key", 0o400)
        self._spawn("munged", ["munged", "--foreground", "--force",
                               f"--socket={self.munge_socket}", f"--key-file={m}/munge.key",
                               f"--pid-file={m}/munged.pid", f"--log-file={m}/munged.log",
                               f"--seed-file={m}/munged.seed"])
        self._wait(self.munge_socket.exists, "munged")

    def _slurm(self) -> None:
        s = self.root / "slurm"
        for sub in ("state", "node/spool", "node/pmix",
                    *(f"nodes/{n}/{d}" for n in self.nodes for d in ("spool", "pmix"))):
            (s / sub).mkdir(parents=True, exist_ok=True)
        self.conf.write_text(self.slurm_conf())
        if self.accounting is not None:
            (self.root / "acct").mkdir(exist_ok=True)
            self.accounting.start(self._spawn, self._wait)
            self.accounting.register(self.env)
        # srun --mpi=pmix keeps per-step directories under PMIxCliTmpDirBase: a node's own.
        (s / "mpi.conf").write_text(f"PMIxCliTmpDirBase={s}/node/pmix\n")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        self._wait(lambda: self._ok(["scontrol", "ping"], "UP"), "slurmctld")
        for name in self.nodes:
            # A node's local state (spool, PMIx, pid, log) at one path on every node, as on
            # separate machines: Slurm's PMIx plugin addresses another node's step daemon by
            # the configured SlurmdSpoolDir, which must not depend on the node (no %n).
            binds = [(self.root / "hosts", "/etc/hosts"), (s / "nodes" / name, s / "node")]
            self._spawn(f"slurmd-{name}", self.in_node(
                name, ["slurmd", "-D", "-N", name, "-f", str(self.conf)], binds))
        self._wait(self._nodes_idle, "every slurmd to register", timeout=120)

    def slurm_conf(self) -> str:
        s = self.root / "slurm"
        parts = sorted({p for p in (self.system.launcher.get("partition"),
                                    *(v.get("partition") for v in
                                      self.system.launcher.get("planes", {}).values())) if p})
        lines = [
            f"# t2hx test cluster of {self.system.name} (tests/cluster.py)",
            f"ClusterName=t2hx-test-{self.tag}",
            f"SlurmctldHost={short_hostname()}({self.bridge_ip})",
            f"SlurmctldPort={self.ctld_port}", f"SlurmdPort={self.slurmd_port}",
            "AuthType=auth/munge", "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}", "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={s}/state", f"SlurmdSpoolDir={s}/node/spool",
            f"SlurmctldPidFile={s}/slurmctld.pid", f"SlurmdPidFile={s}/node/slurmd.pid",
            f"SlurmctldLogFile={s}/slurmctld.log", f"SlurmdLogFile={s}/node/slurmd.log",
            # Namespaces, not machines: no cgroups, no binding; accounting only if asked.
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            *(self.accounting.conf_lines() if self.accounting else [
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none"]),
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_CPU",
            # Jobs start as soon as nodes free up: a test waits for no scheduler period.
            "SchedulerType=sched/backfill", "SchedulerParameters=sched_interval=2,bf_interval=2",
            "MpiDefault=none", "ReturnToService=2",
            "SlurmdTimeout=60", "InactiveLimit=0", "KillWait=5", "MinJobAge=600",
            "MessageTimeout=30"]
        cpus = os.cpu_count() or 2
        lines += [f"NodeName={n} NodeAddr={self.addr[n]} CPUs={cpus} State=UNKNOWN"
                  for n in self.nodes]
        lines += [f"PartitionName={p} Nodes=ALL Default={'YES' if i == 0 else 'NO'} "
                  "MaxTime=INFINITE State=UP" for i, p in enumerate(parts or ["batch"])]
        return "\n".join(lines) + "\n"

    def _sm_host(self) -> None:
        binds = [(self.root / "hosts", "/etc/hosts")]
        for plane in self.system.planes:
            self._spawn(f"opensm-{plane}", self.in_node(SM_HOST, [
                T2HX, "sm", "opensm", "--system", str(self.system.path), "--plane", plane,
                "--state", str(self.root / "sm" / plane), "--ibsim"], binds))
        if any(p.opensm["sm"]["via"] == "agent" for p in self.system.planes.values()):
            self.start_agent()
        if any(p.opensm["sm"]["via"] == "ssh" for p in self.system.planes.values()):
            self._sshd(binds)
        for plane in self.system.planes:
            log = Path(self.system.plane(plane).opensm["sm"]["log_file"])
            self._wait(lambda log=log: "SUBNET UP" in _text(log), f"OpenSM of plane {plane}",
                       timeout=120)

    def start_agent(self, name: str = "agent", port: int = AGENT_PORT,
                    options: tuple[str, ...] = ()) -> None:
        """The routing agent on the SM host (``t2hx sm serve``)."""
        self._spawn(name, self.in_node(SM_HOST, [
            T2HX, "sm", "serve", "--system", str(self.system.path), "--bind",
            self.addr[SM_HOST], "--port", str(port), *options], [(self.root / "hosts",
                                                                 "/etc/hosts")]))
        self._wait(lambda: _listening(self.addr[SM_HOST], port, self.netns[0]),
                   f"the routing agent on port {port}")

    def _sshd(self, binds: list) -> None:
        d = self.root / "ssh"
        d.mkdir(exist_ok=True)
        for key, kind in ((self.ssh_key, "ed25519"), (d / "host_key", "ed25519")):
            subprocess.run(["ssh-keygen", "-q", "-t", kind, "-N", "", "-f", str(key)],
                           check=True, timeout=30)
        (d / "authorized_keys").write_text((d / "id_t2hx.pub").read_text())
        (d / "sshd_config").write_text("\n".join([
            f"ListenAddress {self.addr[SM_HOST]}", f"HostKey {d}/host_key",
            f"AuthorizedKeysFile {d}/authorized_keys", f"PidFile {d}/sshd.pid",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no", "UsePAM no",
            "StrictModes no", "LogLevel ERROR"]) + "\n")
        # sshd's privilege separation directory, on a /run of the SM host's own.
        self._spawn("sshd", self.in_node(SM_HOST, ["/usr/sbin/sshd", "-D", "-e", "-f",
                                                   str(d / "sshd_config")], binds,
                                         ("mount -t tmpfs tmpfs /run", "mkdir -m 755 /run/sshd")))
        self._wait(lambda: _listening(self.addr[SM_HOST], 22, self.netns[0]), "sshd")

    # --- processes -----------------------------------------------------------------------------
    def in_node(self, name: str, cmd: list[str], binds: list[tuple[Path, Path]],
                setup: tuple[str, ...] = ()) -> list[str]:
        """``cmd`` as a process of node ``name``: its network, host name and mounts."""
        steps = [f"mount --bind {shlex.quote(str(a))} {shlex.quote(str(b))}" for a, b in binds]
        script = " && ".join([*steps, *setup, f"hostname {name}", f"exec {shlex.join(cmd)}"])
        return ["nsenter", f"--net=/run/netns/{self.ns(name)}", "unshare", "--uts", "--mount",
                "sh", "-c", script]

    def run(self, *cmd: str, check: bool = True, timeout: float = 120,
            cwd: Path | None = None) -> str:
        out = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True,
                             timeout=timeout, cwd=cwd)
        if check and out.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {out.stderr.strip()}\n{self.logs()}")
        return out.stdout

    def node_run(self, name: str, cmd: list[str], timeout: float = 300
                 ) -> subprocess.CompletedProcess:
        """Run ``cmd`` on node ``name`` (its names resolve as on the cluster) and wait."""
        return subprocess.run(self.in_node(name, cmd, [(self.root / "hosts", "/etc/hosts")]),
                              env=self.env, capture_output=True, text=True, timeout=timeout)

    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.root / f"{name}.out", "w")
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            env=self.env, start_new_session=True,
                                            preexec_fn=die_with_parent,
                                            stdin=subprocess.DEVNULL)

    def stop_process(self, name: str) -> None:
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        for name in reversed(list(self.procs)):
            try:
                self.stop_process(name)
            except ProcessLookupError:
                pass
        # Job steps (slurmstepd and their ranks) and OpenSM children outlive their daemons'
        # process groups: end whatever still runs from this cluster's directory.
        out = subprocess.run(["pgrep", "-f", str(self.root)], capture_output=True, text=True)
        for pid in out.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for ns in self.netns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        for link in self.links:
            subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=30)
        self.netns, self.links = [], []

    # --- waiting -------------------------------------------------------------------------------
    def _ok(self, cmd: list[str], *wanted: str) -> bool:
        return command_says(cmd, self.env, *wanted)

    def _nodes_idle(self) -> bool:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env,
                             capture_output=True, text=True, timeout=30)
        states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
        return set(states) == set(self.nodes) and all(s == "idle" for s in states.values())

    def _wait(self, ready, what: str, timeout: float = 60) -> None:
        wait_for(ready, what, self.procs, self.root, self.logs, timeout)

    def logs(self) -> str:
        parts = []
        for log in sorted([*self.root.glob("*.out"), *(self.root / "slurm").glob("*.log"),
                           *(self.root / "slurm").glob("nodes/*/slurmd.log")]):
            parts.append(f"--- {log.name}\n" + "\n".join(_text(log).splitlines()[-12:]))
        return "\n".join(parts)


NETNS = Path("/run/netns")
#: The namespaces a cluster made, listed in its folder: the suite's end checks only its own
#: (another test run on the machine may have a cluster up at the time).
NETNS_RECORD = ".t2hx-netns"
STALE_AFTER = 600       # seconds: a cluster still starting up is younger


def sweep_stale() -> None:
    """Remove what a killed test run left behind (no finalizer runs on SIGKILL): test
    cluster namespaces without a process that are older than STALE_AFTER, then bridges
    whose namespaces are all gone. A live cluster's namespaces hold its daemons."""
    now, tags = time.time(), set()
    for ns in NETNS.glob("t2hx*-*"):
        tag = ns.name[4:8]
        pids = subprocess.run(["ip", "netns", "pids", ns.name], capture_output=True,
                              text=True).stdout.split()
        if pids or now - ns.stat().st_mtime < STALE_AFTER:
            tags.add(tag)
            continue
        subprocess.run(["ip", "netns", "del", ns.name], capture_output=True)
    links = subprocess.run(["ip", "-o", "link", "show", "type", "bridge"],
                           capture_output=True, text=True).stdout
    for name in (line.split(":")[1].strip() for line in links.splitlines()):
        if name.startswith("t2b") and len(name) == 7 and name[3:] not in tags:
            subprocess.run(["ip", "link", "del", name], capture_output=True)


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _listening(host: str, port: int, netns: str) -> bool:
    out = subprocess.run(["ip", "netns", "exec", netns, "ss", "-Hltn", f"src {host}:{port}"],
                         capture_output=True, text=True, timeout=30)
    return bool(out.stdout.strip())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
