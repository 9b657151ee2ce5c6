"""The packet engine set up as the reference packet simulator was, on one of its fabrics
(tests/data/refsim/; docs/validation.md lists every setting and the reference parameter it
copies). Shared by tests/test_packet_vs_reference.py and bench/packetsim.py, which load it
by path; ``ref`` is bench/refsim/data.py, loaded by the caller.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from t2hx.conf import load_system
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.network import LogGP, open_network
from t2hx.flowsim.packet import PacketNetwork, open_packet

#: model.packet as the reference's ini (meta.json): payload only (no headers), no cable
#: delay, 128 credits per VL (maxStatic), its VL arbitration tables, generator and sink
#: above the link rate, no rendezvous, and its switch: 78-flit output buffers (obuf.size)
#: behind a 24 B x 250 MHz crossbar (vlarb.busWidth, vlarb.coreFreq), queues per output in
#: the input buffers (ibuf) and the oldest packet first among a VL's inputs (useFCFSRQArb).
AS_REFERENCE = {"header_bytes": 0, "cable_ns": 0.0, "buffer_bytes": 8192,
                "hca_buffer_bytes": 8192, "eager_bytes": 1 << 40, "vlarb_high": "0:0",
                "vlarb_low": ",".join(f"{v}:32" for v in range(8)), "high_limit": 0,
                "hca": {"interface": "link"}, "output_buffer_bytes": 78 * 64,
                "crossbar_gbps": 24 * 8 * 0.25, "input_queues": "per_output",
                "input_arbitration": "oldest"}
#: LogGP of the comparison: switch latency ISWDelay + VSWDelay, no MPI costs (bare RDMA
#: streams that all start at t = 0).
REFERENCE_LOGGP = LogGP(hop=100e-9, overhead=0.0, gap=0.0)


def open_engine(ref, fabric: str, data: Path, scratch: Path) -> PacketNetwork:
    """The packet engine on the reference's routing of ``fabric`` (its tables copied to
    ``scratch``: the data directory is never written), each flow on its recorded SL."""
    where = data / fabric
    scratch.mkdir(parents=True, exist_ok=True)
    for f in (where / "routing").iterdir():
        shutil.copy(f, scratch / f.name)
    info = ref.routing(fabric, data)
    system = load_system(where / info["system"])
    net = open_network(system, info["plane"], info["engine"],
                       hosts=ref.hosts(fabric, data), dumps=scratch)
    net.loggp = REFERENCE_LOGGP
    table = np.zeros((net.ranks, net.ranks), np.int64)
    for (a, b), sl in ref.path_sls(fabric, data).items():
        table[a, b] = sl
    return open_packet(net, sl_of=lambda a, b, lid, t=table: t[a, b], params=AS_REFERENCE)


def run_case(pk: PacketNetwork, case) -> tuple[dict[tuple[int, int], float], float]:
    """((src, dst) -> end time of each flow of a reference case, wall seconds)."""
    flows = case.flows
    ph = Phase(np.array([f.src for f in flows]), np.array([f.dst for f in flows]),
               np.array([float(f.bytes) for f in flows]))
    clock = time.perf_counter()
    t, _ = pk.phase(ph)
    wall = time.perf_counter() - clock
    return {(f.src, f.dst): float(t[i]) for i, f in enumerate(flows)}, wall
