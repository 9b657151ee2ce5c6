"""The packet engine (t2hx/flowsim/packet.py) on the mini HyperX routed by real OpenSM
(DFSSSP under ibsim): no-contention agreement with the flow model and LogGP, a congestion
tree whose victim only blocking explains, the kernel's credit and packet bookkeeping, the
conf fields, the engine table and the CLI."""

from __future__ import annotations

import dataclasses

from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx.cli import main
from t2hx.conf import load_system
from t2hx.errors import ConfError, WorkloadError
from t2hx.flowsim import hostif, packetk
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.models import MODELS
from t2hx.flowsim.network import open_network
from t2hx.flowsim.packet import open_packet
from t2hx.flowsim import patterns
from t2hx.routing.pathsl import parse_log
from t2hx.routing.slvl import parse_sl2vl

from tests.conftest import MINI

MIB = 1 << 20
#: The comparison setting (explicit): a host interface as fast as the link, no packet
#: headers, no cable delay and no rendezvous: what the flow model assumes.
AS_FLOW = {"hca": {"interface": "link"}, "header_bytes": 0, "cable_ns": 0.0,
           "eager_bytes": 1 << 40}


@pytest.fixture(scope="module")
def hx_dir(mini_hyperx_dir):
    return mini_hyperx_dir


@pytest.fixture(scope="module")
def net(mini_hyperx):
    return mini_hyperx


def switch_of(net) -> np.ndarray:
    t = net.tables
    return t.link_dst[t.link_of[net.rank_hca, 1]]


# -- no contention ----------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 8, 4096, 65536, MIB, 8 * MIB])
def test_single_message_agrees_with_the_flow_model_and_loggp(net, size) -> None:
    ph = [Phase.of([0], [37], size)]
    flow = net.run(ph).phase_time[0]
    packet = open_packet(net, params=AS_FLOW).run(ph).phase_time[0]
    assert packet == pytest.approx(flow, rel=0.01)
    # LogGP: 2o + switches·L + bytes/rate
    _, switches = net.paths(np.array([0]), np.array([37]), size)
    lg = net.loggp
    formula = 2 * lg.overhead + switches[0] * lg.hop + size / net.capacity[0]
    assert packet == pytest.approx(formula, rel=1e-6)


