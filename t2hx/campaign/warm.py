"""A campaign run's warm simulator (t2hx/simserver.py): started before ReFrame's sessions on
the simulated systems, named to the cases by ``T2HX_SIM_SERVER``, stopped after them; it dies
with the campaign like ReFrame does (t2hx.campaign.guard). ``T2HX_SIM_SERVER=off`` runs every
case cold (a comparison, or a machine where forking a large process is a problem)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from t2hx.campaign.guard import die_with_parent
from t2hx.simclient import ENV

#: How long the server may take to import the model and digest its sources.
START_S = 120.0


@contextmanager
def warm_simulator(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """``env`` with the server's socket added while the block runs (unchanged when it is
    off or fails to start: the cases then run cold, as they would without it)."""
    if env.get(ENV, os.environ.get(ENV)) == "off":
        yield {k: v for k, v in env.items() if k != ENV}
        return
    # a Unix socket path is at most 107 bytes: the folder's own name may be too long
    path = Path(f"/tmp/t2hx-sim-{os.getpid()}.sock")
    server = subprocess.Popen([sys.executable, "-m", "t2hx.simserver", str(path)], env=env,
                              stdin=subprocess.DEVNULL,
                              preexec_fn=partial(die_with_parent, os.getpid()))
    try:
        if _ready(server, path):
            yield {**env, ENV: str(path)}
        else:
            print("campaign: the warm simulator did not start; the cases start cold",
                  file=sys.stderr)
            yield {k: v for k, v in env.items() if k != ENV}
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        path.unlink(missing_ok=True)


def _ready(server: subprocess.Popen, path: Path) -> bool:
    end = time.monotonic() + START_S
    while time.monotonic() < end:
        if server.poll() is not None:
            return False
        if path.exists():
            return True
        time.sleep(0.05)
    return False
