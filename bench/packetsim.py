#!/usr/bin/env python3
"""Speed and memory of the packet engine (t2hx/flowsim/packet.py) on the routed t2hx HyperX
(real OpenSM dfsssp, the conf's model.packet). Writes bench/results/packetsim.json.

* mpigraph_28: mpiGraph on the 28 nodes of rack r01 (1 MiB, window 10: one 10 MiB message
  per rank per shift step), wall seconds (goal < 10 s), next to the flow model's numbers.
* ebb_112: Netgauge eBB on the 112 nodes of racks r01-r04 (1 MiB, 100 bisections, 20
  reps), wall seconds (goal < 30 s).
* ebb_224: the same on the 224 nodes of racks r01-r08, whose working set (about 1 MB) is
  far beyond the core's L1 cache: packet-hops per kernel second (goal >= 20 M);
  ebb_224_threads: the same with the kernel's phases on two threads
  (T2HX_PACKET_THREADS=2; identical results), which needs the host's second core free.
* packet_hops_per_s: packet-hops (one packet serialised on one link, host-interface links
  included) per second of the compiled kernel, and per wall second of the whole engine
  (path lookup and Python included), on one core (goal >= 10 M).
* every speed case runs 3 times (Scale.runs) on fresh engines and keeps the fastest (the host is
  shared with other jobs: load_average gives the 1-minute load before and after).
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

``--smoke DIR``: the same steps in seconds on mini.yaml (64 nodes): mpiGraph on 8 nodes, eBB
on 16 with 5 bisections of 2 reps, the 224-node cases and the memory probe on all 64, one run
per speed case, one reference case; routing and result (DIR/packetsim.json) in DIR, never
bench/results/ (tests/test_bench_smoke.py). The result keeps the full run's keys (each case's
``ranks`` says its size) and names what it left out in ``smoke_left_out``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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
from t2hx.flowsim import packetk, patterns  # noqa: E402
from t2hx.flowsim.bulk import Phase  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.flowsim.packet import open_packet  # noqa: E402

MIB = 1 << 20
GIB = float(1 << 30)


@dataclasses.dataclass(frozen=True)
class Scale:
    system: str               # conf/systems/<system>.yaml
    graph_ranks: int          # mpiGraph's nodes (the first rack)
    ebb_ranks: int            # the eBB wall-time case's nodes
    wide_ranks: int | None    # the cache-busting eBB case's nodes (None: all the system's)
    rounds: int               # eBB bisections
    reps: int                 # eBB repetitions per bisection
    runs: int                 # runs of each speed case on fresh engines; the fastest counts
    reference_cases: int | None  # the reference's cases run (None: all)


FULL = Scale("t2hx", graph_ranks=28, ebb_ranks=112, wide_ranks=224, rounds=100, reps=20,
             runs=3, reference_cases=None)
SMOKE = Scale("mini", graph_ranks=8, ebb_ranks=16, wide_ranks=None, rounds=5, reps=2,
              runs=1, reference_cases=1)
SMOKE_LEFT_OUT = {
    "ebb_224": "mini.yaml has 64 nodes, so the 224-node eBB cases run on all 64 (a working "
               "set within the cache: their hops per second are not the full run's figure)",
    "reference": "one of the 15 reference cases (the first fabric's first pattern) keeps the "
                 "smoke run within seconds; the full run does all 15",
}


def network(system, hosts, args):
    return open_network(system, "hyperx", "dfsssp", hosts=hosts, work=args.work,
                        dumps=args.routing_dir, quiet=False)


def timed(fn, *a, **kw):
    t = time.perf_counter()
    out = fn(*a, **kw)
    return out, time.perf_counter() - t


def fastest(make, run, runs: int):
    """(result, engine, wall seconds) of the fastest of ``runs`` fresh engines doing ``run``."""
    best = None
    for _ in range(runs):
        pk = make()
        out, wall = timed(run, pk)
        if best is None or wall < best[2]:
            best = (out, pk, wall)
    return best


@contextlib.contextmanager
def kernel_threads(n: int):
    """The packet kernels made inside run their batches on ``n`` threads."""
    before = os.environ.get(packetk.THREADS_ENV)
    os.environ[packetk.THREADS_ENV] = str(n)
    try:
        yield
    finally:
        if before is None:
            del os.environ[packetk.THREADS_ENV]
        else:
            os.environ[packetk.THREADS_ENV] = before


def speed(pk, wall: float) -> dict:
    s = pk.stats
    return {"wall_s": round(wall, 3), "kernel_s": round(s["kernel_s"], 3),
            "kernel_cpu_s": round(s["kernel_cpu_s"], 3),
            "phases_simulated": int(s["phases"]), "packet_hops": int(s["packet_hops"]),
            "events": int(s["events"]),
            "hops_per_kernel_s": round(s["packet_hops"] / s["kernel_s"]),
            "hops_per_kernel_cpu_s": round(s["packet_hops"] / s["kernel_cpu_s"]),
            "hops_per_wall_s": round(s["packet_hops"] / wall),
            "events_per_kernel_s": round(s["events"] / s["kernel_s"]),
            "threads": pk._kernel_state.threads if pk._kernel_state else 1,
            # a phase runs as its link-disjoint groups, equal groups once (components.py):
            # packet_hops counts the simulated ones
            "groups": int(s.get("groups", 0)), "groups_simulated": int(s.get("groups_simulated", 0)),
            "credit_errors": int(s["credit_errors"]),
            "packets_conserved": s["packets_created"] == s["packets_delivered"]}


def _bench_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod                  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def reference_cases(limit: int | None = None) -> dict:
    """The packet engine on the reference simulator's 15 cases (the first ``limit`` of them),
    against its wall times."""
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
                if limit is not None and len(cases) >= limit:
                    break
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


def ebb_case(net, scale: Scale, goal: dict, flow: bool = True) -> dict:
    """eBB (1 MiB, the scale's bisections and reps) on the packet engine, and on the flow
    model."""
    e, pk, wall = fastest(lambda: open_packet(net),
                          lambda pk: patterns.ebb(pk, MIB, scale.rounds, scale.reps, 1),
                          scale.runs)
    bw = MIB * e.reps / (e.round_times * 1e-6)        # bytes/s per rank and round
    out = {"ranks": net.ranks, "rounds": scale.rounds, "reps": scale.reps, **speed(pk, wall),
           "mean_gib_s": round(float(np.nanmean(bw)) / GIB, 3)}
    if flow:
        fe = patterns.ebb(net, MIB, scale.rounds, scale.reps, 1)
        out["flow_mean_gib_s"] = round(float(np.nanmean(MIB * fe.reps / (fe.round_times * 1e-6)))
                                       / GIB, 3)
    return {**out, **goal}


def child(args, scale: Scale) -> int:
    """The 672-node memory probe (run in its own process: a clean peak RSS)."""
    system = load_system(ROOT / "conf" / "systems" / f"{scale.system}.yaml")
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
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="seconds on mini.yaml; routing and result in DIR (not bench/results/)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    scale = FULL
    if args.smoke:
        scale, args.work, args.out = SMOKE, str(args.smoke / "work"), args.smoke / "packetsim.json"
    if args.child:
        return child(args, scale)
    system = load_system(ROOT / "conf" / "systems" / f"{scale.system}.yaml")
    hosts = system.hostnames()

    load_before = os.getloadavg()[0]
    rack = network(system, hosts[:scale.graph_ranks], args)
    _, sl_table_s = timed(open_packet(rack)._path_sl)   # DFSSSP's SLs: read, or asked of OpenSM
    g, pk, wall = fastest(lambda: open_packet(rack),
                          lambda pk: patterns.mpigraph(pk, MIB, 10, 10), scale.runs)
    flow = patterns.mpigraph(rack, MIB, 10, 10)
    off = ~np.eye(scale.graph_ranks, dtype=bool)
    mpigraph = {"ranks": scale.graph_ranks, **speed(pk, wall), "sl_table_s": round(sl_table_s, 3),
                "send_avg_gib_s": round(float(g.send[off].mean()) / 1024, 3),
                "send_min_gib_s": round(float(g.send[off].min()) / 1024, 3),
                "flow_send_avg_gib_s": round(float(flow.send[off].mean()) / 1024, 3),
                "goal_s": 10}

    ebb = ebb_case(network(system, hosts[:scale.ebb_ranks], args), scale, {"goal_s": 30})
    net224 = network(system, hosts[:scale.wide_ranks], args)
    ebb224 = ebb_case(net224, scale, {"goal_hops_per_kernel_s": 20_000_000})
    with kernel_threads(2):
        ebb224_threads = ebb_case(net224, scale, {"goal_hops_per_kernel_s": 20_000_000},
                                  flow=False)

    cmd = [sys.executable, __file__, "--child", "--work", args.work]
    if args.routing_dir:
        cmd += ["--routing-dir", args.routing_dir]
    if args.smoke:
        cmd += ["--smoke", str(args.smoke)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    big = json.loads(out.stdout.strip().splitlines()[-1])
    big["goal_gib"] = 2
    big["peak_rss_gib"] = round(big["peak_rss_gib"], 3)
    reference = reference_cases(scale.reference_cases)

    result = {
        "system": f"{scale.system}/hyperx dfsssp (real OpenSM under ibsim), "
                  "conf model.packet defaults",
        "smoke": bool(args.smoke),
        "cpu": os.uname().machine, "cores_used": 1, "cores": os.cpu_count(),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "runs": scale.runs,
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
        "mpigraph_28": mpigraph, "ebb_112": ebb, "ebb_224": ebb224,
        "ebb_224_threads": ebb224_threads, "peak_rss_672": big,
        "reference": reference,
    }
    if args.smoke:
        result["smoke_left_out"] = SMOKE_LEFT_OUT
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
