"""Real sites' ibnetdiscover dumps (tests/data/ibnetdiscover/README.md) load as planes of a
system conf, take their host names from the dump, and route with the real OpenSM under
ibsim (minhop and dfsssp); broken dumps and confs fail with one line naming the dump's line
or the conf field that fixes them.

Counts are asserted twice: as exact numbers, and against an independent reading of the
dump (plain regular expressions here, not t2hx's parser).
"""

from __future__ import annotations

import lzma
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

import numpy as np
import pytest
import yaml

from t2hx.conf import load_system
from t2hx.errors import ConfError
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.fabric.sitefabric import DumpOptions, DumpReport, read_dump, report_of
from t2hx.routing.lft import Tables, load_tables
from t2hx.routing.opensm import route

DATA = Path(__file__).parent / "data" / "ibnetdiscover"
CLI = Path(sys.executable).parent / "t2hx"


@dataclass(frozen=True)
class Site:
    dump: str
    hca: str
    topology: dict          # the ibnetdiscover fields beyond kind and file
    expect: dict            # DumpReport fields, exactly
    racks: int = 1

    @property
    def id(self) -> str:
        return self.dump.split(".")[0]


SITES = [
    Site("dgx-a100-superpod-2022.txt.xz", "mlx5_0", {"skip": ["-mgmt", "-ufm"]},
         dict(switches=206, cas=1336, aggregation_nodes=206, skipped_by_rule=10,
              hosts_in_dump=140, multi_hca_hosts=140, hosts=140, other_hcas=980,
              hosts_without_hca=0, loopback_cables=0, inter_switch_cables=2236), racks=4),
    Site("lassen-2019.txt.xz", "mlx5_0", {"devices": ["HCA-1"]},
         dict(switches=174, cas=1644, aggregation_nodes=174, hosts_in_dump=721,
              multi_hca_hosts=719, hosts=716, hosts_without_hca=5, other_hcas=744,
              loopback_cables=0, inter_switch_cables=1799), racks=4),
    Site("hdr-cs8500-gpu-2021.txt.xz", "mlx5_0", {"devices": ["HCA-1"]},
         dict(switches=192, cas=1182, aggregation_nodes=192, unnamed_cas=4,
              hosts_in_dump=264, hosts=258, hosts_without_hca=6, other_hcas=707,
              loopback_cables=0, inter_switch_cables=2962, guids_reassigned=0), racks=2),
    Site("dgx-h100-superpod-2025.txt.xz", "mlx5_0", {"devices": ["HCA-1", "mlx5_0"]},
         dict(switches=40, cas=582, aggregation_nodes=40, unnamed_cas=69, unnamed_kept=0,
              hosts_in_dump=122, multi_hca_hosts=122, hosts=122, other_hcas=351,
              inter_switch_cables=532), racks=2),
    Site("quantum-bringup-2019.txt", "mlx5_0", {"hosts": "all_ports"},
         dict(switches=60, cas=2, hosts=2, loopback_cables=19, inter_switch_cables=786)),
    Site("psmn-x5-2020.txt", "mlx4_0", {"unnamed": "keep"},
         dict(switches=11, cas=89, unnamed_cas=89, unnamed_kept=89, hosts=89,
              inter_switch_cables=70)),
    Site("ibm-pcm-port2-2009.txt", "mlx4_0", {"devices": ["HCA-1"]},
         dict(switches=1, cas=2, hosts=2, hcas_off_port1=1, inter_switch_cables=0)),
]


def dump_text(site: Site) -> str:
    path = DATA / site.dump
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        return f.read()


