"""ibsim netfiles: write one from a Fabric, read one (or any ibnetdiscover output) back.

The format is ibnetdiscover's: a header per node (``Switch|Hca <ports> "<id>" # "<desc>"``)
followed by ``[port] "<remote id>"[remote port]`` lines. ``switchguid=``/``caguid=`` lines
before a header fix that node's GUID, so GUIDs (and through them LIDs) are ours, not
ibsim's running counter.
"""

from __future__ import annotations

import re
from pathlib import Path

from t2hx.errors import ConfError
from t2hx.fabric.graph import Cable, Fabric, Node
from t2hx.atomic import atomic_write
from t2hx.textfile import read_text


def node_description(fabric: Fabric, node: Node) -> str:
    """What the node reports as NodeDescription: ``<host> <hca device>`` for HCAs, as real
    mlx4 HCAs do, so dumps and real fabrics read alike."""
    if node.kind == "hca":
        return f"{node.name} {fabric.topology.get('hca', 'mlx4_0')}"
    return node.name


def render(fabric: Fabric, lids: dict[int, int] | None = None, lmc: int = 0) -> str:
    """The netfile text. ``lids`` (port GUID → base LID) pre-sets port LIDs in ibsim: OpenSM
    keeps a discovered LID that is LMC-aligned and free, which is how a LID policy (PARX's
    quadrants) reaches a simulated subnet alongside the guid2lid file."""
    lids = lids or {}
    peers: dict[int, list[tuple[int, int, int]]] = {i: [] for i in range(len(fabric.nodes))}
    for c in fabric.cables:
        peers[c.a].append((c.pa, c.b, c.pb))
        peers[c.b].append((c.pb, c.a, c.pa))
    out = [f"# t2hx fabric {fabric.name}: {len(fabric.switches())} switches, "
           f"{len(fabric.hcas())} HCAs, {len(fabric.cables)} cables"]
    # HCAs first: ibsim attaches the SM to the first port of the file.
    order = fabric.hcas() + fabric.switches()
    for i in order:
        node = fabric.nodes[i]
        head = "Switch" if node.kind == "switch" else "Hca"
        guidline = "switchguid" if node.kind == "switch" else "caguid"
        out.append("")
        out.append(f"{guidline}=0x{node.guid:016x}")
        sw_lid = f" lid {lids[node.guid]}" if node.kind == "switch" and node.guid in lids else ""
        out.append(f'{head}\t{node.ports} "{node.name}"\t# "{node_description(fabric, node)}"'
                   f"{sw_lid}")
        for port, peer, pport in sorted(peers[i]):
            lid = lids.get(node.port_guid(port)) if node.kind == "hca" else None
            tail = f"\t# lid {lid} lmc {lmc}" if lid else ""
            out.append(f'[{port}]\t"{fabric.nodes[peer].name}"[{pport}]{tail}')
    return "\n".join(out) + "\n"


def write_netfile(fabric: Fabric, path: str | Path, lids: dict[int, int] | None = None,
                  lmc: int = 0) -> Path:
    return atomic_write(Path(path), render(fabric, lids, lmc))


HEADER = re.compile(r'^(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"(?:.*?#\s*"([^"]*)")?')
PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\]')
GUIDLINE = re.compile(r"^(switchguid|caguid|hcaguids)\s*=\s*(0x[0-9a-fA-F]+)")
IDGUID = re.compile(r"^[SH]-([0-9a-fA-F]{16})$")


def read_netfile(path: str | Path, name: str, hosts: list[str] | None = None,
                 gbps: float = 32.0) -> Fabric:
    """Read an ibsim netfile or ibnetdiscover output. HCAs are named by the first word of
    their description (the hostname on a real cluster)."""
    path = Path(path)
    lines = read_text(path, ConfError, "fabric file",
                      "give the path of an ibnetdiscover output").splitlines()
    records, ports = _parse(lines, path)
    fabric = Fabric(name, {"kind": "ibnetdiscover", "file": str(path)})
    ids: dict[str, int] = {}
    for nodeid, kind, nports, desc, guid in records:
        label = nodeid if kind == "switch" else (desc.split()[0] if desc else nodeid)
        ids[nodeid] = fabric.add_node(label, kind, nports)
        if guid is not None:
            fabric.nodes[ids[nodeid]].guid = guid
    _link(fabric, ids, ports, path, gbps)
    if hosts is not None:
        missing = [h for h in hosts if h not in fabric._index]
        if missing:
            raise ConfError(f"host '{missing[0]}' is not in the fabric file", file=path,
                            field="topology.file", fix="regenerate it with ibnetdiscover or "
                            "fix nodes.hostname")
    return fabric


def _parse(lines: list[str], path: Path) -> tuple[list, list]:
    records: list[tuple[str, str, int, str, int | None]] = []
    ports: list[tuple[str, int, str, int]] = []
    pending_guid: int | None = None
    current: str | None = None
    for lineno, line in enumerate(lines, 1):
        if m := GUIDLINE.match(line):
            pending_guid = int(m.group(2), 16)
        elif m := HEADER.match(line):
            kind = "switch" if m.group(1) == "Switch" else "hca"
            nodeid = m.group(3)
            guid = pending_guid
            if guid is None and (g := IDGUID.match(nodeid)):
                guid = int(g.group(1), 16)
            records.append((nodeid, kind, _port(m.group(2), lineno, path), m.group(4) or "",
                            guid))
            current, pending_guid = nodeid, None
        elif m := PORT.match(line):
            if current is None:
                raise ConfError(f"line {lineno}: port line before any node header", file=path,
                                fix="start each record with a Switch or Ca line")
            ports.append((current, _port(m.group(1), lineno, path), m.group(2),
                          _port(m.group(3), lineno, path)))
    return records, ports


def _port(text: str, lineno: int, path: Path) -> int:
    """A port number or count: InfiniBand numbers ports in 8 bits."""
    if len(text) > 3 or int(text) > 255:
        raise ConfError(f"line {lineno}: port number {text[:8]} is beyond 255", file=path,
                        fix="use a complete, unedited ibnetdiscover output")
    return int(text)


def _link(fabric: Fabric, ids: dict[str, int], ports: list, path: Path, gbps: float) -> None:
    done: set[tuple[str, int]] = set()
    for nodeid, port, remote, rport in ports:
        if (nodeid, port) in done:
            continue
        if remote not in ids:
            raise ConfError(f"port {port} of '{nodeid}' names unknown node '{remote}'",
                            file=path, fix="use a complete ibnetdiscover output")
        fabric.cables.append(Cable(ids[nodeid], port, ids[remote], rport, gbps))
        done.update({(nodeid, port), (remote, rport)})
    fabric.remove_cables([])  # rebuild the used-port index
