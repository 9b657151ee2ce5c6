"""Seed 004 §3.3's property-preserving network update (t2hx/routing/lftupdate.py,
t2hx/history/updates.py). The checker is first held to OpenSM's own claims on mini (DFSSSP's
layers are deadlock-free, the same paths on one VL are not; a loop is found), then a sampled
day of seed 004's Taurus-like system is replayed through the update protocol: no
intermediate state may have a loop or a deadlock cycle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from t2hx.conf import load_system, system_path
from t2hx.fabric.build import build_plane
from t2hx.history import samples
from t2hx.history.updates import updates
from t2hx.routing import lftupdate as U
from t2hx.routing.cache import ensure_routing
from t2hx.routing.lft import load_tables
from t2hx.routing.pathsl import path_sl

MINI = load_system(system_path("mini"))
ATLAS = Path(__file__).resolve().parents[1] / "conf/traces/LLNL-Atlas-2006-2.1-cln.swf.gz"


@pytest.fixture(scope="module")
def dfsssp(tmp_path_factory):
    """mini's HyperX routed by OpenSM's DFSSSP, with its per-path VLs."""
    work = tmp_path_factory.mktemp("work")
    fabric = build_plane(MINI, "hyperx")
    run = ensure_routing(MINI, "hyperx", "dfsssp", None, work, fabric)
    tables = load_tables(fabric, run)
    return tables, path_sl(tables, run, "dfsssp")


def _pairs(tables):
    """Every HCA-to-HCA path as (source leaf, destination LID, source LID)."""
    f = tables.fabric
    hcas = np.asarray(f.hcas())
    src = np.repeat(hcas, len(hcas))
    dst = np.tile(hcas, len(hcas))
    keep = src != dst
    leaf = np.array([f.switch_of(h) for h in src[keep]])
    slid = tables.base_lid[src[keep], 1]
    return leaf, tables.base_lid[dst[keep], 1], slid


def test_dfsssp_layers_are_acyclic_and_one_lane_is_not(dfsssp) -> None:
    tables, sl = dfsssp
    leaf, dlid, slid = _pairs(tables)
    lanes = sl.base[sl.row[slid], dlid]           # DFSSSP's layer of each path
    assert lanes.max() >= 1                       # a 4x4 HyperX needs more than one layer
    assert U.cyclic_vls(tables, tables.lft, leaf, dlid, lanes) == []
    assert U.cyclic_vls(tables, tables.lft, leaf, dlid, np.zeros_like(lanes)) == [0]


def test_a_loop_in_the_tables_is_found(dfsssp) -> None:
    tables, _ = dfsssp
    lids = tables.hca_lids(0)
    assert len(U.unreachable(tables, tables.lft, lids)) == 0
    # Two switches that forward one LID to each other: a loop for that LID only.
    target = int(lids[-1])
    a = tables.fabric.switch_of(tables.fabric.hcas()[0])
    port = int(tables.lft[a, target])
    b = int(tables.link_dst[tables.link_of[a, port]])
    back = next(p for p in range(1, tables.link_of.shape[1]) if tables.link_of[b, p] >= 0
                and tables.link_dst[tables.link_of[b, p]] == a)
    lft = tables.lft.copy()
    lft[b, target] = back
    assert list(U.unreachable(tables, lft, lids)) == [target]


def test_mads_go_block_by_block_each_to_every_switch_in_opensm_order(dfsssp) -> None:
    tables, _ = dfsssp
    new = tables.lft.copy()
    switches = [n for n, node in enumerate(tables.fabric.nodes) if node.kind == "switch"]
    assert new.shape[1] > U.BLOCK + 1
    new[switches[0], 1] += 1                        # block 0 of one switch
    new[switches, U.BLOCK + 1] += 1                 # block 1 of every switch
    sent = U.mads(tables.lft, new, tables)
    assert [b for b, _ in sent] == sorted(b for b, _ in sent)        # block-major
    assert len({s for _, s in sent}) == len(switches)
    keys = [int.from_bytes(tables.fabric.nodes[s].guid.to_bytes(8, "big"), "little")
            for b, s in sent if b == sent[-1][0]]
    assert keys == sorted(keys)            # cl_qmap order of GUIDs in network byte order


def test_a_sampled_seed_004_day_updates_without_loop_or_deadlock(tmp_path: Path) -> None:
    """Day 30 of the Atlas trace on sc16-taurus, fragmented placement: the first re-routes
    of the day through the protocol; Def 6 holds in every intermediate state."""
    system = load_system(system_path("sc16-taurus"))
    trace, placement, hosts = samples.load(ATLAS, system, policy="least-recent")
    doc = samples.samples_doc(trace, placement, system.name, len(hosts), 600,
                              first_day=30, days=1)
    found = list(updates(doc, system, "ib", tmp_path, limit=2))
    assert len(found) == 2
    for rec in found:
        assert rec["mads"] > 0 and rec["high_changed"] == 0
        assert rec["cycles"] == {"S": [], "S'": []}
        assert rec["unreachable"] == {"S": 0, "S'": 0}
        assert max(rec["layers"]) <= rec["top_vl"] and rec["preserving"]


def test_sar_on_the_high_lids_vl_breaks_the_protocol() -> None:
    ok = U.Update(mads=1, rounds=1, switches=1, high_changed=0, cycles={"S": [], "S'": []},
                  unreachable={"S": 0, "S'": 0}, layers=(2, 3), top_vl=7)
    assert ok.preserving
    assert not U.Update(**{**ok.__dict__, "layers": (2, 8)}).preserving
    assert not U.Update(**{**ok.__dict__, "cycles": {"S": [], "S'": [1]}}).preserving


def test_history_updates_writes_one_record_per_reroute(tmp_path: Path, capsys) -> None:
    import json

    from t2hx.cli import main

    h = MINI.hostnames()
    jobs = [",".join(h[0:4] + h[20:24]), ",".join(h[4:20]), ",".join(h[24:40] + h[60:64])]
    doc = {"format": "t2hx-history-samples/1", "system": "mini", "nodes": len(h),
           "interval_s": 600.0, "trace": {}, "left_out": {},
           "jobs": [{"id": str(k), "start": 0, "end": 1, "hosts": x} for k, x in enumerate(jobs)],
           "samples": [{"t": 600.0 * k, "jobs": s} for k, s in enumerate([[0, 1], [1, 2],
                                                                           [1, 2], [0, 2]])]}
    (tmp_path / "s.json").write_text(json.dumps(doc))
    out = tmp_path / "updates.json"
    assert main(["-q", "history", "updates", str(tmp_path / "s.json"), "--system", "mini",
                 "--plane", "fattree", "--out", str(out), "--work", str(tmp_path / "w"),
                 "--naive"]) == 0
    found = json.loads(out.read_text())
    assert [r["reroute"] for r in found] == [1, 2]        # [1, 2] twice is one job set
    assert all(r["preserving"] and r["naive_loop_states"] == 0 for r in found)
    assert "Def 6 holds for every one" in capsys.readouterr().out