def write_conf(where: Path, site: Site, hosts: int | None = None, **nodes: object) -> Path:
    """A system conf of one plane read from the site's dump (unpacked beside the conf),
    its host names taken from the dump."""
    dump = where / site.dump.removesuffix(".xz")
    if not dump.exists():
        dump.write_text(dump_text(site), encoding="utf-8", newline="")
    count = site.expect["hosts"] if hosts is None else hosts
    conf = {"name": site.id.replace("-", ""),
            "nodes": {"from_dump": "fabric", "racks": site.racks,
                      "per_rack": count // site.racks, **nodes},
            "planes": {"fabric": {"hca": site.hca, "gbps": 100,
                                  "topology": {"kind": "ibnetdiscover", "file": dump.name,
                                               **site.topology},
                                  "opensm": {"routing": ["minhop", "dfsssp"]}}}}
    path = where / f"{site.id}.yaml"
    path.write_text(yaml.safe_dump(conf, sort_keys=False))
    return path


def independent_counts(text: str, site: Site) -> dict:
    """What the dump shows to a reader with grep: switches, CAs, aggregation nodes, loop-back
    cables (unordered port pairs of one switch), and the hosts carrying the plane's HCA."""
    switches = re.findall(r'^Switch\s+\d+\s+"([^"]+)"', text, re.M)
    cas = re.findall(r'^Ca\s+\d+\s+"[^"]+"\s+#\s+"([^"]*)"', text, re.M)
    loops: set[frozenset] = set()
    current = None
    for line in text.splitlines():
        if m := re.match(r'^Switch\s+\d+\s+"([^"]+)"', line):
            current = m.group(1)
        elif re.match(r"^(Ca|Hca|Rt)\s", line):
            current = None
        elif current and (m := re.match(r'^\[(\d+)\]\S*\s+"([^"]+)"\[(\d+)\]', line)):
            if m.group(2) == current:
                loops.add(frozenset({int(m.group(1)), int(m.group(3))}) | {current})
    devices = site.topology.get("devices", [site.hca])
    named = [d.split() for d in cas if len(d.split()) == 2 and not
             re.search(r"Aggregation Node|Mellanox Technologies$", d)]
    return {"switches": len(switches), "cas": len(cas),
            "aggregation_nodes": sum("Aggregation Node" in d for d in cas),
            "loopback_cables": len(loops),
            "with_plane_hca": len({h for h, dev in named if dev in devices})}


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, tuple]:
    """site id -> (system, fabric), built once per module."""
    out = {}
    for site in SITES:
        conf = write_conf(tmp_path_factory.mktemp(site.id), site)
        system = load_system(conf)
        out[site.id] = (system, build_plane(system, "fabric"))
    return out


