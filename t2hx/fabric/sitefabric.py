"""A site's ``ibnetdiscover`` dump as the fabric of one plane.

A production dump holds more than switches and one HCA per host, and each of these is
recognised, then kept or left out by a rule, and counted in a :class:`DumpReport` (printed by
``t2hx fabric build``, stored in the fabric's topology) so nothing disappears silently:

* SHARP aggregation nodes: a CA inside every SHARP-capable switch ("Mellanox Technologies
  Aggregation Node"), and other CAs embedded in a switch (same ``sysimgguid`` as a switch):
  not hosts, left out. Routers (``Rt`` records) and gateways likewise.
* Hosts with several HCAs (a DGX has 8, one per rail): a host is the first word of the
  NodeDescription (``"dgx01 mlx5_3"``), its HCAs are the CAs sharing that word. By default
  (``hosts: plane_hca``) the plane keeps, per host, the CA whose device word (the second
  word) is the plane's HCA (``hca:``, or the words listed in ``devices:``, e.g. MLNX_OFED's
  ``HCA-1``); hosts without one are left out. ``hosts: all_ports`` keeps every CA of a
  host, as ports 1..k of one multi-port host (the rails the flow model's multirail uses).
* CAs whose NodeDescription was never set (the firmware default ``"MT4129 ConnectX7
  Mellanox Technologies"``, or empty) carry no host name: left out, or kept as hosts named
  by their node id (``H-<guid>``) with ``unnamed: keep``.
* Any cabled port counts: a host's cabled ports become its ports 1..k, so an HCA cabled on
  port 2 only is reached through port 1 of its host, like every other host.
* Loop-back cables (a switch port cabled to another port of the same switch, or to itself)
  carry no traffic between switches: counted apart, left out of the graph.
* ``skip:`` (regular expressions over the NodeDescription, or exact node ids) leaves out
  whatever else a site has, e.g. storage routers.

Errors name the dump and its line, with a fix in the conf (``planes.<p>.topology.<field>``),
never "edit the dump".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from t2hx.errors import ConfError
from t2hx.fabric.graph import HCA_GUID_BASE, HCA_GUID_STRIDE, Cable, Fabric
from t2hx.fabric.ibnetdiscover import Dump, DumpLink, DumpNode, parse_cached

HOST_MODES = ("plane_hca", "all_ports")
UNNAMED_MODES = ("skip", "keep")
AGGREGATION = re.compile(r"\bAggregation Node\b", re.IGNORECASE)
#: Vendor gateway CAs (InfiniBand to Ethernet); a site's own kinds go in ``skip:``.
GATEWAY = re.compile(r"\b(Gateway|Skyway|BridgeX)\b")
#: The firmware's default NodeDescription: no host name in it (rdma-ndd never ran).
UNNAMED = re.compile(r"^$|^MT\d+\b|\bMellanox Technologies$")


@dataclass(frozen=True)
class DumpOptions:
    """How a plane reads its dump: the ``ibnetdiscover`` topology fields of the conf."""

    hosts: str = "plane_hca"
    devices: tuple[str, ...] = ()     # the plane's HCA as NodeDescriptions name it; () = any
    unnamed: str = "skip"
    skip: tuple[str, ...] = ()
    plane: str = ""                   # the conf plane reading the dump, for the fixes
    conf: str = ""                    # the conf file, for the fixes

    @property
    def where(self) -> str:
        return f"planes.{self.plane}.topology" if self.plane else "topology"

    def fix(self, key: str, value: str) -> str:
        conf = f" in {self.conf}" if self.conf else ""
        return f"set {self.where}.{key}: {value}{conf}"


def options_for(topology: dict, hca: str, plane: str, conf: Path | str) -> DumpOptions:
    """The options of a conf plane whose topology is ``kind: ibnetdiscover``."""
    return DumpOptions(hosts=topology.get("hosts", "plane_hca"),
                       devices=tuple(topology.get("devices") or [hca]),
                       unnamed=topology.get("unnamed", "skip"),
                       skip=tuple(topology.get("skip", [])), plane=plane, conf=str(conf))


@dataclass
class DumpReport:
    """What the dump held and what the plane kept; every left-out node or cable is here."""

    switches: int = 0
    cas: int = 0                     # CA records in the dump
    hosts: int = 0                   # host nodes of the plane
    host_ports: int = 0              # their cabled ports
    aggregation_nodes: int = 0       # SHARP aggregation nodes, left out
    switch_embedded: int = 0         # other CAs inside a switch (its sysimgguid), left out
    routers: int = 0                 # Rt records, left out
    gateways: int = 0                # left out
    skipped_by_rule: int = 0         # CAs matching topology.skip, left out
    unnamed_cas: int = 0             # CAs without a host name in their NodeDescription
    unnamed_kept: int = 0            # ... of which kept as hosts (unnamed: keep)
    hosts_in_dump: int = 0           # host names in the dump
    multi_hca_hosts: int = 0         # ... with more than one CA
    hosts_without_hca: int = 0       # ... none of whose CAs is the plane's HCA, left out
    other_hcas: int = 0              # CAs of kept hosts that are not the plane's, left out
    hcas_off_port1: int = 0          # kept CAs with port 1 uncabled (e.g. on port 2 only)
    isolated_hosts: int = 0          # hosts cabled only to left-out nodes, left out
    inter_switch_cables: int = 0
    loopback_cables: int = 0         # a switch port cabled to the same switch, left out
    dropped_cables: int = 0          # cables to left-out nodes
    guids_reassigned: int = 0        # HCAs whose port GUIDs would collide in ibsim
    devices: dict[str, int] = field(default_factory=dict)   # device words of named CAs

    def summary(self) -> str:
        left = [f"{n} {what}" for n, what in (
            (self.aggregation_nodes, "SHARP aggregation nodes"),
            (self.switch_embedded, "switch-embedded CAs"), (self.routers, "routers"),
            (self.gateways, "gateways"), (self.skipped_by_rule, "CAs matching skip"),
            (self.unnamed_cas - self.unnamed_kept, "unnamed CAs"),
            (self.hosts_without_hca, "hosts without the plane's HCA"),
            (self.other_hcas, "other HCAs of kept hosts"),
            (self.isolated_hosts, "hosts cabled only to left-out nodes"),
            (self.loopback_cables, "loop-back cables")) if n]
        return (f"dump: {self.switches} switches, {self.cas} CAs; kept {self.hosts} hosts "
                f"({self.host_ports} ports; {self.hcas_off_port1} HCAs cabled off port 1), "
                f"{self.inter_switch_cables} inter-switch cables; left out: "
                + (", ".join(left) or "nothing"))


def report_of(fabric: Fabric) -> DumpReport | None:
    """The dump report of a fabric read from a dump (None for a generated one)."""
    data = fabric.topology.get("dump")
    return DumpReport(**data) if isinstance(data, dict) else None


@dataclass
class _Host:
    name: str
    cas: list[DumpNode]


def read_dump(path: str | Path, name: str, options: DumpOptions = DumpOptions(),
              hosts: list[str] | None = None, gbps: float = 32.0) -> Fabric:
    """The fabric of a dump; ``hosts`` (the conf's host names) must all be among its hosts."""
    dump = parse_cached(path)
    fabric = build(dump, name, options, gbps)
    if hosts is not None:
        have = set(fabric.hosts())
        missing = [h for h in hosts if h not in have]
        if missing:
            sample = ", ".join(sorted(have)[:3])
            raise ConfError(f"host '{missing[0]}' of the conf is not a host of this dump "
                            f"({len(missing)} of {len(hosts)} missing; the dump has e.g. "
                            f"{sample})", file=dump.path,
                            fix=f"take the dump's host names with nodes.from_dump: "
                            f"{options.plane or '<plane>'}, or correct nodes.hostname" +
                            (f" in {options.conf}" if options.conf else ""))
    return fabric


def host_names(path: str | Path, options: DumpOptions) -> list[tuple[str, int]]:
    """(name, line of its first CA record) of the hosts a plane keeps, in natural name
    order: exactly the hosts of the plane's fabric, so a conf can take its names from it."""
    fabric = build(parse_cached(path), "names", options)
    return [(fabric.nodes[i].name, fabric.nodes[i].attrs["dump"][0][3]) for i in fabric.hcas()]


def build(dump: Dump, name: str, options: DumpOptions, gbps: float = 32.0) -> Fabric:
    report = DumpReport()
    ends = _ends(dump)
    chosen = _select(dump, options, report)
    kept = {n.id for n in dump.nodes if n.kind == "switch"} | \
        {ca.id for h in chosen for ca in h.cas}
    fabric = Fabric(name, {"kind": "ibnetdiscover", "file": str(dump.path)})
    where: dict[tuple[str, int], tuple[int, int]] = {}     # dump (id, port) -> (node, port)
    for node in dump.nodes:
        if node.kind == "switch":
            i = fabric.add_node(node.id, "switch", node.ports, desc=node.desc)
            if node.guid is not None:
                fabric.nodes[i].guid = node.guid
            where.update({(node.id, p): (i, p) for p in range(1, node.ports + 1)})
    switch_ids = {n.id for n in dump.nodes if n.kind == "switch"}
    for host in chosen:
        if host.name in switch_ids:
            raise _line_error(dump, host.cas[0].line, f"host '{host.name}' has the name of "
                              "a switch", options.fix("skip", f"['{host.cas[0].id}']"))
        # Any cabled port counts: the host's ports are its cabled ones, renumbered 1..k,
        # so the rest of t2hx (which reaches a host through port 1) finds every host.
        cabled = [(ca, p) for ca in host.cas for p in _ports(ca, ends, kept)]
        if not cabled:
            report.isolated_hosts += 1
            continue
        report.hcas_off_port1 += sum(1 for ca in host.cas if (ca.id, 1) not in ends)
        i = fabric.add_node(host.name, "hca", len(cabled),
                            dump=[(ca.id, ca.desc, p, ca.line) for ca, p in cabled])
        fabric.nodes[i].guid = host.cas[0].guid or fabric.nodes[i].guid
        for k, (ca, p) in enumerate(cabled, 1):
            where[(ca.id, p)] = (i, k)
    report.hosts = len(fabric.hcas())
    report.host_ports = sum(fabric.nodes[i].ports for i in fabric.hcas())
    _cables(fabric, dump, ends, where, switch_ids, report, gbps)
    report.guids_reassigned = _unique_guids(fabric)
    fabric.topology["dump"] = asdict(report)
    return fabric


# -- which CAs are hosts, and which of a host's CAs the plane keeps -----------------------

def _select(dump: Dump, options: DumpOptions, report: DumpReport) -> list[_Host]:
    rules = _rules(options)
    switch_sys = {n.sysimgguid for n in dump.nodes if n.kind == "switch" and n.sysimgguid}
    groups: dict[str, list[DumpNode]] = {}
    unnamed: list[DumpNode] = []
    devices: Counter[str] = Counter()
    for node in dump.nodes:
        if node.kind == "switch":
            report.switches += 1
            continue
        if node.kind == "router":
            report.routers += 1
            continue
        report.cas += 1
        if AGGREGATION.search(node.desc):
            report.aggregation_nodes += 1
        elif node.sysimgguid is not None and node.sysimgguid in switch_sys:
            report.switch_embedded += 1
        elif any(r.search(node.desc) or r.fullmatch(node.id) for r in rules):
            report.skipped_by_rule += 1
        elif GATEWAY.search(node.desc):
            report.gateways += 1
        elif UNNAMED.search(node.desc) or node.desc == node.id:
            report.unnamed_cas += 1
            unnamed.append(node)
        else:
            groups.setdefault(node.desc.split()[0], []).append(node)
            devices[_device(node)] += 1
    report.devices = dict(devices.most_common())
    report.hosts_in_dump = len(groups)
    report.multi_hca_hosts = sum(len(cas) > 1 for cas in groups.values())
    chosen: list[_Host] = []
    for host, cas in groups.items():
        keep = _keep(host, cas, options, dump, report)
        if keep:
            chosen.append(_Host(host, keep))
    if options.unnamed == "keep":
        for node in unnamed:
            if node.id in groups:
                raise _line_error(dump, node.line, f"unnamed CA '{node.id}' has the name of a "
                                  "host", options.fix("unnamed", "skip"))
            chosen.append(_Host(node.id, [node]))
            report.unnamed_kept += 1
    if not chosen:
        raise _no_hosts(dump, options, report)
    chosen.sort(key=lambda h: natural_key(h.name))
    return chosen


def _keep(host: str, cas: list[DumpNode], options: DumpOptions, dump: Dump,
          report: DumpReport) -> list[DumpNode]:
    """The CAs of ``host`` the plane keeps (empty: the host is not on this plane)."""
    if options.hosts == "all_ports":
        return sorted(cas, key=lambda ca: natural_key(_device(ca)))
    if not options.devices or all(not _device(ca) for ca in cas):
        # No device word to go by: a single CA is the host's HCA on this plane.
        if len(cas) > 1:
            raise _line_error(dump, cas[1].line, f"host '{host}' has {len(cas)} CAs and no "
                              "device word tells which is the plane's",
                              options.fix("hosts", "all_ports"))
        return cas
    for device in options.devices:
        hits = [ca for ca in cas if _device(ca) == device]
        if len(hits) > 1:
            raise _line_error(dump, hits[1].line, f"host '{host}' has two CAs named "
                              f"'{device}' (the other on line {hits[0].line})",
                              options.fix("skip", f"['{hits[1].id}']"))
        if hits:
            report.other_hcas += len(cas) - 1
            return hits
    report.hosts_without_hca += 1
    return []


def _device(ca: DumpNode) -> str:
    words = ca.desc.split()
    return words[1] if len(words) > 1 else ""


def _rules(options: DumpOptions) -> list[re.Pattern]:
    rules = []
    for text in options.skip:
        try:
            rules.append(re.compile(text))
        except re.error as err:
            raise ConfError(f"skip rule {text!r} is not a regular expression ({err})",
                            file=options.conf or None, field=f"{options.where}.skip",
                            fix="write a Python regular expression, e.g. '^storage' "
                            "or a node id such as 'H-0002c903000e0b72'") from None
    return rules


def _no_hosts(dump: Dump, options: DumpOptions, report: DumpReport) -> ConfError:
    if report.devices and options.hosts == "plane_hca":
        seen = ", ".join(f"{d or '(none)'} ×{n}" for d, n in list(report.devices.items())[:6])
        return ConfError(f"no host has a CA named {' or '.join(options.devices)} (the dump's "
                         f"device words: {seen})", file=dump.path,
                         fix=options.fix("devices", f"[{next(iter(report.devices))}]"))
    if report.unnamed_cas:
        return ConfError(f"no CA names its host ({report.unnamed_cas} CAs have the "
                         "firmware's default NodeDescription)", file=dump.path,
                         fix=options.fix("unnamed", "keep") + " (hosts are then named "
                         "by node id, H-<guid>)")
    return ConfError("the dump has no hosts", file=dump.path,
                     fix="dump a plane with compute nodes on it (ibnetdiscover > file)")


def natural_key(name: str) -> list:
    """Sort key putting n2 before n10 (host names as a person reads them)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name)]


# -- cables ---------------------------------------------------------------------------------

def _ends(dump: Dump) -> dict[tuple[str, int], DumpLink]:
    """Each cabled (node, port) and its link; both ends of a cable must agree."""
    nodes = {n.id: n for n in dump.nodes}
    ends: dict[tuple[str, int], DumpLink] = {}
    for link in dump.links:
        peer = nodes.get(link.peer)
        if peer is None:
            raise _line_error(dump, link.line, f"port {link.port} of '{link.node}' leads to "
                              f"'{link.peer}', which has no record in the dump",
                              "use a complete, unedited ibnetdiscover output")
        if link.peer_port > peer.ports:
            raise _line_error(dump, link.line, f"port {link.port} of '{link.node}' leads to "
                              f"port {link.peer_port} of '{link.peer}', which has "
                              f"{peer.ports} ports", "use a complete, unedited ibnetdiscover "
                              "output")
        ends[(link.node, link.port)] = link
    for link in dump.links:
        back = ends.get((link.peer, link.peer_port))
        if back is not None and (back.peer, back.peer_port) != (link.node, link.port):
            raise _line_error(dump, back.line, f"port {back.port} of '{back.node}' leads to "
                              f"'{back.peer}'[{back.peer_port}], but line {link.line} cables "
                              f"it to '{link.node}'[{link.port}]", "take a fresh dump (the "
                              "fabric changed while ibnetdiscover ran)")
    return ends


def _ports(ca: DumpNode, ends: dict[tuple[str, int], DumpLink], kept: set[str]) -> list[int]:
    """Ports of ``ca`` cabled to a node the plane keeps."""
    return [p for p in range(1, ca.ports + 1)
            if (ca.id, p) in ends and ends[(ca.id, p)].peer in kept]


def _cables(fabric: Fabric, dump: Dump, ends: dict[tuple[str, int], DumpLink],
            where: dict[tuple[str, int], tuple[int, int]], switch_ids: set[str],
            report: DumpReport, gbps: float) -> None:
    done: set[tuple[str, int]] = set()
    for (node, port), link in ends.items():
        if (node, port) in done:
            continue
        peer = (link.peer, link.peer_port)
        done.update({(node, port), peer})
        if link.peer == node:
            # Loop-back plug or cable: the switch talks to itself, no path uses it.
            report.loopback_cables += 1
            continue
        a, b = where.get((node, port)), where.get(peer)
        if a is None or b is None:
            report.dropped_cables += 1
            continue
        fabric.cables.append(Cable(a[0], a[1], b[0], b[1], gbps))
        report.inter_switch_cables += node in switch_ids and link.peer in switch_ids
    fabric.remove_cables([])    # rebuild the used-port index


def _unique_guids(fabric: Fabric) -> int:
    """ibsim gives HCA port p the GUID node GUID + p (switch ports: the node GUID), and
    OpenSM needs every port GUID once; real GUIDs of a dump may collide that way (dual-HCA
    hosts often have consecutive GUIDs). A colliding HCA gets a fresh GUID of t2hx's range."""
    nodes_seen: set[int] = set()
    ports_seen: set[int] = set()
    moved = 0
    fresh = HCA_GUID_BASE
    for node in sorted(fabric.nodes, key=lambda n: n.kind != "switch"):
        ports = [node.port_guid(p) for p in range(1, node.ports + 1)] \
            if node.kind == "hca" else [node.guid]
        if node.guid in nodes_seen or any(g in ports_seen for g in ports):
            while True:
                fresh += HCA_GUID_STRIDE
                ports = [fresh + p for p in range(1, node.ports + 1)]
                if fresh not in nodes_seen and not any(g in ports_seen for g in ports):
                    break
            node.guid = fresh
            moved += 1
        nodes_seen.add(node.guid)
        ports_seen.update(ports)
    return moved


def _line_error(dump: Dump, line: int, message: str, fix: str) -> ConfError:
    return ConfError(message, file=dump.path, field=f"line {line}", fix=fix)
