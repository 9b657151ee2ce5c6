"""The parx and sar routing engines (parx/libparx.so) loaded by the stock opensm on ibsim:
rules R1-R4, Table 1 hop counts, VLs, demand/job files, errors and SIGHUP re-routing."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest

from t2hx import ROOT
from t2hx.routing import analysis, parx
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.fabric.hyperx import hyperx
from t2hx.routing.lft import Tables, load_tables
from t2hx.fabric.netfile import write_netfile
from t2hx.routing.opensm import guid2lid_text, route, umad2sim


def route_engine(fab: Fabric, out: Path, engine: str, options: dict[str, object] | None = None,
                 fallback: bool = False):
    """Routes with our plugin: the engine table's LMC and LID policy (LMC 2 and the quadrant
    LIDs for parx, t2hx.routing.parx.routing_args), QoS on for SL2VL."""
    args = parx.routing_args(fab, engine, fallback=fallback)
    opts = ",".join(f"{k}={v}" for k, v in (options or {}).items())
    conf: dict[str, object] = dict(args["extra_conf"])
    if opts:
        conf["event_plugin_options"] = opts
    return route(fab, out, engine, lmc=args["lmc"], extra_conf=conf, guid2lid=args["guid2lid"],
                 timeout=120)


def pruned_distances(fab: Fabric, x: int | None) -> tuple[np.ndarray, dict[int, int]]:
    """Switch hop distances with the links of rule R(x+1) removed (x=None: none removed)."""
    quads = parx.node_quadrants(fab)
    pos = {s: k for k, s in enumerate(fab.switches())}
    dist = fab.hop_matrix(None if x is None else
                          lambda c: not parx.rule_removes(x, quads[c.a], quads[c.b]))
    return dist, pos


class ParxCheck:
    """Per LID offset x: every pair's path, its switch hops and the reference distances."""

    def __init__(self, fab: Fabric, tab: Tables) -> None:
        quads = parx.node_quadrants(fab)
        self.q = np.array([quads[i] for i in range(len(fab.nodes))])
        full, pos = pruned_distances(fab, None)
        sw_of = np.array([pos[fab.switch_of(i)] if fab.nodes[i].kind == "hca" else pos[i]
                          for i in range(len(fab.nodes))])
        inter = analysis.inter_switch_mask(tab)
        self.removed_links_used = 0
        self.hops, self.pruned = {}, {}
        for x in range(4):
            src, lids = analysis.all_pairs(tab, lid_index=x)
            p = tab.paths(src, lids)
            link = np.maximum(p, 0)
            on = (p >= 0) & inter[link]
            qa, qb = self.q[tab.link_src[link]], self.q[tab.link_dst[link]]
            rule = np.array([[parx.rule_removes(x, a, b) for b in range(4)] for a in range(4)])
            self.removed_links_used += int((on & rule[qa, qb]).sum())
            a, b = sw_of[src], sw_of[tab.lid_node[lids]]
            self.hops[x] = on.sum(axis=1)
            self.pruned[x] = pruned_distances(fab, x)[0][a, b]
        self.src_q, self.dst_q = self.q[src], self.q[tab.lid_node[lids]]
        self.minimal = full[a, b]
        self.same_switch = a == b
        # hops between the switches had no cable been missing: coordinates that differ
        coord = np.array([fab.nodes[s].attrs["coord"] for s in fab.switches()])
        self.perfect = (coord[a] != coord[b]).sum(axis=1)

    def table_masks(self, large: bool):
        """(x, pairs that use LID offset x under Table 1a/1b)."""
        for x in range(4):
            use = np.zeros(len(self.minimal), dtype=bool)
            for s in range(4):
                for d in range(4):
                    if x in parx.choices(s, d, large):
                        use |= (self.src_q == s) & (self.dst_q == d)
            yield x, use

    def same_half(self) -> np.ndarray:
        diagonal = ((self.src_q + self.dst_q) % 2 == 0) & (self.src_q != self.dst_q)
        return ~diagonal & ~self.same_switch


