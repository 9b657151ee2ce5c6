#!/usr/bin/env python3
"""Run the reference cases in the InfiniBand flit-level model and commit their outputs:
for each fabric and pattern, export the case (bench/refsim/export.py), run the simulator
(one run at a time), read the per-flow records of its sinks from the .sca file, and write
tests/data/refsim/<fabric>/<pattern>.csv and the run's entry in meta.json.

    PYTHONPATH=. python bench/refsim/run.py --sim BUILD/ib_flit_sim/out/gcc-release/src/ib_flit_sim \\
        --model BUILD/ib_flit_sim/src --omnetpp BUILD/omnetpp-5.7.1 --cases DIR [FABRIC[/PATTERN] ...]

The simulator is the model built outside this repository with its sink extended to record
per-flow completion (docs/validation.md#reference-packet-simulator).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from cases import FABRICS, MTU, PATTERNS  # noqa: E402
from cases import fabric as fabric_case  # noqa: E402
from data import FlowResult, write_results  # noqa: E402
from data import flows as read_flows  # noqa: E402
from export import FLIT, NED_MODULES, PARAMS, RUN_OPTIONS, write_case  # noqa: E402

SIMULATOR = {
    "name": "InfiniBand flit-level model for OMNeT++ (Mellanox Technologies, 2004-2013)",
    "repo": "https://github.com/garyson/ib_flit_sim",
    "commit": "fce9e79f02f039930f2e0aa5fbb19e10704d51f1",
    "omnetpp": {"version": "5.7.1", "repo": "https://github.com/omnetpp/omnetpp",
                "tag": "omnetpp-5.7.1", "commit": "ec6b02909736791b46899eab01fac2a43ccb99d7",
                "build": "command-line only (Cmdenv), MODE=release, gcc 12.2.0"},
    "changes": "OMNeT++ 5 port; generator switches apps only at packet boundaries; sink "
               "records per-flow completion and ends the run after the last flow "
               "(docs/validation.md#what-was-changed-in-the-model)",
}
OPENSM = {"version": "3.3.23 (Debian opensm 3.3.23-2+b1)", "under": "ibsim 0.10 (ibsim-utils)",
          "repo": "https://github.com/linux-rdma/opensm",
          "commit": "d35a20f3be113e03316ca6c3afb7d19975772d8d"}

STOPPED = re.compile(r"Simulation stopped with endSimulation\(\).*?at t=([0-9.eE+-]+)s, "
                     r"event #(\d+)")
SCALAR = re.compile(r"^scalar \S+ (refflow-(\d+)-(\d+)-(\d+)-(first|end|pkts)|"
                    r"refbytes-(\d+)-(\d+)) (\S+)$", re.MULTILINE)


def run_case(fabric: str, pattern: str, a: argparse.Namespace) -> dict:
    dest = a.cases / fabric / pattern
    for old in ("refnet.sca", "refnet.vec", "run.log"):
        (dest / old).unlink(missing_ok=True)
    info = write_case(fabric, pattern, dest)
    cmd = [str(a.sim), "-u", "Cmdenv", "-f", "refnet.ini", "-n", f"{a.model}:."]
    env = dict(os.environ, LD_LIBRARY_PATH=str(a.omnetpp / "lib"))
    start = time.monotonic()
    with open(dest / "run.log", "w") as log:
        proc = subprocess.run(cmd, cwd=dest, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
    wall = time.monotonic() - start
    text = (dest / "run.log").read_text(errors="replace")
    stop = STOPPED.search(text)
    if proc.returncode != 0 or not stop:
        raise SystemExit(f"{fabric}/{pattern}: the simulator failed, see {dest}/run.log")
    sim_t, events = float(stop.group(1)), int(stop.group(2))

    rec: dict[tuple[int, int], dict] = {}
    got_bytes: dict[tuple[int, int], int] = {}
    for m in SCALAR.finditer((dest / "refnet.sca").read_text()):
        if m.group(2):
            key = (int(m.group(2)), int(m.group(3)))
            if int(m.group(4)) != 0:
                raise SystemExit(f"{fabric}/{pattern}: app {key} sent more than one message")
            rec.setdefault(key, {})[m.group(5)] = float(m.group(8))
        else:
            got_bytes[(int(m.group(6)), int(m.group(7)))] = int(float(m.group(8)))

    _, flows = read_flows(fabric, pattern)
    rows = []
    for f in flows:
        key = info["app_of"][f.id]
        r = rec.get(key)
        if r is None or "end" not in r:
            raise SystemExit(f"{fabric}/{pattern}: flow {f.id} did not complete")
        if int(r["pkts"]) != f.bytes // MTU or got_bytes.get(key) != f.bytes:
            raise SystemExit(f"{fabric}/{pattern}: flow {f.id} received "
                             f"{got_bytes.get(key)} bytes, {int(r['pkts'])} packets")
        end = r["end"]
        rows.append(FlowResult(f.src, f.dst, f.bytes, f.start_s, end,
                               f.bytes / (end - f.start_s)))
    write_results(fabric_case(fabric).dir / f"{pattern}.csv", rows)
    ends = [r.end_s for r in rows]
    print(f"{fabric}/{pattern}: {len(rows)} flows, sim {sim_t * 1e6:.1f} us, {events} events, "
          f"wall {wall:.1f} s", flush=True)
    return {"flows": len(rows), "wall_s": round(wall, 3), "sim_time_s": sim_t,
            "events": events, "events_per_wall_s": round(events / wall),
            "first_injection_s": min(v["first"] for v in rec.values()),
            "last_end_s": max(ends), "command": " ".join(
                ["ib_flit_sim", "-u", "Cmdenv", "-f", "refnet.ini", "-n", "<model>/src:."]),
            "export": f"PYTHONPATH=. python bench/refsim/export.py {fabric} {pattern} <dir>"}


def write_meta(fabric: str, runs: dict) -> None:
    path = fabric_case(fabric).dir / "meta.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    merged = {**old.get("runs", {}), **runs}
    meta = {
        "fabric": fabric,
        "simulator": SIMULATOR,
        "routing": {"opensm": OPENSM, "tables": "routing/ (routing.json: digest, LIDs, SLs)"},
        "host": {"cpu": platform.processor() or "x86_64", "cores_used": 1,
                 "python": platform.python_version()},
        "flit_bytes": FLIT, "mtu_bytes": MTU,
        "link": {"type": "IB4XQDRWire", "width": 4, "signal_gbps_per_lane": 10,
                 "encoding": "8b/10b", "data_gbps": 32.0, "bytes_per_s": 4.0e9,
                 "propagation_delay_s": 0.0},
        "ini": PARAMS, "run_options": RUN_OPTIONS,
        "ned": "refnet.ned: RefHCA (one IBApp per flow), RefSwitchPort/RefSwitch (maxVL 7), "
               "IB4XQDRWire cables; see bench/refsim/export.py",
        "ned_modules_sha256": __import__("hashlib").sha256(NED_MODULES.encode()).hexdigest(),
        "patterns": [p for p in PATTERNS if p in merged],
        "runs": {p: merged[p] for p in PATTERNS if p in merged},
    }
    path.write_text(json.dumps(meta, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases_to_run", nargs="*", metavar="FABRIC[/PATTERN]")
    ap.add_argument("--sim", type=Path, required=True, help="the ib_flit_sim executable")
    ap.add_argument("--model", type=Path, required=True, help="the model's src/ (NED path)")
    ap.add_argument("--omnetpp", type=Path, required=True, help="the OMNeT++ 5.7.1 tree")
    ap.add_argument("--cases", type=Path, required=True, help="scratch dir for case inputs")
    a = ap.parse_args()
    a.sim, a.model, a.omnetpp, a.cases = (p.resolve() for p in (a.sim, a.model, a.omnetpp,
                                                                a.cases))
    todo = a.cases_to_run or [f.name for f in FABRICS]
    for item in todo:
        name, _, only = item.partition("/")
        runs = {}
        for pattern in ([only] if only else PATTERNS):
            runs[pattern] = run_case(name, pattern, a)
            write_meta(name, runs)


if __name__ == "__main__":
    main()
