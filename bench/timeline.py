#!/usr/bin/env python3
"""The flow model's per-rank timelines: the C event loop (t2hx/flowsim/kernel/timelinek.c)
against the Python loop it replaced, on the program of one baidu ring allreduce (the
paper-scale run's costliest flow-model case, 672 nodes) on the routed t2hx HyperX (real
OpenSM dfsssp, random placement as the hx-dfsssp-random combo). Writes
bench/results/timeline.json.

* build_s: the program and its wire messages (Python: timeline.Program, compile).
* kernel_s / python_s: fluid_times in C / in Python on the same wire messages, and whether
  their delivery times are equal to the bit.
* The Python loop is timed at ``--python-up-to`` nodes and below (it takes minutes above).

``--smoke DIR``: mini.yaml's 16 first hosts, routed into DIR, the result in
DIR/timeline.json (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.conf import load_system  # noqa: E402
from t2hx.flowsim import patterns, timeline  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402

ELEMENTS = 1 << 24          # 64 MiB of floats: one of baidu-allreduce's sizes


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, round(time.perf_counter() - t, 3)


def case(net, python: bool) -> dict:
    n = len(net.hosts)
    prog, build_s = timed(patterns.ring_allreduce_program, n, ELEMENTS, 4e9, 8e9, "ompi-4.1")
    wire, compile_s = timed(timeline.compile, prog, timeline.eager_limit(net.system))
    paths, hops = net.paths(wire.src, wire.dst, wire.lid_size)
    latency = np.where(wire.local, 0.0, net.loggp.latency(hops.astype(np.float64)))
    args = (paths, net.capacity, wire.size, latency, wire.dep_off, wire.dep, wire.compute)
    fast, kernel_s = timed(timeline.fluid_times, *args)
    out = {"nodes": n, "wire_messages": int(len(wire.src)), "build_s": build_s,
           "compile_s": compile_s, "kernel_s": kernel_s}
    if python:
        slow, python_s = timed(timeline.fluid_times_python, *args)
        out |= {"python_s": python_s, "speedup": round(python_s / max(kernel_s, 1e-9), 1),
                "equal_to_the_bit": bool(np.array_equal(fast, slow, equal_nan=True))}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=str(ROOT / "work"))
    ap.add_argument("--nodes", default="224,672", help="node counts of the random hostfiles")
    ap.add_argument("--python-up-to", type=int, default=224)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "timeline.json")
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml, routing and result in DIR (not bench/results/)")
    args = ap.parse_args()
    if args.smoke:
        system = load_system(ROOT / "conf" / "systems" / "mini.yaml")
        groups = [system.hostnames()[:16]]
        args.work, args.out = str(args.smoke / "work"), args.smoke / "timeline.json"
    else:
        system = load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
        groups = [(ROOT / "hostfiles" / "t2hx" / "random" / f"{n}.txt").read_text().split()
                  for n in args.nodes.split(",")]
    cases = []
    for hosts in groups:
        net = open_network(system, "hyperx", "dfsssp", hosts=hosts, work=args.work)
        cases.append(case(net, len(hosts) <= args.python_up_to))
        print(json.dumps(cases[-1]), file=sys.stderr)
    result = {"system": system.name, "plane": "hyperx", "routing": "dfsssp",
              "program": f"baidu ring allreduce of {ELEMENTS} floats (Open MPI 4.1 rules)",
              "smoke": bool(args.smoke), "cores": os.cpu_count(),
              "load_average": [round(x, 2) for x in os.getloadavg()], "cases": cases}
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    os.replace(tmp, args.out)
    print(json.dumps(result, indent=2))
    return 0 if all(c.get("equal_to_the_bit", True) for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
