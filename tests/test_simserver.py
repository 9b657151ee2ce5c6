"""The warm simulator (t2hx/simserver.py, t2hx/simclient.py): a case it serves writes what
the same case run cold writes, to the streams the job gave it, with the same exit status;
without a server the command runs cold; a case whose client is gone ends; and the code
version its cases are keyed on is the one of the code it loaded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.flowsim import runcache
from t2hx.simclient import ENV

T2HX = [sys.executable, "-m", "t2hx.cli"]


@pytest.fixture
def server(tmp_path):
    path = tmp_path / "s.sock"
    proc = subprocess.Popen([sys.executable, "-m", "t2hx.simserver", str(path)], cwd=ROOT)
    end = time.monotonic() + 120
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < end, "the server did not start"
        time.sleep(0.05)
    yield path, proc
    proc.terminate()
    proc.wait(10)
    assert not path.exists(), "the server left its socket behind"


def _run(argv: list[str], cwd: Path, sock: Path | None,
         work: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if work is not None:
        env["T2HX_WORK_ROOT"] = str(work)
    if sock is not None:
        env[ENV] = str(sock)
    return subprocess.run([*T2HX, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_a_served_case_writes_what_a_cold_one_writes(server, mini_simulate, tmp_path):
    argv = [*mini_simulate, "--benchmark", "imb", "--collectives", "Allreduce", "--msglog", "0:4"]
    cold = _run(argv, tmp_path, None)
    warm = _run(argv, tmp_path, server[0])
    assert cold.returncode == warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout and "Allreduce" in warm.stdout


def test_errors_keep_their_status_and_line(server, mini_simulate, tmp_path):
    argv = [*mini_simulate, "--benchmark", "imb", "--collectives", "Allreduce", "--msglog", "9:2"]
    cold = _run(argv, tmp_path, None)
    warm = _run(argv, tmp_path, server[0])
    assert cold.returncode == warm.returncode != 0
    assert warm.stderr == cold.stderr and warm.stderr.startswith("t2hx: error:")


def test_the_case_runs_in_the_clients_folder(server, mini_simulate, tmp_path):
    """Relative paths are the job's: the output file lands in its stage folder."""
    stage = tmp_path / "stage"
    stage.mkdir()
    argv = [*mini_simulate, "--benchmark", "mpigraph", "--size", "1024", "--model", "packet",
            "--companion-output", "companion.out"]
    done = _run(argv, stage, server[0])
    assert done.returncode == 0, done.stderr
    assert "mpiGraph" in (stage / "companion.out").read_text()


def test_without_a_server_the_case_runs_cold(mini_simulate, tmp_path):
    argv = [*mini_simulate, "--benchmark", "mpigraph", "--size", "1024"]
    done = _run(argv, tmp_path, tmp_path / "nobody-listens.sock")
    assert done.returncode == 0 and "mpiGraph" in done.stdout


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] \
                    == str(pid):
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def test_a_case_whose_client_is_gone_ends(server, mini_simulate, tmp_path):
    path, proc = server
    argv = [*mini_simulate, "--benchmark", "ebb", "--model", "packet", "--size", "1048576",
            "--rounds", "100000"]
    env = dict(os.environ, **{ENV: str(path)})
    client = subprocess.Popen([*T2HX, *argv], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 60
    while not _children(proc.pid):
        assert time.monotonic() < end and client.poll() is None
        time.sleep(0.05)
    client.send_signal(signal.SIGTERM)
    client.wait(10)
    end = time.monotonic() + 30
    while _children(proc.pid):
        assert time.monotonic() < end, "the served case outlived its client"
        time.sleep(0.1)


def test_the_server_keys_cases_on_the_code_it_loaded(monkeypatch):
    from t2hx import simserver

    monkeypatch.setattr(runcache, "PINNED", None)
    loaded = {"all": runcache.code_version(), "flow": runcache.code_version("flow")}
    simserver.warm()
    assert runcache.PINNED == loaded
    monkeypatch.setattr(runcache, "model_sources", lambda model=None: [])   # "files changed"
    assert runcache.code_version() == loaded["all"]             # still the loaded code's
    assert runcache.code_version("flow") == loaded["flow"]
    assert runcache.code_version("packet") == loaded["all"]


def _listing(folder: Path) -> dict[str, str]:
    """What a routing step left: each entry's link target, or its bytes."""
    return {p.name: os.readlink(p) if p.is_symlink() else p.read_text()
            for p in sorted(folder.iterdir())}


def test_a_served_routing_step_leaves_what_a_cold_one_leaves(server, mini, tmp_path):
    """A PARX case's `t2hx campaign reroute` runs in the server too (t2hx/simclient.py
    SERVED): the first call routes (ibsim and OpenSM under the server's child), the second,
    cold, finds the routing cache's run; both leave the same tables for the case."""
    hosts = tmp_path / "h.txt"
    hosts.write_text("".join(f"{h}\n" for h in mini.hostnames()[8:16]))
    argv = ["campaign", "reroute", "--system", str(mini.path), "--plane", "hyperx",
            "--routing", "parx", "--mode", "sim", "--out", "routing", "--hostfile", str(hosts),
            "--benchmark", "hpl", "--input", '{"gib_per_rank": 1.0, "nb": 192}']
    runs = {}
    for name, sock in (("served", server[0]), ("cold", None)):
        stage = tmp_path / name
        stage.mkdir()
        done = _run(argv, stage, sock, work=tmp_path / "work")
        assert done.returncode == 0, done.stderr
        runs[name] = _listing(stage / "routing")
    assert runs["served"] == runs["cold"] and "opensm-lfts.dump" in runs["cold"]
    assert "demand.txt" in runs["cold"]


def test_the_client_forwards_cases_and_routing_steps_only(tmp_path, monkeypatch):
    """simclient.forward hands `simulate` and `campaign reroute` to the server named by the
    variable, and leaves every other command (e.g. `campaign run`) to run where it is."""
    import json
    import socket
    import threading

    from t2hx import simclient

    path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    seen = []

    def answer():
        while True:
            conn, _ = listener.accept()
            with conn:
                data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
                for fd in fds:
                    os.close(fd)
                seen.append(json.loads(data[simclient.HEADER.size:])["argv"])
                conn.sendall(b"0\n")

    threading.Thread(target=answer, daemon=True).start()
    monkeypatch.setenv(ENV, str(path))
    null = open(os.devnull, "r+")              # streams with descriptors to hand over
    for stream in ("stdin", "stdout", "stderr"):
        monkeypatch.setattr(sys, stream, null)
    for argv in (["simulate", "--help"], ["campaign", "reroute", "--help"]):
        assert simclient.forward(argv) == 0
    for argv in (["campaign", "run"], ["campaign"], ["scorecard", "log/reference"], []):
        assert simclient.forward(argv) is None
    assert seen == [["simulate", "--help"], ["campaign", "reroute", "--help"]]
    listener.close()
    null.close()
