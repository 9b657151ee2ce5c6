#!/usr/bin/env python3
"""Speed and memory of the packet engine (t2hx/flowsim/packet.py) on the routed t2hx HyperX
(real OpenSM dfsssp, the conf's model.packet). Writes bench/results/packetsim.json.

* mpigraph_28: mpiGraph on the 28 nodes of rack r01 (1 MiB, window 10: one 10 MiB message
  per rank per shift step), wall seconds (goal < 10 s), next to the flow model's numbers.
* ebb_112: Netgauge eBB on the 112 nodes of racks r01-r04 (1 MiB, 100 bisections, 20
  reps), wall seconds (goal < 30 s).
* packet_hops_per_s: packet-hops (one packet serialised on one link, host-interface links
  included) per second of the compiled kernel, and per wall second of the whole engine
  (path lookup and Python included), on one core (goal >= 10 M).
* peak_rss_672: a child process opens all 672 nodes and simulates one eBB bisection and
  one mpiGraph shift step (1 MiB); its peak resident memory (goal < 2 GiB), including
  reading the routing (LFT dump, or its cached arrays) and the SL table.
* sl_table_s: reading DFSSSP's SL table (the first time: one more OpenSM run under ibsim
  with debug logging, then cached beside the routing run).
* reference: the 15 cases of the reference packet simulator (tests/data/refsim/), the
  engine set up as the validation test sets it (bench/refsim/packet.py): per case our wall
  seconds (the phase: messages, routes and kernel; and with the fabric's setup, reading
  the routing and building the engine, added), the reference's ``wall_s`` (meta.json), the
  ratio of the two (goal >= 100), and the per-flow errors.
Routing runs are cached under --work (see t2hx.flowsim.network); --routing-dir uses dumps.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# one core, as the figures say: no BLAS threads spinning beside the kernel (set before numpy)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from t2hx.conf import load_system  # noqa: E402
from t2hx.flowsim import patterns  # noqa: E402
from t2hx.flowsim.bulk import Phase  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.flowsim.packet import open_packet  # noqa: E402

MIB = 1 << 20
GIB = float(1 << 30)


def network(system, hosts, args):
    return open_network(system, "hyperx", "dfsssp", hosts=hosts, work=args.work,
                        routing=args.routing_dir, quiet=False)


def timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - t


def speed(pk, wall: float) -> dict:
    s = pk.stats
    return {"wall_s": round(wall, 3), "kernel_s": round(s["kernel_s"], 3),
            "kernel_cpu_s": round(s["kernel_cpu_s"], 3),
            "phases_simulated": int(s["phases"]), "packet_hops": int(s["packet_hops"]),
            "events": int(s["events"]),
            "hops_per_kernel_s": round(s["packet_hops"] / s["kernel_s"]),
            "hops_per_kernel_cpu_s": round(s["packet_hops"] / s["kernel_cpu_s"]),
            "hops_per_wall_s": round(s["packet_hops"] / wall),
            "credit_errors": int(s["credit_errors"]),
            "packets_conserved": s["packets_created"] == s["packets_delivered"]}


def _bench_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod                  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def reference_cases() -> dict:
    """The packet engine on the reference simulator's 15 cases, against its wall times."""
    ref = _bench_module("refsim_data", ROOT / "bench" / "refsim" / "data.py")
    setup = _bench_module("refsim_packet", ROOT / "bench" / "refsim" / "packet.py")
    data = ROOT / "tests" / "data" / "refsim"
    cases = []
    with tempfile.TemporaryDirectory() as scratch:
        for fabric in ref.fabrics(data):
            meta = ref.meta(fabric, data)
            clock = time.perf_counter()
            pk = setup.open_engine(ref, fabric, data, Path(scratch) / fabric)
            setup_s = time.perf_counter() - clock
            for pattern in meta["patterns"]:
                case = ref.case(fabric, pattern, data)
                end, wall = setup.run_case(pk, case)
                err = ref.errors(case, end)
                theirs = float(case.run["wall_s"])
                cases.append({
                    "fabric": fabric, "pattern": pattern, "flows": len(case.flows),
                    "wall_s": round(wall, 4), "with_setup_s": round(wall + setup_s, 4),
                    "reference_wall_s": theirs, "ratio": round(theirs / wall),
                    "ratio_with_setup": round(theirs / (wall + setup_s)),
                    "throughput_err_median": round(err.throughput_median, 4),
                    "throughput_err_worst": round(err.throughput_worst, 4),
                    "completion_err_median": round(err.completion_median, 4),
                    "completion_err_worst": round(err.completion_worst, 4),
                    "within_bounds": err.within(0.10, 0.25)})
    ratios = [c["ratio"] for c in cases]
    cold = [c["ratio_with_setup"] for c in cases]
    return {"cases": cases, "ratio_min": min(ratios), "ratio_median": float(np.median(ratios)),
            "ratio_with_setup_min": min(cold),
            "ratio_with_setup_median": float(np.median(cold)),
            "within_bounds": sum(c["within_bounds"] for c in cases), "goal_ratio": 100,
            "note": "ours: one process, one core; the reference: one run at a time, both on "
            "the same shared 2-core host; setup: reading the routing and building the "
            "engine for the fabric (once per fabric, added to every case)"}


