"""The packet engine against the reference packet simulator (the IB flit-level model for
OMNeT++; tests/data/refsim/ and the validation page that comes with it): every fabric and
pattern, per flow, median relative error within 10 % and worst within 25 % for throughput
and completion time.

The engine is configured as the reference was (meta.json), explicitly: no packet headers
and no cable delay (the reference models payload only, no propagation), 8 KiB input
buffers per VL (128 static credits), VL arbitration with an empty high table and weight 32
for VLs 0-7, host interface at link rate (the reference injects and drains at 5 GB/s,
above the link), no MPI costs (o = g = 0, every flow eager: the reference's flows are bare
RDMA streams starting at 0), switch forwarding 100 ns (its ISWDelay + VSWDelay), the
reference's routing tables and each flow's SL as recorded (DFSSSP draws one per query),
and its switch: an output buffer of 78 flits per port (its ``obuf.size``) filled through a
24 B x 250 MHz = 6 GB/s crossbar (``vlarb.busWidth`` x ``vlarb.coreFreq``), input buffers
that queue per output port (its ``ibuf`` keeps one queue per output and VL, sharing the
VL's credits) and outputs that serve a VL's oldest packet first (``useFCFSRQArb``).
``T2HX_REFSIM_ROOT`` names another checkout holding the data (default: this one).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from t2hx import ROOT
from t2hx.conf import load_system
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.network import LogGP, open_network
from t2hx.flowsim.packet import open_packet

REF = Path(os.environ.get("T2HX_REFSIM_ROOT", ROOT))
LOADER = REF / "bench" / "refsim" / "data.py"
DATA = REF / "tests" / "data" / "refsim"
AS_REFERENCE = {"header_bytes": 0, "cable_ns": 0.0, "buffer_bytes": 8192,
                "hca_buffer_bytes": 8192, "eager_bytes": 1 << 40, "vlarb_high": "0:0",
                "vlarb_low": ",".join(f"{v}:32" for v in range(8)), "high_limit": 0,
                "hca": {"interface": "link"}, "output_buffer_bytes": 78 * 64,
                "crossbar_gbps": 24 * 8 * 0.25, "input_queues": "per_output",
                "input_arbitration": "oldest"}

pytestmark = pytest.mark.skipif(not (LOADER.is_file() and DATA.is_dir()),
                                reason="no reference simulator outputs (tests/data/refsim)")


def loader():
    """bench/refsim/data.py, loaded by path (bench/ is no package)."""
    if "refsim_data" not in sys.modules:
        spec = importlib.util.spec_from_file_location("refsim_data", LOADER)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["refsim_data"] = mod        # dataclasses look their module up
        spec.loader.exec_module(mod)
    return sys.modules["refsim_data"]


#: Cases outside the bounds, with the measured errors and why (docs/modelling.md#packet-engine).
KNOWN: dict[tuple[str, str], str] = {}


def cases() -> list:
    if not (LOADER.is_file() and DATA.is_dir()):
        return []
    ref = loader()
    return [pytest.param(f, p, marks=pytest.mark.xfail(reason=KNOWN[(f, p)], strict=True))
            if (f, p) in KNOWN else (f, p)
            for f in ref.fabrics(DATA) for p in ref.meta(f, DATA)["patterns"]]


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """fabric -> the packet engine on the reference's routing (copied: the reference's
    directory is never written)."""
    ref, out = loader(), {}

    def get(fabric: str):
        if fabric not in out:
            where = DATA / fabric
            routing = tmp_path_factory.mktemp(fabric)
            for f in (where / "routing").iterdir():
                shutil.copy(f, routing / f.name)
            info = ref.routing(fabric, DATA)
            system = load_system(where / info["system"])
            net = open_network(system, info["plane"], info["engine"],
                               hosts=ref.hosts(fabric, DATA), routing=routing)
            net.loggp = LogGP(hop=100e-9, overhead=0.0, gap=0.0)
            sls = ref.path_sls(fabric, DATA)
            table = np.zeros((net.ranks, net.ranks), np.int64)
            for (a, b), sl in sls.items():
                table[a, b] = sl
            out[fabric] = open_packet(net, sl_of=lambda a, b, lid, t=table: t[a, b],
                                      params=AS_REFERENCE)
        return out[fabric]

    return get


@pytest.mark.parametrize("fabric,pattern", cases())
def test_packet_engine_matches_the_reference(engines, fabric, pattern) -> None:
    ref = loader()
    case = ref.case(fabric, pattern, DATA)
    pk = engines(fabric)
    flows = case.flows
    for f in flows:        # the recorded SL is the one the engine will use
        assert pk.sl_of(np.array([f.src]), np.array([f.dst]), np.zeros(1))[0] == f.sl
    ph = Phase(np.array([f.src for f in flows]), np.array([f.dst for f in flows]),
               np.array([float(f.bytes) for f in flows]))
    t, _ = pk.phase(ph)
    err = ref.errors(case, {(f.src, f.dst): float(t[i]) for i, f in enumerate(flows)})
    assert err.within(0.10, 0.25), err
