"""A campaign's warm simulator: one process that has imported the model once and forks a
child per case (``python -m t2hx.simserver SOCKET``; ``t2hx campaign run`` starts one on
the simulated systems and names it in ``T2HX_SIM_SERVER``, t2hx/simclient.py is the
other side).

A cold ``t2hx simulate`` spends most of a cache hit importing numpy and the model and
hashing the model's sources for the run-cache key (bench/campaign.py records both ways).
Here a case's child starts with all of that done. The child takes the client's working
directory, environment and standard streams (passed as file descriptors, so the output goes
where the job script sent it) and runs the same command-line entry point.

The run-cache key's promise, that a changed model simulates anew, holds as before: the
server imports every module of the model and digests their sources before it serves, so the
code that runs and the code version in every key it writes are the same, even if the
sources change while the campaign runs (the next campaign session starts a new server). A
child whose client is gone (ReFrame cancelled the job) ends with everything it started, and
a server that stops takes its running cases with it."""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path

from t2hx.campaign.guard import kill_descendants
from t2hx.simclient import ENV, HEADER

#: Modules the model loads lazily that every simulating case needs, and those of the routing
#: step a PARX or SAR case runs first (t2hx campaign reroute: demand, re-route, its command).
WARM = ("numpy", "t2hx.simulation", "t2hx.flowsim.models", "t2hx.flowsim.noise",
        "t2hx.flowsim.runcache", "t2hx.commands.simulate", "t2hx.traffic",
        "t2hx.routing.reroute", "t2hx.commands.campaign")


def warm() -> None:
    """Imports the model (every module its code version covers) and fixes its version."""
    from t2hx import ROOT
    from t2hx.flowsim import runcache
    from t2hx.imports import module_name

    for name in WARM:
        importlib.import_module(name)
    versions = {"all": runcache.code_version(),      # the sources as they are imported
                runcache.FLOW: runcache.code_version(runcache.FLOW)}
    for path in runcache.model_sources():
        if path.suffix == ".py" and path.is_relative_to(ROOT / "t2hx"):
            importlib.import_module(module_name(path))
    if runcache.code_version() != versions["all"]:
        raise SystemExit("simulation server: the model's sources changed while it loaded "
                         "them (fix: start the campaign again once the edit is done)")
    runcache.PINNED = versions


def serve(path: Path) -> None:
    """Accepts cases on the Unix socket ``path`` until terminated."""
    warm()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # bound and listening before it appears under its name: a client that finds it connects
    part = path.with_name(path.name + ".part")
    part.unlink(missing_ok=True)
    listener.bind(str(part))
    listener.listen(64)
    os.replace(part, path)
    # reaped as they end, so their CPU time adds up in the server's (bench/campaign.py)
    signal.signal(signal.SIGCHLD, _reap)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                _case(conn)                            # never returns
            conn.close()
    finally:
        listener.close()
        path.unlink(missing_ok=True)
        kill_descendants(os.getpid())                  # cases still running end with it


def _reap(*_: object) -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < HEADER.size or len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise ConnectionError("the client left before its request was complete")
        data += more
    return json.loads(data[HEADER.size:]), list(fds)


def _case(conn: socket.socket) -> None:
    """In the forked child: one case, then exit."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the case waits on its own children
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setpgid(0, 0)
        request, fds = _receive(conn)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.pop(ENV, None)                      # the case runs here, not again there
        threading.Thread(target=_watch, args=(conn,), daemon=True).start()
        from t2hx import cli

        code = cli.main(request["argv"])
    except BaseException as err:                       # noqa: BLE001 - reported, then exit
        print(f"t2hx: error: simulation server: {type(err).__name__}: {err}", file=sys.stderr)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            conn.sendall(f"{code}\n".encode())
        except OSError:
            pass
        os._exit(code)


def _watch(conn: socket.socket) -> None:
    """Ends the case and everything it started (OpenSM, ibsim) when its client goes away."""
    try:
        conn.recv(1)
    except OSError:
        pass
    kill_descendants(os.getpid())
    os._exit(143)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m t2hx.simserver SOCKET", file=sys.stderr)
        return 2
    serve(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
