"""The routing agent: a daemon on a plane's OpenSM host that routes the plane on behalf of
jobs, so the job user needs neither ssh to the SM host nor rights on OpenSM
(docs/cluster.md#the-routing-agent).

It runs as the user that may drive OpenSM (root or OpenSM's own) and trusts no network
peer: every request carries a MUNGE credential, the authentication Slurm itself uses, whose
payload is the request header (plane, engine, LMC, input kind, the input's sha256 and size);
MUNGE proves the user's uid and refuses a replayed credential. Requests of one plane are
served one at a time (two jobs must not route one plane at once); each is
:func:`t2hx.routing.smhost.apply`.

Wire format (TCP, one request per connection): the client sends the credential on one line,
then exactly ``size`` bytes of input; the agent answers with one JSON line,
``{"ok": true, "result": {...}}`` or ``{"ok": false, "error": "<one line>"}``.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import signal
import socket
import socketserver
import subprocess
import sys
import threading
from dataclasses import asdict

from t2hx.conf import System
from t2hx.errors import RoutingError, T2hxError
from t2hx.routing import smhost

PROTOCOL = 1
MAX_LINE = 64 * 1024
MAX_INPUT = 64 * 1024 * 1024      # a demand file of 4,096 nodes with all pairs is ~100 MB/3
MUNGE_SOCKET_ENV = "T2HX_MUNGE_SOCKET"


def _munge_args() -> list[str]:
    sock = os.environ.get(MUNGE_SOCKET_ENV)
    return ["--socket", sock] if sock else []


def munge_encode(payload: bytes) -> str:
    try:
        done = subprocess.run(["munge", *_munge_args()], input=payload, capture_output=True,
                              timeout=30)
    except FileNotFoundError:
        raise RoutingError("munge is not installed on this node", field="opensm.sm.via",
                           fix="install MUNGE (Debian package munge) or use via: ssh") from None
    if done.returncode:
        raise RoutingError(f"munge failed: {done.stderr.decode(errors='replace').strip()}",
                           field=MUNGE_SOCKET_ENV, fix="check that munged runs on this node "
                           "(or point T2HX_MUNGE_SOCKET at its socket)")
    return done.stdout.decode().strip()


def munge_decode(cred: str) -> tuple[int, bytes]:
    """(uid, payload) of a valid, fresh, not replayed credential; RoutingError otherwise."""
    done = subprocess.run(["unmunge", *_munge_args(), "--metadata=/dev/stderr",
                           "--keys=UID,STATUS"], input=cred.encode(), capture_output=True,
                          timeout=30)
    meta = done.stderr.decode(errors="replace")
    if done.returncode:
        status = next((line.split(":", 1)[1].strip() for line in meta.splitlines()
                       if line.startswith("STATUS:")), meta.strip() or "invalid")
        raise RoutingError(f"credential refused by MUNGE: {status}", field="credential",
                           fix="the client and the agent must share a MUNGE key and clock")
    uid = next(int(line.rsplit("(", 1)[1].rstrip(")")) for line in meta.splitlines()
               if line.startswith("UID:"))
    return uid, done.stdout


def header_of(req: smhost.Request) -> bytes:
    doc = {k: v for k, v in asdict(req).items() if k != "data"}
    doc.update(protocol=PROTOCOL, size=len(req.data),
               sha256=hashlib.sha256(req.data).hexdigest(), nonce=os.urandom(8).hex())
    return json.dumps(doc, sort_keys=True).encode()


# --- client --------------------------------------------------------------------------------

def request(host: str, port: int, req: smhost.Request, timeout: float) -> dict:
    """Ask the agent on ``host`` to route; its verified result, or RoutingError."""
    cred = munge_encode(header_of(req))
    try:
        with socket.create_connection((host, port), timeout=30) as conn:
            conn.settimeout(timeout + 60)
            conn.sendall(cred.encode() + b"\n" + req.data)
            conn.shutdown(socket.SHUT_WR)
            answer = conn.makefile("rb").readline(MAX_LINE)
    except OSError as err:
        raise RoutingError(f"routing agent {host}:{port} unreachable ({err})",
                           field="opensm.sm.port", fix=f"start `t2hx sm serve` on {host} "
                           "(docs/cluster.md#the-routing-agent)") from None
    try:
        reply = json.loads(answer)
    except ValueError:
        raise RoutingError(f"routing agent {host}:{port} gave no answer", field="opensm.sm",
                           fix=f"read the agent's log on {host}") from None
    if not reply.get("ok"):
        # The agent's line names the field and fix already.
        raise RoutingError(f"routing agent on {host}: {reply.get('error', 'refused')}")
    return reply["result"]


# --- server --------------------------------------------------------------------------------

class Agent:
    """The request handling, apart from sockets (one instance per ``t2hx sm serve``)."""

    def __init__(self, system: System, allow: set[int] | None = None,
                 quiet: bool | None = None) -> None:
        self.system = system
        self.allow = allow
        self.quiet = quiet
        self.locks = {p: threading.Lock() for p in system.planes}

    def handle(self, cred: str, read) -> dict:
        uid, payload = munge_decode(cred)
        if self.allow is not None and uid not in self.allow:
            raise T2hxError(f"uid {uid} may not route this fabric", field="--allow-user",
                            fix="ask the operator to allow your user")
        head = self._header(payload)
        data = read(head["size"])
        if len(data) != head["size"] or hashlib.sha256(data).hexdigest() != head["sha256"]:
            raise T2hxError("the input does not match its signed checksum", field="input",
                            fix="send the request again")
        req = smhost.request_for(self.system, head["plane"], head["engine"], head["kind"],
                                 data)
        if req.lmc != head["lmc"]:
            raise T2hxError(f"{req.engine} routes plane {req.plane} with LMC {req.lmc}, not "
                            f"{head['lmc']}", field="lmc", fix="ask for the plane's LMC")
        self.log(f"uid {uid}: {req.plane} {req.engine} lmc {req.lmc} "
                 f"{req.kind or 'no input'} ({len(data)} bytes)")
        with self.locks[req.plane]:
            return smhost.apply(self.system, req, quiet=self.quiet)

    @staticmethod
    def _header(payload: bytes) -> dict:
        try:
            head = json.loads(payload)
            ok = head.get("protocol") == PROTOCOL and isinstance(head.get("plane"), str) \
                and isinstance(head.get("engine"), str) and isinstance(head.get("lmc"), int) \
                and head.get("kind") in (None, *smhost.SM_FIELD) \
                and isinstance(head.get("size"), int) and 0 <= head["size"] <= MAX_INPUT \
                and isinstance(head.get("sha256"), str)
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            raise T2hxError("malformed request header", field="request",
                            fix=f"use a t2hx client speaking protocol {PROTOCOL}")
        return head

    def log(self, text: str) -> None:
        if not self.quiet:
            print(f"sm serve: {text}", file=sys.stderr, flush=True)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        agent = self.server.agent
        try:
            line = self.rfile.readline(MAX_LINE).decode(errors="replace").strip()
            result = agent.handle(line, self.rfile.read)
            reply = {"ok": True, "result": result}
        except T2hxError as err:
            agent.log(f"refused: {err.line()}")
            reply = {"ok": False, "error": err.line()}
        except Exception as err:    # one bad request must not stop the agent
            agent.log(f"failed: {type(err).__name__}: {err}")
            reply = {"ok": False, "error": f"agent error: {type(err).__name__}: {err}"}
        try:
            self.wfile.write(json.dumps(reply).encode() + b"\n")
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    agent: Agent


def serve(system: System, bind: str, port: int, allow: set[int] | None = None,
          quiet: bool | None = None) -> int:
    """Serve until SIGTERM or SIGINT."""
    server = _Server((bind, port), _Handler)
    server.agent = Agent(system, allow, quiet)

    def stop(_signum: int, _frame: object) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    old = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    server.agent.log(f"routing {system.name} ({', '.join(system.planes)}) on {bind}:{port}")
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        for s, handler in old.items():
            signal.signal(s, handler)
    return 0


def uids(names: list[str]) -> set[int] | None:
    """--allow-user values (names or numbers) as uids; None: every authenticated user."""
    if not names:
        return None
    out = set()
    for name in names:
        try:
            out.add(int(name) if name.isdigit() else pwd.getpwnam(name).pw_uid)
        except KeyError:
            raise T2hxError(f"no user '{name}'", field="--allow-user",
                            fix="give a user name or uid of this host") from None
    return out
