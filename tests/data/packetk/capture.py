#!/usr/bin/env python3
"""Writes the packet kernel's inputs and outputs for the cases of README.md (one .npz per
kernel phase) into this directory, by recording every phase the engine gives the kernel
(t2hx/flowsim/packetk.py). Run from the repository root with the built kernel; routing
runs are cached under work/ (t2hx.flowsim.network)."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

from t2hx.conf import load_system  # noqa: E402
from t2hx.flowsim import packetk, patterns  # noqa: E402
from t2hx.flowsim.bulk import Phase  # noqa: E402
from t2hx.flowsim.fluid import Comm, Compute, Job  # noqa: E402
from t2hx.flowsim.network import open_network  # noqa: E402
from t2hx.flowsim.packet import open_packet  # noqa: E402
from t2hx.flowsim.packetjobs import run_jobs_packet  # noqa: E402

MIB = 1 << 20
#: Every phase the kernel ran since the last clear: (links, arbitration, messages, times).
RECORDED: list[tuple] = []


class Recording(packetk.Kernel):
    def __init__(self, links: packetk.Links, arb: packetk.Arbitration,
                 n_threads: int | None = None) -> None:
        super().__init__(links, arb, n_threads)
        self.links, self.arb = links, arb

    def run(self, phases: list[packetk.Messages]) -> list[packetk.Times]:
        out = super().run(phases)
        RECORDED.extend((self.links, self.arb, m, t) for m, t in zip(phases, out))
        return out


def save(name: str, run) -> None:
    RECORDED.clear()
    run()
    for i, (links, arb, msgs, (first, end, counters)) in enumerate(RECORDED):
        n = len(links.rate)
        dep_off, dep = msgs.dependencies()
        np.savez_compressed(
            HERE / (f"{name}.npz" if len(RECORDED) == 1 else f"{name}{i}.npz"),
            rate=links.rate, lat=links.lat, fwd=links.fwd, hdr=links.hdr, cap=links.cap,
            pair=links.pair, debt=links.debt,
            obuf=np.zeros(n, np.int32) if links.obuf is None else links.obuf,
            xrate=links.rate if links.xrate is None else links.xrate,
            bytes=msgs.bytes, route_off=msgs.route_off, route=msgs.route, vl=msgs.vl,
            dep=dep, dep_off=dep_off, delay=msgs.delay,
            arb=np.array([arb.mtu, arb.header, arb.high_limit, arb.oldest_first,
                          arb.per_output], np.int64),
            high=np.array(arb.high, np.int32).reshape(-1, 2),
            low=np.array(arb.low, np.int32).reshape(-1, 2),
            first=first, end=end,
            counters=np.array([counters[k] for k in packetk.COUNTERS], np.int64))


def ebb_round(pk, n: int, k: int, size: int) -> None:
    partner = patterns.bisections(n, 3, seed=1)[k]
    src = np.flatnonzero(partner >= 0)
    pk.run([Phase.of(src, partner[src], size)])


def chains() -> None:
    """tests/test_packetsim.py's bookkeeping case: 200 random messages over a 3-link chain
    with buffers of one packet; plain FIFOs, output buffers behind a faster crossbar, and
    queues per output served oldest first."""
    links = packetk.Links(np.full(3, 1e9), np.full(3, 1e-8), np.full(3, 5e-8),
                          np.full(3, 26, np.int32), np.array([33, 33, -1], np.int32),
                          np.full(3, -1, np.int32), np.zeros(3))
    arb = packetk.Arbitration(2048, 26, [(0, 4)], [(1, 4), (2, 4)], 0)
    for switch in ("fifo", "output_buffer", "per_output_oldest"):
        rng = np.random.default_rng(7)
        size = rng.integers(0, 20000, 200)
        msgs = packetk.Messages(size.astype(np.int64), np.arange(201, dtype=np.int64) * 3,
                                np.tile(np.arange(3, dtype=np.int32), 200),
                                rng.integers(0, 3, 200).astype(np.int8),
                                np.full(200, -1, np.int32), np.zeros(200))
        here, how = links, arb
        if switch != "fifo":
            here = dataclasses.replace(links, obuf=np.array([0, 66, 66], np.int32),
                                       xrate=np.full(3, 1.5e9))
        if switch == "per_output_oldest":
            how = dataclasses.replace(arb, oldest_first=True, per_output=True)
        save(f"chain_{switch}",
             lambda here=here, msgs=msgs, how=how: packetk.simulate(here, msgs, how))


def hyperx(system, hosts: list[str]):
    return open_network(system, "hyperx", "dfsssp", hosts=hosts, work=str(ROOT / "work"),
                        quiet=True)


def engine_cases() -> None:
    system = load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
    hosts = system.hostnames()
    n28, n56, n224 = (hyperx(system, hosts[:n]) for n in (28, 56, 224))
    pk = open_packet(n56)
    save("ebb_56_round", lambda: [ebb_round(pk, 56, k, MIB) for k in range(2)])
    pk = open_packet(n224)
    save("ebb_224_round0", lambda: ebb_round(pk, 224, 0, MIB))
    r = np.arange(28)
    pk = open_packet(n28)
    save("mpigraph_28_shift13", lambda: pk.run([Phase.of(r, (r + 13) % 28, 10 * MIB)]))
    save("mpigraph_28_shift5_eager", lambda: pk.run([Phase.of(r, (r + 5) % 28, 5000)]))
    pk = open_packet(n56)
    save("gather_56_64KiB", lambda: patterns.imb(pk, "Gather", [65536]))
    # several VLs under pressure: buffers of two packets, a high-priority table over three
    # VLs with a limit, oldest-first inputs, a 4 KiB MTU
    pk = open_packet(n56, params={"buffer_bytes": 8448, "hca_buffer_bytes": 8448,
                                  "mtu": 4096, "vlarb_high": "0:4,1:2,2:1",
                                  "vlarb_low": "3:4,4:4,5:2,6:4,7:4,0:1", "high_limit": 1,
                                  "input_arbitration": "oldest"})
    save("vls_56", lambda: ebb_round(pk, 56, 2, 256 << 10))
    pk = open_packet(n56, params={"output_buffer_bytes": 78 * 64, "crossbar_gbps": 48.0,
                                  "input_queues": "per_output"})
    save("voq_56", lambda: ebb_round(pk, 56, 1, 256 << 10))
    pk = open_packet(n56)
    a, b = np.arange(0, 28), np.arange(28, 56)

    def steps(ranks: np.ndarray) -> list:
        return [Comm(ranks, np.roll(ranks, 1), MIB), Compute(2e-5),
                Comm(ranks, np.roll(ranks, -3), MIB / 4)]

    save("jobs_56", lambda: run_jobs_packet(
        pk, [Job("a", steps(a), 3), Job("b", steps(b), 3, start=1e-6)], 3))


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def reference_cases() -> None:
    """Two of the reference simulator's cases, set up as the validation test sets them
    (output buffers behind a crossbar, queues per output served oldest first)."""
    ref = _module("refsim_data", ROOT / "bench" / "refsim" / "data.py")
    setup = _module("refsim_packet", ROOT / "bench" / "refsim" / "packet.py")
    data = ROOT / "tests" / "data" / "refsim"
    with tempfile.TemporaryDirectory() as scratch:
        for fabric, pattern in (("fattree", "alltoall"), ("hyperx-missing", "incast")):
            pk = setup.open_engine(ref, fabric, data, Path(scratch) / fabric)
            case = ref.case(fabric, pattern, data)
            save(f"refsim_{fabric}_{pattern}",
                 lambda pk=pk, case=case: setup.run_case(pk, case))


if __name__ == "__main__":
    packetk.Kernel = Recording                     # type: ignore[misc]
    chains()
    engine_cases()
    reference_cases()