@pytest.fixture(scope="module")
def perfect_4x4(tmp_path_factory):
    """A 4x4 HyperX without missing cables (4 hosts per switch)."""
    fab = hyperx("hx4", [f"p{i:02d}" for i in range(64)], [4, 4], 4, switch_ports=16)
    fab.topology["hca"] = "mlx4_1"
    out = tmp_path_factory.mktemp("parx-perfect")
    run = route_engine(fab, out, "parx")
    return fab, run, load_tables(fab, out)


def test_parx_on_a_perfect_hyperx_follows_table1(perfect_4x4) -> None:
    fab, run, tab = perfect_4x4
    s = run.summary
    assert s["engine_used"] == "parx" and not s["fallback"] and 1 <= s["vls"] <= 8, s
    assert tab.lmc == 2
    chk = ParxCheck(fab, tab)
    assert chk.removed_links_used == 0
    for x in range(4):
        assert (chk.hops[x] == chk.pruned[x]).all()
    for x, use in chk.table_masks(large=False):
        assert (chk.hops[x][use] == chk.minimal[use]).all(), f"Table 1a LID{x} not minimal"
    detour = chk.same_half()
    for x, use in chk.table_masks(large=True):
        sel = use & detour
        assert sel.any() and (chk.hops[x][sel] > chk.minimal[sel]).all(), f"LID{x}"


def test_parx_serves_path_sls_and_quadrant_lids(perfect_4x4) -> None:
    fab, run, tab = perfect_4x4
    log = run.log.read_text()
    assert "parx: routed 272 destination LIDs over 16 switches; Virtual Lanes needed:" in log
    g2l = (run.out_dir / "guid2lid").read_text()
    lids = parx.lid_policy(fab)
    for h in fab.hcas()[:8]:
        guid = fab.nodes[h].port_guid(1)
        assert f"0x{guid:016x} 0x{lids[guid]:04x} 0x{lids[guid] + 3:04x}" in g2l
    # SL2VL tables programmed by OpenSM from our update_sl2vl (qos TRUE): SL i -> VL i
    sl2vl = (run.out_dir / "opensm-sl2vl.dump").read_text()
    assert sl2vl.count("0x") > 0
    # every answer path_sl would give, for the packet engine (t2hx/routing/pathsl.py)
    answers = (run.out_dir / "parx-path-sl.dump").read_text().splitlines()
    assert answers[0].startswith("# parx path SLs") and len(answers) > 16 * 64
    assert {line.split()[2] for line in answers[1:]} <= {str(v) for v in range(8)}


class Measurement(UserWarning):
    """Numbers an acceptance test measured: pytest lists them in its warnings summary, so they
    show with or without -s and under xdist (also in junit XML as test properties)."""


def report(record_property, name: str, values: dict[str, dict]) -> None:
    """values: metric -> {engine: number}."""
    text = f"{name}: " + "; ".join(
        f"{metric} " + " vs ".join(f"{e} {v}" for e, v in by.items())
        for metric, by in values.items())
    print(text)
    record_property(name, values)
    warnings.warn(text, Measurement, stacklevel=2)


_T2HX: dict[tuple, tuple] = {}


def routed_t2hx(system, engine: str, tmp_path_factory, jobs: Path | None = None) -> tuple:
    """(fabric, run, tables) of the t2hx HyperX routed by our plugin, once per process: the
    672-node routings are shared by every test module that imports this."""
    key = (engine, jobs.read_text() if jobs else None)
    if key not in _T2HX:
        fab = build_plane(system, "hyperx")
        out = tmp_path_factory.mktemp(f"t2hx-{engine}")
        run = route_engine(fab, out, engine, {"sar_jobs": jobs} if jobs else None)
        _T2HX[key] = (fab, run, load_tables(fab, out))
    return _T2HX[key]