def child(args) -> int:
    """The 672-node memory probe (run in its own process: a clean peak RSS)."""
    system = load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
    net = network(system, system.hostnames(), args)
    pk = open_packet(net)
    n = net.ranks
    partner = patterns.bisections(n, 1, seed=1)[0]
    r = np.arange(n)
    (_, wall) = timed(pk.run, [Phase.of(r, partner, MIB), Phase.of(r, (r + 1) % n, MIB)])
    print(json.dumps({"ranks": n, **speed(pk, wall),
                      "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      * 1024 / GIB}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default=str(ROOT / "work"))
    ap.add_argument("--routing-dir", default=None, help="t2hx/hyperx dfsssp OpenSM dumps")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "packetsim.json"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    system = load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
    hosts = system.hostnames()

    rack = network(system, hosts[:28], args)
    pk = open_packet(rack)
    _, sl_table_s = timed(pk._path_sl)       # DFSSSP's SL table: read, or asked of OpenSM
    g, wall = timed(patterns.mpigraph, pk, MIB, 10, 10)
    flow = patterns.mpigraph(rack, MIB, 10, 10)
    off = ~np.eye(28, dtype=bool)
    mpigraph = {"ranks": 28, **speed(pk, wall), "sl_table_s": round(sl_table_s, 3),
                "send_avg_gib_s": round(float(g.send[off].mean()) / 1024, 3),
                "send_min_gib_s": round(float(g.send[off].min()) / 1024, 3),
                "flow_send_avg_gib_s": round(float(flow.send[off].mean()) / 1024, 3),
                "goal_s": 10}

    net112 = network(system, hosts[:112], args)
    pk = open_packet(net112)
    e, wall = timed(patterns.ebb, pk, MIB, 100, 20, 1)
    fe = patterns.ebb(net112, MIB, 100, 20, 1)
    bw = MIB * e.reps / (e.round_times * 1e-6)        # bytes/s per rank and round
    fbw = MIB * fe.reps / (fe.round_times * 1e-6)
    ebb = {"ranks": 112, "rounds": 100, "reps": 20, **speed(pk, wall),
           "mean_gib_s": round(float(np.nanmean(bw)) / GIB, 3),
           "flow_mean_gib_s": round(float(np.nanmean(fbw)) / GIB, 3), "goal_s": 30}

    cmd = [sys.executable, __file__, "--child", "--work", args.work]
    if args.routing_dir:
        cmd += ["--routing-dir", args.routing_dir]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    big = json.loads(out.stdout.strip().splitlines()[-1])
    big["goal_gib"] = 2
    big["peak_rss_gib"] = round(big["peak_rss_gib"], 3)
    reference = reference_cases()

    result = {
        "system": "t2hx/hyperx dfsssp (real OpenSM under ibsim), conf model.packet defaults",
        "cpu": os.uname().machine, "cores_used": 1,
        "packet_hops_per_s": {"kernel_cpu": min(mpigraph["hops_per_kernel_cpu_s"],
                                                ebb["hops_per_kernel_cpu_s"]),
                              "kernel_wall": min(mpigraph["hops_per_kernel_s"],
                                                 ebb["hops_per_kernel_s"]),
                              "engine_wall": min(mpigraph["hops_per_wall_s"],
                                                 ebb["hops_per_wall_s"]),
                              "goal": 10_000_000,
                              "note": "a packet-hop: one packet serialised on one link, "
                              "the two host-interface (PCIe) links of its path included; "
                              "wall figures on a 2-core machine shared with other jobs"},
        "mpigraph_28": mpigraph, "ebb_112": ebb, "peak_rss_672": big,
        "reference": reference,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
