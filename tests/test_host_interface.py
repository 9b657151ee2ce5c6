"""The HCA's host interface comes from the conf (model.packet.hca): PCIe generations 1-5 or
"as fast as the link", no silent default, and a fast host that lets eBB reach the link's
payload rate on a full-bisection fat-tree (issue: the simulator times what the program times)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.flowsim import hostif, patterns
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.network import open_network
from t2hx.flowsim.packet import open_packet

from tests.conftest import MINI

MIB = 1 << 20


@pytest.mark.parametrize("gen,lanes,gbytes", [
    (1, 8, 2.0), (2, 8, 4.0), (3, 16, 8 * 16 * 128 / 130 / 8), (4, 16, 16 * 16 * 128 / 130 / 8),
    (5, 16, 32 * 16 * 128 / 130 / 8)])
def test_pcie_generations_raw_rate_per_direction(gen, lanes, gbytes) -> None:
    """GT/s x lanes x encoding (8b/10b to 2.0, 128b/130b from 3.0), per direction."""
    host = hostif.pcie(gen, lanes, 256, 512, 64, 4.0)
    assert host.raw_rate == pytest.approx(gbytes * 1e9)
    # every TLP pays its framing and header: the payload rates stay below the raw rate
    assert host.read_rate < host.write_rate < host.raw_rate


def test_describe_names_the_interface() -> None:
    assert hostif.describe({"interface": "pcie", "pcie_gen": 4, "lanes": 16}) == "PCIe 4.0 x16"
    assert hostif.describe({"interface": "link"}) == "as fast as the link"
    assert hostif.describe(None) == "not described"
    assert hostif.describe({"interface": None}) == "not described"


def _conf(tmp_path: Path, name: str, hca: dict | None, gbps: float | None = None) -> Path:
    data = yaml.safe_load(MINI.read_text())
    data["name"] = name
    data["model"] = {} if hca is None else {"packet": {"hca": hca}}
    if gbps is not None:
        data["planes"]["fattree"]["gbps"] = gbps
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("hca,field", [
    (None, "model.packet.hca"), ({"interface": "pcie", "lanes": 8}, "model.packet.hca.pcie_gen"),
    ({"interface": "pcie", "pcie_gen": 3}, "model.packet.hca.lanes")])
def test_packet_engine_without_a_host_interface_is_one_line(tmp_path, mini_hyperx_dir, hca,
                                                             field) -> None:
    system = load_system(_conf(tmp_path, "minihost", hca))
    net = open_network(system, "hyperx", "dfsssp", hosts=system.hostnames()[:4],
                       dumps=mini_hyperx_dir)
    assert net.run([Phase.of([0], [1], MIB)]).total > 0     # the flow model needs none
    with pytest.raises(ConfError) as exc:
        open_packet(net).run([Phase.of([0], [1], MIB)])
    line = exc.value.line()
    assert "\n" not in line and f": {field}: " in line and "fix:" in line
    assert str(system.path) in line


def test_pcie_gen_6_is_refused(tmp_path) -> None:
    with pytest.raises(ConfError, match="model.packet.hca.pcie_gen"):
        load_system(_conf(tmp_path, "minigen6", {"interface": "pcie", "pcie_gen": 6,
                                                 "lanes": 16}))


def test_ebb_on_a_fast_host_reaches_the_link_payload_rate(tmp_path, routed) -> None:
    """100 Gb/s links, PCIe 4.0 x16 hosts, the mini's full-bisection 2-level fat-tree: on two
    leaves (16 hosts, where ftree gives every destination of a leaf its own spine, so no
    matching shares a cable) the packet engine's eBB bandwidth is within 10 % of the link's
    payload rate and agrees with the flow model; the same fabric with TSUBAME2's PCIe 2.0 x8
    host interface is held far below it by the host."""
    fast = load_system(_conf(tmp_path, "mini100", {"interface": "pcie", "pcie_gen": 4,
                                                   "lanes": 16}, gbps=100.0))
    ft = routed(fast, "fattree", "ftree").run.out_dir
    net = open_network(fast, "fattree", "ftree", hosts=fast.hostnames()[:16], dumps=ft)
    pk = open_packet(net)
    p = pk.params
    payload = 100e9 / 8 * p["mtu"] / (p["mtu"] + p["header_bytes"])
    e = patterns.ebb(pk, MIB, rounds=4, reps=1, seed=1)
    bandwidth = MIB / (np.nanmean(e.round_times) * 1e-6)
    assert bandwidth == pytest.approx(payload, rel=0.10)
    flow = patterns.ebb(net, MIB, rounds=4, reps=1, seed=1)
    assert np.nanmean(e.round_times) == pytest.approx(np.nanmean(flow.round_times), rel=0.05)
    slow = open_packet(net, params={"hca": {"interface": "pcie", "pcie_gen": 2, "lanes": 8}})
    e2 = patterns.ebb(slow, MIB, rounds=4, reps=1, seed=1)
    assert MIB / (np.nanmean(e2.round_times) * 1e-6) < 0.35 * payload


def test_the_report_states_each_planes_host_interface_beside_its_link(mini) -> None:
    from t2hx.campaign.provenance import plane_hardware
    from t2hx.post.report import plane_blocks

    hw = plane_hardware(mini)
    assert hw["hyperx"]["host_interface"] == "PCIe 2.0 x8"
    blocks = plane_blocks({"mini": hw})
    table = blocks[-1][1]
    assert table.values.tolist() == [["mini", "fattree", "32.0 Gbit/s", "PCIe 2.0 x8"],
                                     ["mini", "hyperx", "32.0 Gbit/s", "PCIe 2.0 x8"]]
    assert plane_blocks(None) == [] and plane_blocks({"x": "garbage"}) == []


def test_a_sim_campaign_with_packet_cases_needs_the_host_interface_first(tmp_path, mini) -> None:
    """Preflight stops the campaign in one line before ReFrame starts, rather than every
    packet-engine case failing on its own."""
    from t2hx.campaign import preflight
    from t2hx.study import load_study

    study = load_study()
    assert any(study.model(b) == "packet" for b in study.benchmarks)
    preflight.check_host_interface(study, mini)
    bare = load_system(_conf(tmp_path, "minibare", None))
    with pytest.raises(ConfError) as exc:
        preflight.check_host_interface(study, bare)
    line = exc.value.line()
    assert "\n" not in line and ": model.packet.hca: the study runs " in line