@pytest.fixture(scope="session")
def t2hx_parx(t2hx_system, tmp_path_factory):
    return routed_t2hx(t2hx_system, "parx", tmp_path_factory)


def test_parx_routes_the_t2hx_hyperx_with_missing_cables(t2hx_parx, t2hx_system,
                                                         record_property) -> None:
    fab, run, tab = t2hx_parx
    s = run.summary
    assert s["engine_used"] == "parx" and not s["fallback"] and s["vls"] <= 8
    plane = t2hx_system.plane("hyperx")
    dims = plane.topology["dims"]
    # all-to-all in every row of every dimension (864 on the 12x8 of the paper)
    perfect = math.prod(dims) * sum(d - 1 for d in dims) // 2 * plane.topology["multiplicity"]
    missing = len(plane.missing_cables["list"]) + plane.missing_cables["random"]
    assert s["hca_count"] == len(t2hx_system.hostnames())
    assert len(fab.inter_switch_cables()) == perfect - missing
    chk = ParxCheck(fab, tab)
    # R1-R4: no LID_x path ever uses a link with both ends in the half rule x removes
    assert chk.removed_links_used == 0
    # the engine's paths are shortest paths of the pruned graph
    for x in range(4):
        assert (chk.hops[x] == chk.pruned[x]).all()
    # Table 1a: minimal unless the missing cables leave no minimal path in the pruned graph
    small_total = small_long = 0
    for x, use in chk.table_masks(large=False):
        longer = chk.hops[x] > chk.minimal
        forced = chk.pruned[x] > chk.minimal
        assert not (use & longer & ~forced).any()
        small_total += int(use.sum())
        small_long += int((use & longer).sum())
    # Table 1b: same-half pairs detour (a path longer than minimal), except where a missing
    # cable already lengthened the minimal path and one of those leaves the half
    large_total = large_direct = 0
    for x, use in chk.table_masks(large=True):
        sel = use & chk.same_half()
        large_total += int(sel.sum())
        direct = sel & (chk.hops[x] <= chk.minimal)
        large_direct += int(direct.sum())
        assert (chk.minimal[direct] > chk.perfect[direct]).all()
    report(record_property, "parx on the t2hx HyperX", {
        "VLs": {"parx": s["vls"]}, "routing s": {"parx": s["seconds"]},
        "Table 1a paths longer than minimal": {"parx": f"{small_long}/{small_total}"},
        "Table 1b same-half pairs without detour": {"parx": f"{large_direct}/{large_total}"}})
    assert small_long < 0.02 * small_total and large_direct < 0.01 * large_total


def jobs_of(fab: Fabric, sizes: list[int]) -> list[list[str]]:
    """Contiguous jobs in hostname order, as a linear placement would give."""
    hosts = fab.hosts()
    out, k = [], 0
    for n in sizes:
        out.append(hosts[k:k + n])
        k += n
    return out


