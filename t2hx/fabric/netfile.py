"""ibsim netfiles: write one from a Fabric, read one (or any ibnetdiscover output) back.

The format is ibnetdiscover's: a header per node (``Switch|Hca <ports> "<id>" # "<desc>"``)
followed by ``[port] "<remote id>"[remote port]`` lines. ``switchguid=``/``caguid=`` lines
before a header fix that node's GUID, so GUIDs (and through them LIDs) are ours, not
ibsim's running counter. Reading is :mod:`t2hx.fabric.ibnetdiscover` (syntax) and
:mod:`t2hx.fabric.sitefabric` (which nodes and cables a plane keeps).
"""

from __future__ import annotations

from pathlib import Path

from t2hx.atomic import atomic_write
from t2hx.fabric.graph import Fabric, Node
from t2hx.fabric.sitefabric import DumpOptions, read_dump


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


def read_netfile(path: str | Path, name: str, hosts: list[str] | None = None,
                 gbps: float = 32.0, options: DumpOptions | None = None) -> Fabric:
    """Read an ibsim netfile or a site's ibnetdiscover output back into a Fabric (HCAs are
    named by the first word of their NodeDescription, the hostname on a real cluster);
    ``options`` are the dump rules of :mod:`t2hx.fabric.sitefabric`."""
    return read_dump(path, name, options or DumpOptions(), hosts, gbps)