@pytest.mark.parametrize("site", SITES, ids=lambda s: s.id)
def test_dump_builds_with_its_counts(sites, site: Site) -> None:
    system, fabric = sites[site.id]
    report = report_of(fabric)
    assert isinstance(report, DumpReport)
    got = {k: getattr(report, k) for k in site.expect}
    assert got == site.expect, report.summary()
    seen = independent_counts(dump_text(site), site)
    assert (report.switches, report.cas, report.aggregation_nodes, report.loopback_cables) == \
        (seen["switches"], seen["cas"], seen["aggregation_nodes"], seen["loopback_cables"])
    if site.topology.get("hosts", "plane_hca") == "plane_hca" and \
            not {"skip", "unnamed"} & set(site.topology):
        assert report.hosts == seen["with_plane_hca"]
    # The fabric: every switch of the dump, the kept hosts, no cable from a switch to itself.
    assert len(fabric.switches()) == report.switches and len(fabric.hcas()) == report.hosts
    assert not [c for c in fabric.cables if c.a == c.b]
    assert len(fabric.inter_switch_cables()) == report.inter_switch_cables
    fabric.validate()
    # The conf's hosts are the dump's own names, in natural order, racks of consecutive ones.
    assert system.hostnames() == fabric.hosts()[:len(system.hostnames())]
    assert len(system.hostnames()) == site.racks * (report.hosts // site.racks)


@pytest.mark.parametrize("engine", ["minhop", "dfsssp"])
@pytest.mark.parametrize("site", SITES, ids=lambda s: s.id)
def test_dump_routes_with_opensm(sites, site: Site, engine: str, tmp_path) -> None:
    _, fabric = sites[site.id]
    start = time.monotonic()
    run = route(fabric, tmp_path / engine, engine, timeout=300)
    # -s shows the times; the 12x8 HyperX with 672 HCAs routes in ~5 s, so should these.
    print(f"\n{site.id} {engine}: OpenSM under ibsim {time.monotonic() - start:.2f} s")
    assert run.summary["seconds"] < 60
    assert (run.summary["engine_used"], run.summary["fallback"]) == (engine, False), \
        run.summary["errors"]
    assert (run.summary["hca_count"], run.summary["switch_count"]) == \
        (len(fabric.hcas()), len(fabric.switches()))
    tables = load_tables(fabric, tmp_path / engine)
    assert (tables.hca_lids() > 0).all()          # every host has a LID on its port 1
    _walk_some_paths(fabric, tables)


def _walk_some_paths(fabric: Fabric, tables: Tables, pairs: int = 4000) -> None:
    """Paths between host pairs end at the destination (paths() raises on black holes and
    loops); all pairs on small fabrics, a fixed sample on large ones."""
    hosts = np.array(fabric.hcas())
    lids = tables.hca_lids()
    if len(hosts) ** 2 <= pairs:
        src, dst = np.repeat(hosts, len(hosts)), np.tile(lids, len(hosts))
    else:
        rng = np.random.default_rng(2024)
        i, j = rng.integers(0, len(hosts), pairs), rng.integers(0, len(hosts), pairs)
        src, dst = hosts[i], lids[j]
    p = tables.paths(src, dst)
    last = p[np.arange(len(p)), (p >= 0).sum(axis=1) - 1]
    assert (tables.link_dst[last] == tables.lid_node[dst]).all()


def test_multi_hca_hosts_as_ports(tmp_path) -> None:
    """hosts: all_ports keeps every HCA of a DGX as a port of one host; unnamed: keep adds
    the CAs without a host name; each port gets its own LID and routes."""
    site = next(s for s in SITES if s.id == "dgx-h100-superpod-2025")
    site = Site(site.dump, site.hca, {"hosts": "all_ports", "unnamed": "keep"},
                dict(hosts=191, host_ports=542, unnamed_kept=69, other_hcas=0), racks=1)
    system = load_system(write_conf(tmp_path, site))
    fabric = build_plane(system, "fabric")
    report = report_of(fabric)
    assert {k: getattr(report, k) for k in site.expect} == site.expect
    dgx = fabric.nodes[fabric.index("b05-p1-dgx-05-c01")]
    assert dgx.ports == 4
    assert [d[1].split()[1] for d in dgx.attrs["dump"]] == ["HCA-1", "HCA-2", "HCA-5", "HCA-6"]
    other = fabric.nodes[fabric.index("a08-p1-dgx-04-c01")]
    assert [d[1].split()[1] for d in other.attrs["dump"]] == \
        ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"]
    assert sum(h.startswith("H-") for h in fabric.hosts()) == 69
    run = route(fabric, tmp_path / "minhop", "minhop", timeout=300)
    assert run.summary["engine_used"] == "minhop"
    tables = load_tables(fabric, tmp_path / "minhop")
    i, j = fabric.index("b05-p1-dgx-05-c01"), fabric.index("a08-p1-dgx-04-c01")
    assert all(tables.base_lid[n, p] > 0 for n in (i, j) for p in range(1, 5))
    path = tables.paths(np.array([i]), np.array([tables.base_lid[j, 3]]), port=2)[0]
    assert tables.link_dst[path[path >= 0][-1]] == j


def test_port2_hca_is_reached_through_port1(sites) -> None:
    """compute-00-00's HCA is cabled on its port 2 only: the host's port 1 is that port."""
    _, fabric = sites["ibm-pcm-port2-2009"]
    node = fabric.nodes[fabric.index("compute-00-00")]
    assert node.ports == 1 and node.attrs["dump"][0][2] == 2
    switch = fabric.switches()[0]
    assert any({c.a, c.b} == {switch, fabric.index("compute-00-00")} and c.pb == 1
               for c in fabric.cables)


def test_loopbacks_counted_apart(sites) -> None:
    """quantum-bringup: 19 switches have port 19 cabled to port 20 of themselves."""
    _, fabric = sites["quantum-bringup-2019"]
    report = report_of(fabric)
    assert report.loopback_cables == 19
    used = {(c.a, c.pa) for c in fabric.cables} | {(c.b, c.pb) for c in fabric.cables}
    looped = [fabric.index(s) for s in ("S-98039b030096aa24", "S-98039b0300866890")]
    assert not {(s, p) for s in looped for p in (19, 20)} & used


# -- errors: one line naming the dump and its line, or the conf field to change ----------

def _site(name: str) -> Site:
    return next(s for s in SITES if s.id == name)


def _broken(tmp_path: Path, site: Site, edit: Callable[[list[str]], list[str]],
            **conf: object) -> tuple[Path, Path]:
    conf_path = write_conf(tmp_path, site, **conf)
    dump = tmp_path / site.dump.removesuffix(".xz")
    lines = dump.read_text(encoding="utf-8").splitlines(keepends=True)
    dump.write_text("".join(edit(lines)), encoding="utf-8", newline="")
    return conf_path, dump


def _error(conf: Path) -> str:
    with pytest.raises(ConfError) as err:
        build_plane(load_system(conf), "fabric")
    line = err.value.line()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    return line


def test_corrupt_port_line_names_dump_and_line(tmp_path) -> None:
    site = _site("ibm-pcm-port2-2009")
    conf, dump = _broken(tmp_path, site, lambda ls: ls[:11] + [ls[11].replace("[2]", "[9]", 1)]
                         + ls[12:])
    line = _error(conf)
    assert line.startswith(f"{dump}: line 12: port 9 of 'S-000b8cffff0053ee'")
    assert "fix: use a complete, unedited output of ibnetdiscover" in line


def test_truncated_dump_names_the_missing_record(tmp_path) -> None:
    site = _site("ibm-pcm-port2-2009")
    conf, dump = _broken(tmp_path, site, lambda ls: ls[:20])   # the last CA record is cut
    line = _error(conf)
    assert line.startswith(f"{dump}: line 12: port 2 of 'S-000b8cffff0053ee' leads to "
                           "'H-0002c9030002847c', which has no record")


def test_two_cas_of_one_host_with_one_device_name(tmp_path) -> None:
    site = _site("ibm-pcm-port2-2009")
    conf, dump = _broken(tmp_path, site, lambda ls: [
        x.replace("compute-00-01 HCA-1", "compute-00-00 HCA-1") for x in ls])
    line = _error(conf)
    assert f"{dump}: line 25: host 'compute-00-00' has two CAs named 'HCA-1' (the other " \
        "on line 18)" in line
    assert f"fix: set planes.fabric.topology.skip: ['H-0002c9030002847c'] in {conf}" in line


def test_plane_hca_not_in_dump_suggests_devices(tmp_path) -> None:
    site = _site("lassen-2019")
    conf = write_conf(tmp_path, Site(site.dump, "mlx5_0", {}, site.expect))
    line = _error(conf)
    assert line.startswith(f"{tmp_path / 'lassen-2019.txt'}: no host has a CA named mlx5_0 "
                           "(the dump's device words: HCA-1 ×716, HCA-2 ×712")
    assert f"fix: set planes.fabric.topology.devices: [HCA-1] in {conf}" in line


def test_unnamed_cas_suggest_keep(tmp_path) -> None:
    site = _site("psmn-x5-2020")
    conf = write_conf(tmp_path, Site(site.dump, site.hca, {}, site.expect))
    line = _error(conf)
    assert "no CA names its host (89 CAs have the firmware's default NodeDescription)" in line
    assert f"fix: set planes.fabric.topology.unnamed: keep in {conf}" in line


def test_conf_errors_name_the_conf_field(tmp_path) -> None:
    site = _site("ibm-pcm-port2-2009")
    conf = write_conf(tmp_path, site, hosts=3)
    with pytest.raises(ConfError, match=r"nodes\.per_rack: plane 'fabric' keeps 2 hosts of "
                       r"its dump but racks × per_rack is 3 \(fix: set racks × per_rack to "
                       r"at most 2"):
        load_system(conf)
    data = yaml.safe_load(conf.read_text())
    data["nodes"] = {"hostname": "compute-00-{index:02d}", "racks": 1, "per_rack": 3}
    conf.write_text(yaml.safe_dump(data))
    line = _error(conf)
    assert "host 'compute-00-02' of the conf is not a host of this dump" in line
    assert "fix: take the dump's host names with nodes.from_dump: fabric" in line
    data["nodes"] = {"from_dump": "nope", "racks": 1, "per_rack": 2}
    conf.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match=r"nodes\.from_dump: plane 'nope' has no "
                       r"ibnetdiscover dump"):
        load_system(conf)
    data["nodes"]["from_dump"] = "fabric"
    data["planes"]["fabric"]["topology"]["skip"] = ["(unclosed"]
    conf.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfError, match=r"planes\.fabric\.topology\.skip\[0\]: '\(unclosed' "
                       r"is not a regular expression"):
        load_system(conf)