def test_sar_vs_dfsssp_for_a_three_job_mix(t2hx_system, routed, tmp_path_factory,
                                           record_property) -> None:
    fab = build_plane(t2hx_system, "hyperx")
    jobs = jobs_of(fab, [224, 168, 56])
    jobfile = tmp_path_factory.mktemp("sar-jobs") / "jobs.txt"
    jobfile.write_text("".join(f"{h} job{k}\n" for k, job in enumerate(jobs) for h in job))
    _, sar, sar_tab = routed_t2hx(t2hx_system, "sar", tmp_path_factory, jobfile)
    dfsssp = routed(t2hx_system, "hyperx", "dfsssp")
    assert sar.summary["engine_used"] == "sar" and not sar.summary["fallback"]
    assert "sar: job file" in sar.log.read_text() and ": 3 jobs" in sar.log.read_text()
    m_sar = analysis.job_metrics(sar_tab, jobs)
    m_df = analysis.job_metrics(dfsssp.tables, jobs)
    report(record_property, "t2hx HyperX, jobs of 224/168/56 nodes", {
        "max effective EFI": {"sar": m_sar.max_effective_efi, "dfsssp": m_df.max_effective_efi},
        "dark fiber": {"sar": round(m_sar.dark_fiber, 4), "dfsssp": round(m_df.dark_fiber, 4)},
        "VLs": {"sar": sar.summary["vls"], "dfsssp": dfsssp.run.summary["vls"]}})
    assert m_sar.max_effective_efi < m_df.max_effective_efi
    assert m_sar.dark_fiber < m_df.dark_fiber
    # SAR keeps paths minimal (SC16 §4.3.4)
    src, lids = analysis.all_pairs(sar_tab)
    full, pos = pruned_distances(fab, None)
    sw_of = np.full(len(fab.nodes), -1)
    for h in fab.hcas():
        sw_of[h] = pos[fab.switch_of(h)]
    a, b = sw_of[src], sw_of[sar_tab.lid_node[lids]]
    assert (sar_tab.switch_hops(src, lids) == full[a, b]).all()


@pytest.fixture(scope="module")
def mini_hx(mini):
    return build_plane(mini, "hyperx")


def test_parx_demand_file_is_read_and_unknown_nodes_are_skipped(mini_hx, tmp_path) -> None:
    hosts = mini_hx.hosts()
    demand = tmp_path / "demand.txt"
    demand.write_text(f"# test\n{hosts[0]} {hosts[20]}:255 {hosts[21]}:1 ghost:7\n"
                      f"{hosts[5]} {hosts[20]}:0\n")
    run = route_engine(mini_hx, tmp_path / "o", "parx", {"parx_demand": demand})
    log = run.log.read_text()
    assert run.summary["engine_used"] == "parx" and not run.summary["fallback"]
    assert f"parx: demand file {demand}: 2 destination nodes listed" in log
    assert "node 'ghost' is not in the fabric; skipped" in log


@pytest.mark.parametrize("line,message", [
    ("{a} {b}:256", "is not an integer in 0..255"),
    ("{a} {b}:-1", "is not an integer in 0..255"),
    ("{a} {b}", "is not <node>:<weight>"),
])
def test_parx_refuses_bad_demand_weights(mini_hx, tmp_path, line, message) -> None:
    hosts = mini_hx.hosts()
    demand = tmp_path / "demand.txt"
    demand.write_text(line.format(a=hosts[0], b=hosts[9]) + "\n")
    run = route_engine(mini_hx, tmp_path / "o", "parx", {"parx_demand": demand}, fallback=True)
    assert run.summary["fallback"]
    assert any(message in e for e in run.summary["errors"]), run.summary["errors"]


def test_parx_without_the_lid_policy_fails_clearly(mini_hx, tmp_path) -> None:
    run = route(mini_hx, tmp_path, "parx", lmc=2, extra_conf={"qos": "TRUE"}, timeout=120)
    assert run.summary["fallback"]
    assert any("outside the PARX switch range 10000..13999" in e
               for e in run.summary["errors"]), run.summary["errors"]


def test_parx_needs_lmc_2(mini_hx, tmp_path) -> None:
    run = route(mini_hx, tmp_path, "parx", lmc=1, extra_conf={"qos": "TRUE"},
                guid2lid=parx.lid_policy(mini_hx), timeout=120)
    assert run.summary["fallback"]
    assert any("parx needs 'lmc 2'" in e for e in run.summary["errors"])


def test_vl_limit_is_respected_and_reported(mini_hx, tmp_path) -> None:
    run = route_engine(mini_hx, tmp_path, "parx", {"max_vls": 1}, fallback=True)
    assert run.summary["fallback"]
    assert any("needs more than 1 virtual lanes" in e for e in run.summary["errors"])


