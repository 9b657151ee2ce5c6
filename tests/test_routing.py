"""Real routing: ibsim + stock OpenSM route our fabrics; dumps parse into usable tables."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx.routing import analysis
from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.errors import RoutingError
from t2hx.fabric.build import build_plane
from t2hx.routing import lft as lft_mod
from t2hx.routing.lft import PathError, load_tables
from t2hx.routing.opensm import route
from tests.conftest import MINI, leftovers

ENGINES = {
    "hyperx": ["minhop", "sssp", "dfsssp", "lash", "nue", "dor"],
    "fattree": ["minhop", "updn", "ftree", "sssp", "dfsssp", "nue"],
}


@pytest.mark.parametrize("plane,engine,lmc", [(p, e, lmc) for p, es in ENGINES.items()
                                               for e in es for lmc in (0, 1, 2)
                                               if not (e == "ftree" and lmc)])
def test_every_engine_and_lmc_routes_every_pair(mini, routed, plane, engine, lmc) -> None:
    r = routed(mini, plane, engine, lmc)
    assert r.run.summary["engine_used"] == engine and not r.run.summary["fallback"]
    assert r.tables.lmc == lmc
    for index in range(1 << lmc):
        src, lids = analysis.all_pairs(r.tables, lid_index=index)
        hops = r.tables.switch_hops(src, lids)  # raises on loops and black holes
        assert hops.min() >= 0 and len(hops) == 64 * 63
    for name in ("opensm-lfts.dump", "opensm-subnet.lst", "guid2lid", "opensm.log"):
        assert (r.run.out_dir / name).stat().st_size > 0


def test_dfsssp_routes_the_t2hx_hyperx_with_lmc2_and_reports_vls(t2hx_system, routed) -> None:
    r = routed(t2hx_system, "hyperx", "dfsssp", 2)
    s = r.run.summary
    hosts = len(t2hx_system.hostnames())
    switches = math.prod(t2hx_system.plane("hyperx").topology["dims"])
    assert not s["fallback"] and s["hca_count"] == hosts and s["switch_count"] == switches
    assert 2 <= s["vls"] <= 8
    assert r.tables.lmc == 2
    assert len(np.unique(r.tables.hca_lids(3))) == hosts


@pytest.mark.parametrize("engine", ["ftree", "sssp"])
def test_t2hx_fattree_routes_without_fallback(t2hx_system, routed, engine) -> None:
    r = routed(t2hx_system, "fattree", engine, 0)
    assert not r.run.summary["fallback"], r.run.summary
    src, lids = analysis.all_pairs(r.tables)
    assert r.tables.switch_hops(src, lids).max() <= 4


def test_perfect_hyperx_dfsssp_is_at_most_two_switch_hops(t2hx_system, tmp_path) -> None:
    data = yaml.safe_load(t2hx_system.path.read_text())
    data["planes"]["hyperx"]["missing_cables"] = {}
    path = tmp_path / "perfect.yaml"
    path.write_text(yaml.safe_dump(data))
    fabric = build_plane(load_system(path), "hyperx")
    run = route(fabric, tmp_path / "r", "dfsssp")
    hist = analysis.hop_histogram(load_tables(fabric, run.out_dir))
    assert max(hist) == 2 and hist[2] > hist[1]


def kary_system(tmp_path: Path) -> Path:
    data = {"name": "kary", "nodes": {"hostname": "k{index:02d}", "racks": 4, "per_rack": 16},
            "planes": {"ft": {"hca": "mlx4_0", "topology": {"kind": "kary", "k": 4, "n": 3}}}}
    path = tmp_path / "kary.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_ftree_full_bisection_shift_inside_a_pod_has_max_efi_1(tmp_path) -> None:
    system = load_system(kary_system(tmp_path))
    fabric = build_plane(system, "ft")
    t = load_tables(fabric, route(fabric, tmp_path / "r", "ftree").out_dir)
    pod = fabric.hcas()[:16]  # a 4-ary 3-tree pod: 4 leaves x 4 hosts
    for shift in range(1, 16):
        src = np.array(pod)
        dst = np.array([t.hca_lid(pod[(i + shift) % 16]) for i in range(16)])
        loads = analysis.link_loads(t, src, dst)
        assert loads.max() == 1, (shift, loads.max())


def test_shift_streams_count_the_flows_mpigraph_puts_on_one_cable(t2hx_system, routed,
                                                                   tmp_path) -> None:
    """Seed 000 Fig 1: a full-bisection pod carries mpiGraph's shift one flow per cable;
    on the HyperX rack (7 nodes per switch, linear) shift 7 sends one switch's 7 nodes to
    the next over their one cable under minimal routing."""
    system = load_system(kary_system(tmp_path))
    fabric = build_plane(system, "ft")
    t = load_tables(fabric, route(fabric, tmp_path / "r", "ftree").out_dir)
    assert analysis.shift_streams(t, fabric.hcas()[:16]) == 1
    assert analysis.shift_streams(t, fabric.hcas()) == 1   # ftree: shifts are congestion-free
    from t2hx.reproduce import fig1_streams
    r = routed(t2hx_system, "hyperx", "dfsssp", 0)
    assert fig1_streams(t2hx_system, r.tables) == {"fig1_shift_streams": 7,
                                                   "fig1_hosts": "linear 28"}


def test_three_jobs_on_a_two_level_fattree_show_hotspots_and_dark_fiber(mini, routed) -> None:
    """Seed 004 Fig 2: with oblivious routing, jobs that straddle leaves load some links
    with several of their paths while other links carry none of any job's traffic."""
    r = routed(mini, "fattree", "sssp", 0)
    hosts = mini.hostnames()
    jobs = [hosts[0:20], hosts[20:40], hosts[40:60]]
    m = analysis.job_metrics(r.tables, jobs)
    mask = analysis.inter_switch_mask(r.tables)
    used = m.effective_efi[mask & (m.effective_efi > 0)]
    print(f"max effective EFI {m.max_effective_efi}, mean over used links {used.mean():.1f}, "
          f"dark fiber {m.dark_fiber:.1%}, per-job max {m.per_job_max_efi}, "
          f"links per job {m.links_per_job}")
    assert m.max_effective_efi > used.mean()  # hotspots: imbalance among used links
    assert 0.0 < m.dark_fiber < 1.0           # dark fiber beside busy links
    assert all(n > 0 for n in m.links_per_job)