@pytest.mark.parametrize("size", [4096, MIB])
def test_headers_cables_and_rendezvous_add_exactly_their_cost(net, size) -> None:
    """With the conf's headers, cable delay and eager limit (host interface still at link
    rate): LogGP plus 26 bytes per packet, the cables, and above the eager limit the
    request-to-send and its answer (header-only packets, o after each)."""
    pk = open_packet(net, params={"hca": {"interface": "link"}})
    p = pk.params
    t = pk.run([Phase.of([0], [37], size)]).phase_time[0]
    _, sw = net.paths(np.array([0]), np.array([37]), size)
    lg, rate = net.loggp, net.capacity[0]
    links, hdr = int(sw[0]) + 1, p["header_bytes"]
    wire = links * p["cable_ns"] * 1e-9 + sw[0] * lg.hop
    packets = -(-size // p["mtu"])
    expect = 2 * lg.overhead + wire + (size + packets * hdr) / rate
    if size > p["eager_bytes"]:
        expect += 2 * (wire + hdr / rate + lg.overhead)
    assert t == pytest.approx(expect, rel=1e-9)
    if size >= MIB:             # bandwidth-bound: headers and handshake are ~2 % of it
        assert t == pytest.approx(net.run([Phase.of([0], [37], size)]).phase_time[0],
                                  rel=0.02)


def disjoint_pairs(net, rng) -> tuple[list[int], list[int]]:
    """A partial permutation whose paths share no directed link."""
    used: set[int] = set()
    src, dst = [], []
    free_dst = set(range(net.ranks))
    for a in rng.permutation(net.ranks):
        for b in rng.permutation(sorted(free_dst - {int(a)})):
            p, _ = net.paths(np.array([a]), np.array([b]))
            links = {int(x) for x in p[0] if x >= 0}
            if not links & used:
                used |= links
                src.append(int(a))
                dst.append(int(b))
                free_dst.discard(int(b))
                break
    return src, dst


def test_permutation_without_shared_links_agrees_per_message(net) -> None:
    src, dst = disjoint_pairs(net, np.random.default_rng(3))
    assert len(src) >= 20
    ph = [Phase.of(src, dst, 2 * MIB)]
    flow = net.run(ph, keep_rates=True)
    packet = open_packet(net, params=AS_FLOW).run(ph, keep_rates=True)
    np.testing.assert_allclose(packet.flow_time[0], flow.flow_time[0], rtol=0.01)
    assert packet.phase_time[0] == pytest.approx(flow.phase_time[0], rel=0.01)


def test_pcie_host_interface_caps_a_message_at_its_slowest_stage(net) -> None:
    """Defaults (PCIe 2.0 x8): a lone large message streams at the smallest of the DMA read
    rate, the link's payload rate and the DMA write rate (the flow model with that cap)."""
    pk = open_packet(net)
    p, hca = pk.params, pk.params["hca"]
    host = hostif.pcie(hca["pcie_gen"], hca["lanes"], hca["max_payload"],
                       hca["max_read_request"], hca["completion_bytes"], hca["tlps_per_dllp"])
    assert host.raw_rate == pytest.approx(4e9)          # 5 GT/s x 8 lanes, 8b/10b
    link = net.capacity[0] * p["mtu"] / (p["mtu"] + p["header_bytes"])
    cap = min(host.read_rate, host.write_rate, link)
    size = 16 * MIB
    res = pk.run([Phase.of([0], [37], size)], keep_rates=True)
    assert res.rates[0][0] == pytest.approx(cap, rel=0.01)
    assert cap < net.capacity[0]


# -- congestion tree --------------------------------------------------------------------
def congestion_tree(net) -> tuple[list[int], list[int], int]:
    """Three senders on each of two switches next to the hot node's switch send to the hot
    node; a victim on the first of those switches sends to another node of the hot switch:
    it shares only the upstream link into the hot switch with three hot flows."""
    sw = switch_of(net)
    hot = 0
    on = {s: [r for r in range(net.ranks) if sw[r] == s] for s in set(sw.tolist())}
    others = np.array([r for r in range(net.ranks) if sw[r] != sw[hot]])
    _, switches = net.paths(others, np.full(len(others), hot))
    near = sorted({int(sw[r]) for r, h in zip(others, switches) if h == 2})
    b, c = near[0], near[1]
    victim, to = on[b][3], next(r for r in on[int(sw[hot])] if r != hot)
    src = on[b][:3] + on[c][:3] + [victim]
    dst = [hot] * 6 + [to]
    paths, _ = net.paths(np.array(src), np.array(dst))
    shared = set(paths[-1][paths[-1] >= 0].tolist())
    assert any(shared & set(p[p >= 0].tolist()) for p in paths[:3])      # upstream link
    assert not any(shared & set(p[p >= 0].tolist()) for p in paths[3:6])
    return src, dst, victim


def victim_rates(net, name: str) -> tuple[float, float, float]:
    """(victim's rate with the hot flows on one VL, with its own VL, max-min fair share)."""
    src, dst, victim = congestion_tree(net)
    ph = [Phase.of(src, dst, 4 * MIB)]
    fair = float(net.run(ph, keep_rates=True).rates[0][-1])
    if name == "flow":       # no VLs in the flow model: the max-min rate whatever the SL
        return fair, fair, fair
    out = []
    for sl in (0, 1):
        pk = open_packet(net, sl_of=lambda a, b, lid, sl=sl:
                         np.where((a == victim) | (b == victim), sl, 0))
        out.append(float(pk.run(ph, keep_rates=True).rates[0][-1]))
        assert pk.stats["credit_errors"] == 0
    return out[0], out[1], fair


def test_max_min_gives_the_victim_its_fair_share(net) -> None:
    shared, own, fair = victim_rates(net, "flow")
    # the link into the hot switch: 3 hot flows at 4/6 GB/s each, the victim the rest
    assert fair == pytest.approx(net.capacity[0] - 3 * net.capacity[0] / 6, rel=1e-9)
    assert shared == own == fair


@pytest.mark.parametrize("name", [
    pytest.param("flow", marks=pytest.mark.xfail(strict=True, reason="max-min has no "
                                                 "head-of-line blocking")),
    "packet"])
def test_victim_is_blocked_on_the_hot_vl_and_not_on_its_own(net, name) -> None:
    shared, own, fair = victim_rates(net, name)
    assert shared < 0.5 * fair          # stuck behind hot packets in the shared FIFO
    assert own > 0.9 * fair             # its own VL: only the link's bandwidth is shared


# -- OpenSM's virtual layers ------------------------------------------------------------
@pytest.fixture(scope="module")
def parx_net(mini, tmp_path_factory):
    """The mini HyperX routed by PARX (our plugin, LMC 2, qos) through the routing cache."""
    return open_network(mini, "hyperx", "parx", hosts=mini.hostnames(),
                        work=tmp_path_factory.mktemp("parxwork"))


def all_pair_vls(pk, size: int) -> np.ndarray:
    n = pk.ranks
    src, dst = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    keep = src != dst
    return pk._vls(src[keep], dst[keep], pk.lid_index(src[keep], dst[keep], size))


@pytest.mark.parametrize("which", ["dfsssp", "parx"])
def test_layered_routes_need_their_vls_and_deadlock_without(net, parx_net, which) -> None:
    """DFSSSP's and PARX's paths are deadlock-free only on the VL layers OpenSM assigned
    them: with those (DFSSSP: its logged table, spread over all 8 VLs by its balancing;
    PARX: the plugin's dump, SL i on VL i) random bisections complete and keep every
    credit; all on VL 0, the same traffic locks up in a credit cycle."""
    base = net if which == "dfsssp" else parx_net
    pk = open_packet(base)
    vls = np.bincount(all_pair_vls(pk, MIB))
    assert (vls > 0).sum() == (8 if which == "dfsssp" else 3)
    patterns.ebb(pk, MIB, 30, 1, 1)
    assert pk.stats["credit_errors"] == 0
    assert pk.stats["packets_created"] == pk.stats["packets_delivered"]
    flat = open_packet(base, sl_of=lambda a, b, lid: np.zeros(len(a), np.int64))
    with pytest.raises(WorkloadError, match="credit deadlock"):
        patterns.ebb(flat, MIB, 30, 1, 1)


def test_dfsssp_table_parsing() -> None:
    log = (b"x dfsssp_remove_deadlocks: Virtual Lanes available: 8\n"
           b"x vltable_print:    route from src_lid=1 to dest_lid=2 on vl=0\n"
           b"x vltable_print:    route from src_lid=2 to dest_lid=1 on vl=7\n")
    table = parse_log(log)
    assert table.split[0] == 7 and table.split[7] == 1
    draws = np.arange(14)
    assert set(table.sl(np.full(14, 1), np.full(14, 2), draws).tolist()) == set(range(7))
    assert set(table.sl(np.full(3, 2), np.full(3, 1), draws[:3]).tolist()) == {7}
    assert parse_log(b"no table") is None


# -- the kernel's bookkeeping -----------------------------------------------------------
def chain(n_links: int, cap: int, rate: float = 1e9) -> packetk.Links:
    return packetk.Links(np.full(n_links, rate), np.full(n_links, 1e-8),
                         np.full(n_links, 5e-8), np.full(n_links, 26, np.int32),
                         np.array([cap] * (n_links - 1) + [-1], np.int32),
                         np.full(n_links, -1, np.int32), np.zeros(n_links))


ARB = packetk.Arbitration(2048, 26, [(0, 4)], [(1, 4), (2, 4)], 0)


@pytest.mark.parametrize("switch", ["fifo", "output_buffer", "per_output_oldest"])
def test_kernel_conserves_packets_and_never_overdraws_credits(switch) -> None:
    """Many messages of random sizes and VLs over a 3-link chain with buffers of one
    packet: every packet is delivered, credits never go negative, and the links stay busy
    (the last delivery is within 1 % of the sum of the wire times); also with output
    buffers of two packets behind a faster crossbar, and with queues per output served
    oldest first."""
    rng = np.random.default_rng(7)
    n = 200
    size = rng.integers(0, 20000, n)
    links = chain(3, cap=-(-(2048 + 26) // 64))
    arb = ARB
    if switch != "fifo":
        links.obuf = np.array([0, 66, 66], np.int32)
        links.xrate = np.full(3, 1.5e9)
    if switch == "per_output_oldest":
        arb = dataclasses.replace(ARB, oldest_first=True, per_output=True)
    msgs = packetk.Messages(size.astype(np.int64), np.arange(n + 1, dtype=np.int64) * 3,
                            np.tile(np.arange(3, dtype=np.int32), n),
                            rng.integers(0, 3, n).astype(np.int8), np.full(n, -1, np.int32),
                            np.zeros(n))
    first, end, c = packetk.simulate(links, msgs, arb)
    packets = int(np.maximum(1, -(-size // 2048)).sum())
    assert c["credit_errors"] == 0
    assert c["packets_created"] == c["packets_delivered"] == packets
    assert c["packet_hops"] == 3 * packets
    assert (end > first).all() and (first >= 0).all()
    wire = (size.sum() + 26 * packets) / 1e9
    # one-packet buffers idle a link for a credit round trip now and then: < 1 %
    assert wire < end.max() < 1.01 * wire


def test_kernel_dependencies_and_bad_input() -> None:
    links = chain(2, cap=64)
    msgs = packetk.Messages(np.array([0, 4096], np.int64), np.array([0, 2, 4], np.int64),
                            np.array([0, 1, 0, 1], np.int32), np.zeros(2, np.int8),
                            np.array([-1, 0], np.int32), np.array([1e-6, 2e-6]))
    first, end, _ = packetk.simulate(links, msgs, ARB)
    assert first[1] == pytest.approx(end[0] + 2e-6)
    msgs.dep[0] = 1                                       # a dependency forwards: refused
    with pytest.raises(WorkloadError, match="bad input"):
        packetk.simulate(links, msgs, ARB)


# -- conf, dumps, engine table, CLI -----------------------------------------------------
@pytest.mark.parametrize("field,value,message", [
    ("vlarb_low", "0:x", "vl:weight"), ("mtu", 3000, "not allowed"),
    ("sl2vl", "0,1", "16 comma-separated"), ("hca", {"lanes": 3}, "not allowed")])
def test_packet_conf_errors_are_one_line(tmp_path: Path, field, value, message) -> None:
    data = yaml.safe_load(MINI.read_text())
    data["model"] = {"packet": {field: value}}
    path = tmp_path / "mini.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError) as exc:
        load_system(path)
    line = exc.value.line()
    assert "\n" not in line and f"model.packet.{field}" in line and message in line


def test_sl2vl_dump_is_read() -> None:
    text = ('Switch 0x0002c90020000001, base LID 10000, "hx-0-0"\n#in out : 0  1  2\n'
            + "".join(f"{i}   1   : " + " ".join(str(v % 8) for v in range(16)) + " \n"
                      for i in range(3)))
    assert parse_sl2vl(text).tolist() == [v % 8 for v in range(16)]
    assert parse_sl2vl("no tables") is None


def test_engine_table_and_cli(mini, hx_dir, tmp_path, capsys) -> None:
    assert set(MODELS) == {"flow", "packet"}
    hostfile = tmp_path / "8.txt"
    hostfile.write_text("".join(f"{h}\n" for h in mini.hostnames()[:8]))
    common = ["-q", "simulate", "--system", str(MINI), "--plane", "hyperx", "--routing",
              "dfsssp", "--routing-dir", str(hx_dir), "--hostfile", str(hostfile),
              "--work", str(tmp_path), "--benchmark", "mpigraph", "--size", "65536"]
    assert main(common + ["--model", "packet"]) == 0
    out = capsys.readouterr().out
    assert "model=packet" in out.splitlines()[0]
    assert main(common + ["--model", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--model" in err[0] and "'nosuch'" in err[0], err