def test_cli_build_reports_the_dump_and_fails_in_one_line(tmp_path) -> None:
    site = _site("ibm-pcm-port2-2009")
    conf = write_conf(tmp_path, site)
    ok = subprocess.run([str(CLI), "fabric", "build", "--system", str(conf), "--plane",
                         "fabric", "--out", str(tmp_path / "out")], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    assert "dump: 1 switches, 2 CAs; kept 2 hosts (2 ports; 1 HCAs cabled off port 1)" \
        in ok.stdout
    dump = tmp_path / "ibm-pcm-port2-2009.txt"
    dump.write_text(dump.read_text().replace('"H-0002c902002789ac"[1]', '"H-0002c902002789ac"[',
                                             1))
    bad = subprocess.run([str(CLI), "fabric", "build", "--system", str(conf), "--plane",
                          "fabric", "--out", str(tmp_path / "out")], capture_output=True,
                         text=True)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and f"{dump}: line 11: unreadable port line" in \
        bad.stderr


def test_non_host_cas_recognised(tmp_path) -> None:
    """Rules none of the collected dumps exercises, on a hand-written dump: a CA inside a
    switch (its sysimgguid), a router, a gateway, a skip rule, a self-looped port."""
    text = """\
sysimgguid=0x0000000000000a00
switchguid=0x0000000000000a01(0000000000000a01)
Switch\t8 "S-0000000000000a01"\t\t# "leaf" base port 0 lid 1 lmc 0
[1]\t"H-0000000000000b00"[1](0000000000000b01)\t\t# "n01 mlx5_0" lid 2 4xHDR
[2]\t"H-0000000000000c00"[1](0000000000000c01)\t\t# "mgmt-ufm mlx5_0" lid 3 4xHDR
[3]\t"H-0000000000000d00"[1](0000000000000d01)\t\t# "leaf mlx5_0" lid 4 4xHDR
[4]\t"R-0000000000000e00"[1]\t\t# "rtr" lid 5 4xHDR
[5]\t"H-0000000000000f00"[1](0000000000000f01)\t\t# "gw1 Skyway" lid 6 4xHDR
[6]\t"S-0000000000000a01"[6]\t\t# "leaf" lid 1 4xHDR

sysimgguid=0x0000000000000b00
caguid=0x0000000000000b00
Ca\t1 "H-0000000000000b00"\t\t# "n01 mlx5_0"
[1](0000000000000b01)\t"S-0000000000000a01"[1]\t\t# lid 2 lmc 0 "leaf" lid 1 4xHDR

caguid=0x0000000000000c00
Ca\t1 "H-0000000000000c00"\t\t# "mgmt-ufm mlx5_0"
[1](0000000000000c01)\t"S-0000000000000a01"[2]\t\t# lid 3 lmc 0 "leaf" lid 1 4xHDR

sysimgguid=0x0000000000000a00
caguid=0x0000000000000d00
Ca\t1 "H-0000000000000d00"\t\t# "leaf mlx5_0"
[1](0000000000000d01)\t"S-0000000000000a01"[3]\t\t# lid 4 lmc 0 "leaf" lid 1 4xHDR

rtguid=0x0000000000000e00
Rt\t1 "R-0000000000000e00"\t\t# "rtr"
[1]\t"S-0000000000000a01"[4]\t\t# lid 5 lmc 0 "leaf" lid 1 4xHDR

caguid=0x0000000000000f00
Ca\t1 "H-0000000000000f00"\t\t# "gw1 Skyway"
[1](0000000000000f01)\t"S-0000000000000a01"[5]\t\t# lid 6 lmc 0 "leaf" lid 1 4xHDR
"""
    dump = tmp_path / "hand.txt"
    dump.write_text(text)
    fabric = read_dump(dump, "hand", DumpOptions(devices=("mlx5_0",), skip=("^mgmt",)))
    report = report_of(fabric)
    assert (report.switch_embedded, report.routers, report.gateways, report.skipped_by_rule,
            report.loopback_cables, report.hosts, report.dropped_cables) == (1, 1, 1, 1, 1, 1, 4)
    assert fabric.hosts() == ["n01"] and len(fabric.cables) == 1
