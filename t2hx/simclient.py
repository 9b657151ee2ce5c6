"""The client side of a campaign's warm simulator (t2hx/simserver.py): ``t2hx simulate``, and
``t2hx campaign reroute`` (a re-routed case's routing step), hands its command line, working
directory, environment and standard streams to the server named by ``T2HX_SIM_SERVER`` and
exits with the status the server's run ends with.

It imports the standard library only, and :func:`forward` runs before the command line is
parsed, so a case served warm starts one small interpreter and no t2hx module beyond this
one. Without the variable, or when no server answers, the command runs here as always."""

from __future__ import annotations

import json
import os
import socket
import struct
import sys

ENV = "T2HX_SIM_SERVER"
#: The commands a server runs, by their leading words: a campaign's cases and the routing
#: step before a re-routed one (PARX, SAR); every other command runs here.
SERVED = (("simulate",), ("campaign", "reroute"))
#: A length prefix before the request (the server reads exactly that many bytes).
HEADER = struct.Struct("!I")


def forward(argv: list[str]) -> int | None:
    """The exit status of ``argv`` run by the campaign's server, or None: run it here."""
    path = os.environ.get(ENV)
    if not path or not any(argv[:len(words)] == list(words) for words in SERVED):
        return None
    try:
        streams = [sys.stdin.fileno(), sys.stdout.fileno(), sys.stderr.fileno()]
    except (AttributeError, ValueError, OSError):
        return None                                   # a closed stream: nothing to hand over
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None                                   # no server (any more): run here
    with sock:
        request = json.dumps({"argv": argv, "cwd": os.getcwd(),
                              "env": dict(os.environ)}).encode()
        sys.stdout.flush()
        sys.stderr.flush()
        socket.send_fds(sock, [HEADER.pack(len(request)) + request], streams)
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = sock.recv(64)
            if not chunk:
                break
            answer += chunk
    if not answer.strip().isdigit():
        print(f"t2hx: error: the campaign's simulation server ({path}) ended without an "
              f"exit status (fix: rerun the case; unset {ENV} to run it without the server)",
              file=sys.stderr)
        return 1
    return int(answer)