def test_channel_dependency_check(mini, routed) -> None:
    ftree = routed(mini, "fattree", "ftree", 0).tables
    assert analysis.is_acyclic(analysis.channel_dependencies(ftree), ftree.links)
    minhop = routed(mini, "hyperx", "minhop", 0).tables
    assert not analysis.is_acyclic(analysis.channel_dependencies(minhop), minhop.links)
    # a tiny hand-made graph: 0→1→2→0 is a cycle, 0→1→2 is not
    assert not analysis.is_acyclic(np.array([[0, 1], [1, 2], [2, 0]]), 3)
    assert analysis.is_acyclic(np.array([[0, 1], [1, 2]]), 3)


def test_fallback_is_detected(mini, tmp_path, capsys) -> None:
    code = main(["fabric", "route", "--system", str(MINI), "--plane", "hyperx", "--routing",
                 "ftree", "--out", str(tmp_path), "-q"])
    summary = json.loads((tmp_path / "routing-summary.json").read_text())
    assert code == 1 and summary["fallback"] and summary["engine_used"] == "minhop"
    assert "FELL BACK" in capsys.readouterr().out


def test_cli_route_writes_the_contract_summary(tmp_path) -> None:
    code = main(["fabric", "route", "--system", str(MINI), "--plane", "hyperx", "--routing",
                 "dfsssp", "--lmc", "1", "--out", str(tmp_path), "-q"])
    s = json.loads((tmp_path / "routing-summary.json").read_text())
    assert code == 0
    for key in ("engine", "lmc", "vls", "hca_count", "switch_count", "max_switch_hops",
                "fallback", "seconds"):
        assert key in s
    assert s["lmc"] == 1 and s["hca_count"] == 64 and s["max_switch_hops"] >= 2
    assert (tmp_path / "links.csv").read_text().startswith("link,src,dst,efi\n")


def test_timeout_is_an_error_and_leaves_nothing_running(mini, tmp_path) -> None:
    fabric = build_plane(mini, "hyperx")
    with pytest.raises(RoutingError, match="did not"):
        route(fabric, tmp_path, "dfsssp", timeout=0.01)
    assert not leftovers(str(tmp_path))


