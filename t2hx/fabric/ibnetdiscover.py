"""Parse ``ibnetdiscover`` topology output (and ibsim netfiles, its dialect) into records.

Only the syntax lives here: node records (``Switch|Ca|Hca|Rt <ports> "<id>" # "<desc>"``)
with the GUID lines before them, and ``[port] "<peer id>"[peer port]`` lines, each kept with
its line number so any later error can name the dump's line. Which nodes are hosts and which
cables the plane keeps is :mod:`t2hx.fabric.sitefabric`'s business.

Dialects seen in real dumps and accepted: ``ibnetdiscover`` itself (tabs, ``(port guid)``
after CA ports, ``lid``/width comments), ``ibdiagnet``'s copy of the format (``[1](1)``,
``vendid=0x000002c9``), a UTF-8 BOM, CRLF line ends, a shell prompt pasted above, and
``ibnetdiscover -g`` chassis lines (``[1][ext 13]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from t2hx.errors import ConfError
from t2hx.textfile import read_text

HEADER = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"(?:.*?#\s*"([^"]*)")?')
#: A line that starts like a record header but does not parse is an error, not a comment.
HEADER_START = re.compile(r"^(Switch|Hca|Ca|Rt)\s")
PORT = re.compile(r'^\[(\d+)\](?:\[ext \d+\])?(?:\([0-9a-fA-F]+\))?\s*"([^"]+)"\[(\d+)\]')
#: A pasted shell prompt ("[root@host dir]# ibnetdiscover") is not a port line; "[12] ..." is.
PORT_START = re.compile(r"^\[\d")
GUIDLINE = re.compile(r"^(switchguid|caguid|hcaguids|rtguid)\s*=\s*(0x[0-9a-fA-F]+)")
SYSIMG = re.compile(r"^sysimgguid\s*=\s*(0x[0-9a-fA-F]+)")
IDGUID = re.compile(r"^[SHR]-([0-9a-fA-F]{16})$")
KINDS = {"Switch": "switch", "Hca": "ca", "Ca": "ca", "Rt": "router"}
#: Port numbers are 8 bits on the wire; a node has at most 254 ports (port 0: management).
MAX_PORTS = 254


@dataclass(frozen=True)
class DumpNode:
    """One node record: ``id`` is ibnetdiscover's node name (``S-<guid>``, ``H-<guid>``)."""

    id: str
    kind: str                 # switch | ca | router
    ports: int
    desc: str                 # the NodeDescription, "" when the record has none
    guid: int | None
    sysimgguid: int | None
    line: int


@dataclass(frozen=True)
class DumpLink:
    """One port line: ``node``'s ``port`` is cabled to ``peer``'s ``peer_port``."""

    node: str
    port: int
    peer: str
    peer_port: int
    line: int


@dataclass(frozen=True)
class Dump:
    path: Path
    nodes: tuple[DumpNode, ...]
    links: tuple[DumpLink, ...]


def parse(path: str | Path) -> Dump:
    """Records of the dump at ``path``. Raises ConfError naming the dump and its line."""
    path = Path(path)
    text = read_text(path, ConfError, "fabric file",
                     "give the path of an ibnetdiscover output (topology.file)")
    return parse_text(text, path)


_CACHE: dict[tuple[str, int, int], Dump] = {}


def parse_cached(path: str | Path) -> Dump:
    """:func:`parse`, remembered per file content: a system conf that takes its host names
    from a dump and the plane built from it parse the same (possibly 1 MB) file once. Keyed
    by the text, not the mtime: a file rewritten within one clock tick must not read stale."""
    path = Path(path)
    text = read_text(path, ConfError, "fabric file",
                     "give the path of an ibnetdiscover output (topology.file)")
    key = (str(path.resolve()), len(text), hash(text))
    if key not in _CACHE:
        if len(_CACHE) >= 8:
            _CACHE.clear()
        _CACHE[key] = parse_text(text, path)
    return _CACHE[key]


def parse_text(text: str, path: Path) -> Dump:
    nodes: list[DumpNode] = []
    links: list[DumpLink] = []
    seen: dict[str, int] = {}
    guid: int | None = None
    sysimg: int | None = None
    current: DumpNode | None = None
    ports_seen: set[int] = set()
    for lineno, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = raw.strip()
        if m := GUIDLINE.match(line):
            guid = int(m.group(2), 16)
        elif m := SYSIMG.match(line):
            sysimg = int(m.group(1), 16)
        elif m := HEADER.match(line):
            nodeid = m.group(3)
            if nodeid in seen:
                raise _error(path, lineno, f"node '{_clip(nodeid)}' has a second record "
                             f"(the first is on line {seen[nodeid]})")
            count = _number(m.group(2), path, lineno, "port count")
            if not 1 <= count <= MAX_PORTS:
                raise _error(path, lineno, f"'{_clip(nodeid)}' claims {count} ports "
                             f"(InfiniBand nodes have 1 to {MAX_PORTS})")
            # ibnetdiscover names a node by its GUID (S-/H-<guid>): trust the name, since
            # ibdiagnet writes the chassis GUID into a director leaf's switchguid= line.
            # Netfiles with names of their own (ibsim's, ours) give it on the guid line.
            if g := IDGUID.match(nodeid):
                guid = int(g.group(1), 16)
            current = DumpNode(nodeid, KINDS[m.group(1)], count, (m.group(4) or "").strip(),
                               guid, sysimg, lineno)
            nodes.append(current)
            seen[nodeid] = lineno
            ports_seen = set()
            guid = sysimg = None
        elif HEADER_START.match(line):
            raise _error(path, lineno, f"unreadable node record {_clip(line)!r}")
        elif m := PORT.match(line):
            if current is None:
                raise _error(path, lineno, "port line before any node record")
            port = _number(m.group(1), path, lineno, "port number")
            peer_port = _number(m.group(3), path, lineno, "port number")
            if not 1 <= port <= current.ports:
                raise _error(path, lineno, f"port {port} of '{_clip(current.id)}', which "
                             f"has {current.ports} ports")
            if port in ports_seen:
                raise _error(path, lineno, f"port {port} of '{_clip(current.id)}' is listed "
                             "twice")
            if not 1 <= peer_port <= MAX_PORTS:
                raise _error(path, lineno, f"peer port {peer_port} is beyond {MAX_PORTS}")
            ports_seen.add(port)
            links.append(DumpLink(current.id, port, m.group(2), peer_port, lineno))
        elif PORT_START.match(line):
            raise _error(path, lineno, f"unreadable port line {_clip(line)!r}")
    return Dump(path, tuple(nodes), tuple(links))


def _number(text: str, path: Path, lineno: int, what: str) -> int:
    # Port numbers and counts are 8 bits: a long digit string is corruption, not a port.
    if len(text) > 3:
        raise _error(path, lineno, f"{what} {text[:8]}... is beyond {MAX_PORTS}")
    return int(text)


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[:width] + "..."


def _error(path: Path, lineno: int, message: str) -> ConfError:
    # A corrupt line cannot be fixed from the conf: the operator takes a fresh dump.
    return ConfError(message, file=path, field=f"line {lineno}",
                     fix="use a complete, unedited output of ibnetdiscover "
                     "(ibnetdiscover > fabric.txt on a host of the plane)")