class LiveOpenSM:
    """ibsim + a long-running opensm (not -o), killed by process group on exit."""

    def __init__(self, fab: Fabric, out: Path, conf: str, lids: dict[int, int]) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "cache").mkdir(exist_ok=True)
        (out / "cache" / "guid2lid").write_text(guid2lid_text(fab, lids, 2))
        self.out = out
        net = write_netfile(fab, out / "fabric.net", lids, 2)
        (out / "opensm.conf").write_text(conf)
        env = dict(os.environ, IBSIM_SOCKNAME=f"t2hx-test-{uuid.uuid4().hex[:12]}",
                   OSM_CACHE_DIR=str(out / "cache"),
                   LD_LIBRARY_PATH=str(ROOT / "parx"))
        self.procs: list[subprocess.Popen] = []
        self.procs.append(subprocess.Popen(
            ["ibsim", "-s", "-n", "-N", "2048", "-S", "256", "-P", "13312", str(net)],
            env=env, stdout=open(out / "ibsim.log", "w"), stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True))
        self.wait_for(out / "ibsim.log", "Network simulator ready.", 1)
        self.procs.append(subprocess.Popen(
            ["opensm", "-F", str(out / "opensm.conf"), "-f", str(out / "opensm.log")],
            env=dict(env, LD_PRELOAD=str(umad2sim())), stdout=open(out / "opensm.out", "w"),
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))

    def wait_for(self, path: Path, text: str, count: int, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            body = path.read_text(errors="replace") if path.exists() else ""
            if body.count(text) >= count:
                return body
            time.sleep(0.1)
        raise AssertionError(f"'{text}' x{count} not in {path} after {timeout} s")

    def hup(self) -> None:
        os.kill(self.procs[1].pid, signal.SIGHUP)

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def test_sighup_rereads_the_demand_file_and_reroutes(mini_hx, tmp_path) -> None:
    hosts = mini_hx.hosts()
    demand = tmp_path / "demand.txt"
    demand.write_text(f"{hosts[0]} {hosts[40]}:200\n")
    conf = (f"lmc 2\nrouting_engine parx,no_fallback\nqos TRUE\nevent_plugin_name parx\n"
            f"event_plugin_options parx_demand={demand}\nlog_flags 0x43\n"
            f"dump_files_dir {tmp_path}\nsweep_interval 0\nhonor_guid2lid_file TRUE\n"
            "force_log_flush TRUE\n")
    sm = LiveOpenSM(mini_hx, tmp_path, conf, parx.lid_policy(mini_hx))
    try:
        log = tmp_path / "opensm.log"
        sm.wait_for(log, "SUBNET UP", 1)
        assert "1 destination nodes listed" in log.read_text()
        tmp = demand.with_suffix(".tmp")
        tmp.write_text(f"{hosts[0]} {hosts[40]}:200 {hosts[41]}:9 {hosts[42]}:3\n")
        os.replace(tmp, demand)
        sm.hup()
        body = sm.wait_for(log, "parx: routed", 2)
        assert "3 destination nodes listed" in body
    finally:
        sm.close()


def test_unreachable_lids_are_reported_as_errors(tmp_path) -> None:
    """hx-0-0 keeps only links into the left half: rule R1 (LID0) cuts it off."""
    fab = hyperx("hx4", [f"p{i:02d}" for i in range(32)], [4, 4], 2, switch_ports=16)
    fab.topology["hca"] = "mlx4_1"
    a, right = fab.index("hx-0-0"), {fab.index("hx-2-0"), fab.index("hx-3-0")}
    fab.remove_cables([c for c in fab.cables if {c.a, c.b} & {a} and {c.a, c.b} & right])
    run = route_engine(fab, tmp_path, "parx", fallback=True)
    assert run.summary["fallback"]
    errors = " ".join(run.summary["errors"])
    assert "is unreachable from" in errors and "rule R1" in errors
    assert "destination LIDs are unreachable under rules R1-R4" in errors