def test_ctrl_c_leaves_no_ibsim_or_opensm(tmp_path) -> None:
    code = ("import sys; from t2hx.conf import load_system; from t2hx.fabric.build import "
            "build_plane; from t2hx.routing.opensm import route; "
            f"s = load_system('{MINI}'); f = build_plane(s, 'hyperx'); "
            f"route(f, '{tmp_path}', 'dfsssp', env={{'LD_DEBUG': 'all'}})")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not leftovers(str(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert leftovers(str(tmp_path)), "the routing run never started"
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)
    time.sleep(0.2)
    assert not leftovers(str(tmp_path))


def test_black_holes_and_loops_are_detected(mini, routed, tmp_path) -> None:
    r = routed(mini, "hyperx", "dfsssp", 0)
    t = r.tables
    src = t.fabric.hcas()[0]
    dst_hca = t.fabric.hcas()[-1]
    lid = t.hca_lid(dst_hca)
    first_switch = int(t.link_dst[t.link_of[src, 1]])
    saved = t.lft[first_switch, lid]
    t.lft[first_switch, lid] = -1
    with pytest.raises(PathError, match="black hole"):
        t.path(src, lid)
    # point the first switch at a neighbour that points straight back: a loop
    port = next(p for p in range(1, t.link_of.shape[1]) if t.link_of[first_switch, p] >= 0
                and t.fabric.nodes[t.link_dst[t.link_of[first_switch, p]]].kind == "switch")
    peer = int(t.link_dst[t.link_of[first_switch, port]])
    back = next(p for p in range(1, t.link_of.shape[1]) if t.link_of[peer, p] >= 0
                and t.link_dst[t.link_of[peer, p]] == first_switch)
    saved_peer = t.lft[peer, lid]
    t.lft[first_switch, lid], t.lft[peer, lid] = port, back
    try:
        with pytest.raises(PathError, match="loop"):
            t.path(src, lid)
    finally:
        t.lft[first_switch, lid], t.lft[peer, lid] = saved, saved_peer


def test_import_and_analyze_dumps_of_a_real_fabric(mini, routed, tmp_path, capsys) -> None:
    r = routed(mini, "fattree", "sssp", 0)
    code = main(["fabric", "import", "--system", str(MINI), "--plane", "fattree", "--from",
                 str(r.run.out_dir), "--out", str(tmp_path / "imp"), "-q"])
    assert code == 0
    jobs = tmp_path / "jobs.txt"
    hosts = mini.hostnames()
    jobs.write_text(" ".join(hosts[:8]) + "\n" + " ".join(hosts[8:24]) + "\n")
    code = main(["fabric", "analyze", "--system", str(MINI), "--plane", "fattree", "--dumps",
                 str(tmp_path / "imp"), "--jobs", str(jobs), "-q"])
    out = capsys.readouterr().out
    assert code == 0 and "dark fiber" in out
    s = json.loads((tmp_path / "imp" / "routing-summary.json").read_text())
    assert s["jobs"]["links_per_job"][0] == 0  # 8 hosts on one leaf use no inter-switch link


def test_dumps_of_another_fabric_are_refused(mini, routed) -> None:
    r = routed(mini, "fattree", "sssp", 0)
    other = build_plane(mini, "hyperx")
    with pytest.raises(RoutingError, match="another fabric"):
        load_tables(other, r.run.out_dir)


def test_guid2lid_file_fixes_the_lids(mini, tmp_path) -> None:
    """A LID policy (as PARX's quadrants need) reaches OpenSM through its guid2lid file."""
    fabric = build_plane(mini, "hyperx")
    wanted = {}
    for k, h in enumerate(fabric.hcas()):
        wanted[fabric.nodes[h].port_guid(1)] = 1000 + 4 * k
    for k, s in enumerate(fabric.switches()):
        wanted[fabric.nodes[s].guid] = 2000 + 4 * k
    run = route(fabric, tmp_path, "dfsssp", lmc=2, guid2lid=wanted)
    t = load_tables(fabric, run.out_dir)
    assert [t.hca_lid(h) for h in fabric.hcas()] == [1000 + 4 * k for k in range(64)]
    assert [int(t.base_lid[s, 0]) for s in fabric.switches()] == [2000 + 4 * k for k in range(16)]
    src, lids = analysis.all_pairs(t, lid_index=3)
    assert (lids % 4 == 3).all() and t.switch_hops(src, lids).max() <= 3


def test_parsed_lfts_are_cached_beside_the_dump_and_reparsed_when_it_changes(tmp_path) -> None:
    system = load_system(kary_system(tmp_path))
    fabric = build_plane(system, "ft")
    out = route(fabric, tmp_path / "r", "ftree").out_dir
    first = load_tables(fabric, out).lft
    cache = out / lft_mod.LFT_CACHE
    assert cache.is_file()
    assert (load_tables(fabric, out).lft == first).all()
    # A dump rewritten in place (a re-route, a copied real dump) must not reuse the array.
    dump = out / "opensm-lfts.dump"
    text = dump.read_text()
    head = text.index("Unicast lids")
    block = text[head:].split("\n", 2)
    first_entry = block[2].split("\n", 1)[0]          # "0x0001 3 : (...)"
    lid, port = first_entry.split()[:2]
    new_port = "1" if port != "1" else "2"
    dump.write_text(text[:head] + block[0] + "\n" + block[1] + "\n"
                    + first_entry.replace(f"{lid} {port}", f"{lid} {new_port}", 1)
                    + "\n" + block[2].split("\n", 1)[1])
    again = load_tables(fabric, out).lft
    assert (again != first).sum() == 1


def test_the_numpy_reader_of_opensm_dumps_equals_the_line_parser(mini, routed, tmp_path) -> None:
    """OpenSM's fixed-width dump read with numpy (the replay reads one per SAR routing) gives
    the line parser's table, also with UNREACHABLE entries; a line in another layout (another
    tool's dump) sends the whole file to the line parser, which reads it."""
    out = routed(mini, "fattree", "ftree").run.out_dir
    fabric = build_plane(mini, "fattree")
    max_lid = max(hi for _, hi in lft_mod.read_guid2lid(out / "guid2lid").values())
    dump = out / "opensm-lfts.dump"
    lines = dump.read_text().splitlines(keepends=True)
    entries = [k for k, ln in enumerate(lines) if ln.startswith("0x")]
    edited = tmp_path / "opensm-lfts.dump"
    for k in entries[3::7]:
        lines[k] = lines[k][:7] + "UNREACHABLE\n"
    edited.write_text("".join(lines))
    fast = lft_mod.parse_lfts(edited, fabric, max_lid)
    assert (fast == lft_mod.parse_lfts(edited, fabric, max_lid, fast=False)).all()
    assert (fast == -1).sum() > len(entries[3::7]) // 2
    assert lft_mod._fixed_width_entries(edited.read_bytes(), {n.guid: i for i, n in enumerate(
        fabric.nodes) if n.kind == "switch"}, edited, fabric) is not None
    k = entries[0]
    lines[k] = lines[k][:7] + lines[k][7:10].lstrip("0") + lines[k][10:]   # "0x0001 1 # …"
    edited.write_text("".join(lines))
    assert (lft_mod.parse_lfts(edited, fabric, max_lid) == fast).all()


def test_ftree_without_guid_files_falls_back_to_updn_on_taurus_islands(tmp_path) -> None:
    """Seed 004's Table 1 gives Taurus identical fat-tree and Up*/Down* columns (docs/
    history.md, "Taurus' identical columns"): OpenSM's ftree, left to find the roots and
    compute nodes itself, refuses the islands fabric and OpenSM routes with the next engine
    of its list; given the GUID files, as t2hx routes it, ftree accepts it."""
    from t2hx.conf import load_system, system_path
    from t2hx.fabric.build import build_plane
    from t2hx.routing.opensm import route

    fabric = build_plane(load_system(system_path("sc16-taurus")), "ib")
    alone = route(fabric, tmp_path / "alone", "ftree", 0, {
        "root_guid_file": "(null)", "cn_guid_file": "(null)", "routing_engine": "ftree,updn"},
        timeout=900)
    assert alone.summary["engine_used"] == "updn" and alone.summary["fallback"]
    assert "Fabric topology hasn't been identified as FatTree" in alone.summary["errors"]
    given = route(fabric, tmp_path / "given", "ftree", 0, {"routing_engine": "ftree,updn"},
                  timeout=900)
    assert given.summary["engine_used"] == "ftree" and not given.summary["fallback"]
