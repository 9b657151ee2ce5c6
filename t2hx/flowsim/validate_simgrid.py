"""Cross-check the flow model against SimGrid (python3-simgrid, S4U) on identical flow sets.

The platform is one *full* zone: a host per HCA that sends or receives, a SHARED link per
directed fabric link (bandwidth = our capacity, latency 0), and ``add_route`` per ordered
host pair with exactly our path's links. SimGrid runs the CM02 network model with
cross-traffic off, so it computes plain max-min sharing like ours (no TCP bandwidth/latency
factors, no ACK traffic on the reverse links).

SimGrid's engine is a per-process singleton, so every comparison runs in a child process
(``python -m t2hx.flowsim.validate_simgrid IN.npz OUT.npz``).

Modes:

* ``rates`` — phases (groups) one after another; in each, all flows start at once and the
  rate each gets in the first instant is read back (bytes moved in a tiny ε / ε). This is
  what the bulk-synchronous mode computes.
* ``phases`` — same phases, run to completion one after another; returns per-phase times
  (used for the speed comparison on identical flow sets).
* ``fluid`` — flows with start times and sizes; returns each flow's finish time (what the
  event-driven mode computes).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from t2hx.errors import T2hxError

SIMGRID_CFG = ["--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
               "--cfg=network/TCP-gamma:0", "--log=root.thresh:critical",
               "--cfg=contexts/factory:thread"]
EPS_S = 1e-9
#: The last :func:`run_simgrid`'s seconds of platform build and ``engine.run``.
last_split: dict[str, float] = {}


def run_simgrid(mode: str, src: np.ndarray, dst: np.ndarray, paths: np.ndarray,
                capacity: np.ndarray, size: np.ndarray, group: np.ndarray | None = None,
                start: np.ndarray | None = None, timeout: float = 3600.0
                ) -> tuple[np.ndarray, float]:
    """(result array, SimGrid wall seconds inside the child) for one flow set; the split
    into platform build and ``engine.run`` is left in ``last_split``."""
    n = len(src)
    group = np.zeros(n, dtype=np.int64) if group is None else np.asarray(group)
    start = np.zeros(n) if start is None else np.asarray(start, dtype=np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        inp, out = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
        np.savez(inp, mode=np.array(mode), src=src, dst=dst, paths=paths, capacity=capacity,
                 size=np.asarray(size, dtype=np.float64), group=group, start=start)
        proc = subprocess.run([sys.executable, "-m", "t2hx.flowsim.validate_simgrid",
                               str(inp), str(out)], capture_output=True, text=True,
                              timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise T2hxError(f"SimGrid run failed ({tail})", field="simgrid",
                            fix="check that python3-simgrid is importable (run/setup)")
        data = np.load(out)
        last_split.update(build_s=float(data["build"]), run_s=float(data["run"]))
        return data["result"], float(data["seconds"])


def _child(inp: Path, out: Path) -> None:
    import simgrid as sg

    d = np.load(inp)
    mode = str(d["mode"])
    src, dst, paths = d["src"], d["dst"], d["paths"]
    size, group, start, cap = d["size"], d["group"], d["start"], d["capacity"]
    t0 = time.perf_counter()
    engine = sg.Engine(["t2hx"] + SIMGRID_CFG)
    zone = sg.NetZone.create_full_zone("fabric")
    hosts = {int(h): zone.create_host(f"h{int(h)}", 1e9).seal()
             for h in np.unique(np.concatenate([src, dst]))}
    links = {int(k): zone.create_link(f"l{int(k)}", float(cap[k])).set_latency(0).seal()
             for k in np.unique(paths[paths >= 0])}
    seen: set[tuple[int, int]] = set()
    for s, t, p in zip(src, dst, paths):
        key = (int(s), int(t))
        if key in seen:
            continue
        seen.add(key)
        zone.add_route(hosts[key[0]].netpoint, hosts[key[1]].netpoint, None, None,
                       [sg.LinkInRoute(links[int(k)]) for k in p if k >= 0], False)
    zone.seal()
    result = np.zeros(len(src))
    order = [np.flatnonzero(group == g) for g in np.unique(group)]

    def phases() -> None:
        for idx in order:
            begin = sg.Engine.clock
            comms = [sg.Comm.sendto_async(hosts[int(src[i])], hosts[int(dst[i])],
                                          int(size[i])) for i in idx]
            if mode == "rates":
                sg.this_actor.sleep_for(EPS_S)
                for i, c in zip(idx, comms):
                    result[i] = (size[i] - c.remaining) / EPS_S
            sg.Comm.wait_all(comms)
            if mode == "phases":
                result[idx] = sg.Engine.clock - begin

    def flow(i: int) -> None:
        sg.this_actor.sleep_until(float(start[i]))
        sg.Comm.sendto(hosts[int(src[i])], hosts[int(dst[i])], int(size[i]))
        result[i] = sg.Engine.clock

    first = hosts[int(src[0])]
    if mode == "fluid":
        for i in range(len(src)):
            sg.Actor.create(f"f{i}", hosts[int(src[i])], flow, i)
    else:
        sg.Actor.create("phases", first, phases)
    t1 = time.perf_counter()
    engine.run()
    t2 = time.perf_counter()
    np.savez(out, result=result, seconds=np.array(t2 - t0), build=np.array(t1 - t0),
             run=np.array(t2 - t1))


if __name__ == "__main__":
    _child(Path(sys.argv[1]), Path(sys.argv[2]))
