"""Routing tables as compact arrays, and paths through them.

``Tables.lft[node, lid]`` is the egress port a switch uses towards ``lid`` (0: the switch
itself, -1: no route). Every cable ``c`` is two directed links, ``2c`` (a→b) and ``2c+1``
(b→a); paths are arrays of those link ids, injection (HCA→switch) and ejection
(switch→HCA) included, so the flow model and the analysis share one notion of a link.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from t2hx.atomic import staged_file
from t2hx.errors import RoutingError
from t2hx.fabric.graph import Fabric

HEAD = re.compile(r"^Unicast lids .*? guid 0x([0-9a-fA-F]+)")
ENTRY = re.compile(r"^0x([0-9a-fA-F]+) (\d+|UNREACHABLE)", re.M)
GUID2LID = re.compile(r"^0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)", re.M)


class PathError(RoutingError):
    """A path loops or ends in a black hole."""


#: Pairs walked at once by Tables.paths (bounds its int64 intermediates to ~100 MiB).
PATH_CHUNK = 1 << 20


@dataclass
class Tables:
    fabric: Fabric
    lmc: int
    lft: np.ndarray          # (nodes, max_lid + 1) int16 egress port
    lid_node: np.ndarray     # (max_lid + 1,) node owning the LID, -1 if none
    lid_port: np.ndarray     # (max_lid + 1,) port of that node
    base_lid: np.ndarray     # (nodes, max_ports + 1) base LID per node port (switch: port 0)
    link_of: np.ndarray      # (nodes, max_ports + 1) directed link leaving (node, port), -1
    link_dst: np.ndarray     # (links,) node a directed link enters
    link_src: np.ndarray     # (links,) node a directed link leaves
    link_gbps: np.ndarray    # (links,) capacity per direction

    @property
    def links(self) -> int:
        return len(self.link_dst)

    def hca_lid(self, hca: int, index: int = 0, port: int = 1) -> int:
        """LID ``index`` (0 .. 2^lmc - 1) of an HCA port."""
        return int(self.base_lid[hca, port]) + index

    def hca_lids(self, index: int = 0) -> np.ndarray:
        """LID ``index`` of port 1 of every HCA, in ``fabric.hcas()`` order."""
        return self.base_lid[self.fabric.hcas(), 1] + index

    def paths(self, src: np.ndarray, dst_lid: np.ndarray, max_hops: int = 64,
              port: int = 1) -> np.ndarray:
        """Directed link ids of each (source HCA node, destination LID) pair, padded with -1:
        shape (pairs, hops); the packets leave through HCA ``port`` (a second rail's port).
        Raises PathError on loops and black holes."""
        src = np.asarray(src, dtype=np.int64)
        lid = np.asarray(dst_lid, dtype=np.int64)
        known = (lid >= 0) & (lid < len(self.lid_node))
        known[known] = self.lid_node[lid[known]] >= 0
        if not known.all():
            raise PathError(f"LID {int(lid[np.argmin(known)])} is not assigned in these routing "
                            "tables", field="lid", fix="use LIDs of this fabric (guid2lid)")
        if len(src) <= PATH_CHUNK:
            return self._walk(src, lid, max_hops, port)
        # All pairs of 4,608 hosts are 21 M walks: in one piece their int64 intermediates
        # alone take several GiB, so walk them in chunks into one int32 array.
        parts = [self._walk(src[i:i + PATH_CHUNK], lid[i:i + PATH_CHUNK], max_hops, port)
                 for i in range(0, len(src), PATH_CHUNK)]
        out = np.full((len(src), max(p.shape[1] for p in parts)), -1, dtype=np.int32)
        start = 0
        for p in parts:
            out[start:start + len(p), :p.shape[1]] = p
            start += len(p)
        return out

    def _walk(self, src: np.ndarray, lid: np.ndarray, max_hops: int, port: int = 1
              ) -> np.ndarray:
        """paths() of pairs whose LIDs are known to be assigned."""
        hops: list[np.ndarray] = []
        link = self.link_of[src, port]
        node = self.link_dst[link]
        hops.append(link)
        done = self._arrived(node, lid)
        for _ in range(max_hops):
            if done.all():
                break
            port = self.lft[node, lid]
            stuck = ~done & (port < 0)
            if stuck.any():
                k = int(np.argmax(stuck))
                raise PathError(f"black hole: switch '{self.fabric.nodes[node[k]].name}' has no "
                                f"route to LID {lid[k]}", fix="check opensm.log for "
                                "unreachable LIDs")
            nxt = np.where(done, -1, self.link_of[node, np.maximum(port, 0)])
            hops.append(nxt)
            node = np.where(done, node, self.link_dst[np.maximum(nxt, 0)])
            done = done | self._arrived(node, lid)
        if not done.all():
            k = int(np.argmin(done))
            raise PathError(f"routing loop from '{self.fabric.nodes[src[k]].name}' to LID "
                            f"{lid[k]}", fix="the LFTs are inconsistent; re-route")
        return np.stack(hops, axis=1).astype(np.int32)

    def _arrived(self, node: np.ndarray, lid: np.ndarray) -> np.ndarray:
        return node == self.lid_node[lid]

    def path(self, src_hca: int, dst_lid: int) -> list[int]:
        row = self.paths(np.array([src_hca]), np.array([dst_lid]))[0]
        return [int(x) for x in row if x >= 0]

    def switch_hops(self, src: np.ndarray, dst_lid: np.ndarray) -> np.ndarray:
        """Switch-to-switch links on each path (the paper's hop count)."""
        p = self.paths(src, dst_lid)
        sw = np.array([n.kind == "switch" for n in self.fabric.nodes])
        valid = p >= 0
        both = valid & sw[self.link_src[np.maximum(p, 0)]] & sw[self.link_dst[np.maximum(p, 0)]]
        return both.sum(axis=1)


def directed_links(fabric: Fabric) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    width = max(n.ports for n in fabric.nodes) + 1
    link_of = np.full((len(fabric.nodes), width), -1, dtype=np.int64)
    src = np.empty(2 * len(fabric.cables), dtype=np.int64)
    dst = np.empty_like(src)
    gbps = np.empty(len(src))
    for c, cable in enumerate(fabric.cables):
        link_of[cable.a, cable.pa] = 2 * c
        link_of[cable.b, cable.pb] = 2 * c + 1
        src[2 * c], dst[2 * c] = cable.a, cable.b
        src[2 * c + 1], dst[2 * c + 1] = cable.b, cable.a
        gbps[2 * c] = gbps[2 * c + 1] = cable.gbps
    return link_of, src, dst, gbps


def load_tables(fabric: Fabric, out_dir: str | Path, lmc: int | None = None,
                cache: bool = True) -> Tables:
    """Read ``opensm-lfts.dump`` and ``guid2lid`` from ``out_dir`` (a routing run, or the
    dump files copied from a real fabric's OpenSM host); ``cache=False`` for a dump that is
    read once (a live OpenSM's, rewritten by its next sweep)."""
    out = Path(out_dir)
    lid_map = read_guid2lid(out / "guid2lid")
    if lmc is None:
        lmc = _lmc_of(out, lid_map)
    by_guid = _port_guids(fabric)
    max_lid = max(hi for _, hi in lid_map.values())
    width = max(n.ports for n in fabric.nodes) + 1
    lid_node = np.full(max_lid + 1, -1, dtype=np.int64)
    lid_port = np.zeros(max_lid + 1, dtype=np.int64)
    base = np.zeros((len(fabric.nodes), width), dtype=np.int64)
    for guid, (lo, hi) in lid_map.items():
        if guid not in by_guid:
            raise RoutingError(f"GUID 0x{guid:016x} is not in fabric '{fabric.name}'",
                               file=out / "guid2lid", fix="these dumps belong to another "
                               "fabric; route this one or pick the right --system/--plane")
        node, port = by_guid[guid]
        lid_node[lo:hi + 1] = node
        lid_port[lo:hi + 1] = port
        base[node, port] = lo
    lft = read_lfts(out / "opensm-lfts.dump", fabric, max_lid) if cache else \
        parse_lfts(out / "opensm-lfts.dump", fabric, max_lid)
    link_of, src, dst, gbps = directed_links(fabric)
    return Tables(fabric, lmc, lft, lid_node, lid_port, base, link_of, dst, src, gbps)


def _port_guids(fabric: Fabric) -> dict[int, tuple[int, int]]:
    out: dict[int, tuple[int, int]] = {}
    for i, node in enumerate(fabric.nodes):
        if node.kind == "switch":
            out[node.guid] = (i, 0)
        else:
            for port in range(1, node.ports + 1):
                out[node.port_guid(port)] = (i, port)
    return out


def _lmc_of(out: Path, lid_map: dict[int, tuple[int, int]]) -> int:
    spans = {hi - lo + 1 for lo, hi in lid_map.values()}
    span = max(spans) if spans else 1
    return max(0, span.bit_length() - 1)


def read_guid2lid(path: Path) -> dict[int, tuple[int, int]]:
    try:
        text = path.read_text()
    except OSError:
        raise RoutingError("guid2lid missing", file=path, fix="route the fabric first "
                           "(t2hx fabric route) or copy OpenSM's guid2lid cache file") from None
    lids = {int(g, 16): (int(lo, 16), int(hi, 16)) for g, lo, hi in GUID2LID.findall(text)}
    if not lids:
        raise RoutingError("no GUID/LID lines", file=path, fix="copy a complete guid2lid file")
    return lids


def switch_routes(path: Path) -> dict[int, set[int]]:
    """Switch GUID -> the LIDs it routes (has a port for), straight from an LFT dump,
    whatever fabric it belongs to (what the SM host checks before anything is mapped)."""
    try:
        text = path.read_text()
    except OSError:
        raise RoutingError("LFT dump missing", file=path, fix="check OpenSM's dump_files_dir "
                           "and log_flags (0x40 writes the dump)") from None
    out: dict[int, set[int]] = {}
    for block in re.split(r"^(?=Unicast lids )", text, flags=re.M):
        head = HEAD.match(block)
        if head:
            out[int(head.group(1), 16)] = {int(lid, 16) for lid, port in ENTRY.findall(block)
                                           if port != "UNREACHABLE"}
    return out


#: Parsed LFTs beside the dump: a 4,608-node dump takes ~4 s to parse and every simulated
#: case opens it again; the array loads in ~0.1 s. Keyed by the dump's size and mtime and
#: the fabric's switch GUIDs, so a re-routed or replaced dump is parsed afresh.
LFT_CACHE = ".opensm-lfts.npz"


def read_lfts(path: Path, fabric: Fabric, max_lid: int) -> np.ndarray:
    stamp = _lft_stamp(path, fabric, max_lid)
    cache = path.with_name(LFT_CACHE)
    if stamp is not None:
        try:
            with np.load(cache) as data:
                if str(data["stamp"]) == stamp:
                    return data["lft"]
        except (OSError, KeyError, ValueError):
            pass                     # absent or unreadable: parse the dump
    lft = parse_lfts(path, fabric, max_lid)
    if stamp is not None:
        try:
            with staged_file(cache) as tmp, open(tmp, "wb") as fh:
                np.savez(fh, stamp=np.array(stamp), lft=lft)
        except OSError:
            pass                     # a read-only dump directory: parse every time
    return lft


_HEX = np.full(256, -1, dtype=np.int64)
for _k, _c in enumerate(b"0123456789abcdef"):
    _HEX[_c] = _HEX[bytes([_c]).upper()[0]] = _k
_DEC = np.full(256, -1, dtype=np.int64)
_DEC[np.frombuffer(b"0123456789", dtype=np.uint8)] = np.arange(10)


def _fixed_width_entries(data: bytes, by_guid: dict[int, int], path: Path, fabric: Fabric) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """The entries of OpenSM's own dump format, read with numpy: ``0x%04X %03u …`` or
    ``0x%04X UNREACHABLE`` per line under a ``Unicast lids … guid 0x…`` header. (row, LID,
    port) arrays and the switch count; None when any entry line deviates from that layout
    (another tool's dump), for the line-by-line parser."""
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    starts = starts[starts + 10 < len(buf)]
    entry = starts[(buf[starts] == ord("0")) & (buf[starts + 1] == ord("x"))]
    head_at = starts[buf[starts] == ord("U")]
    heads: list[tuple[int, re.Match[str]]] = []
    for at in head_at:
        m = HEAD.match(data[at:at + 200].decode(errors="replace"))
        if m:
            heads.append((int(at), m))
    if not heads or not len(entry):
        return None
    hexd = _HEX[buf[entry[:, None] + np.arange(2, 6)]]
    unreachable = buf[entry + 7] == ord("U")
    decd = _DEC[buf[entry[:, None] + np.arange(7, 10)]]
    after = buf[entry[:, None] + np.array([6, 10])]
    ok = (hexd >= 0).all(axis=1) & (after[:, 0] == ord(" ")) & \
        (unreachable | ((decd >= 0).all(axis=1) & np.isin(after[:, 1], (32, 10))))
    if not ok.all():
        return None
    rows_of = [_switch_row(int(m.group(1), 16), by_guid, path, fabric) for _at, m in heads]
    block = np.searchsorted([at for at, _m in heads], entry, side="right") - 1
    if (block < 0).any():
        return None                  # entries before any header: not OpenSM's layout
    lids = hexd @ np.array([4096, 256, 16, 1])
    ports = np.where(unreachable, -1, decd @ np.array([100, 10, 1]))
    return np.asarray(rows_of)[block], lids, ports.astype(np.int16), len(heads)


def _lft_stamp(path: Path, fabric: Fabric, max_lid: int) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None                  # parse_lfts names the missing file
    guids = hashlib.sha256(np.array([n.guid for n in fabric.nodes if n.kind == "switch"],
                                    dtype=np.uint64).tobytes()).hexdigest()
    return f"{st.st_size}-{st.st_mtime_ns}-{len(fabric.nodes)}-{max_lid}-{guids}"


def parse_lfts(path: Path, fabric: Fabric, max_lid: int, fast: bool = True) -> np.ndarray:
    """The (nodes × LIDs) egress ports of an ``opensm-lfts.dump``; OpenSM's own fixed-width
    layout is read with numpy (``fast``), anything else line by line."""
    try:
        data = path.read_bytes()
    except OSError:
        raise RoutingError("LFT dump missing", file=path, fix="route the fabric first or copy "
                           "opensm-lfts.dump from the OpenSM host") from None
    by_guid = {n.guid: i for i, n in enumerate(fabric.nodes) if n.kind == "switch"}
    got = _fixed_width_entries(data, by_guid, path, fabric) if fast else None
    rows, lids, ports, seen = got or _line_entries(data.decode(errors="replace"), by_guid,
                                                   path, fabric)
    if seen != len(by_guid):
        raise RoutingError(f"dump has {seen} switches, fabric has {len(by_guid)}", file=path,
                           fix="the dump is truncated or from another fabric; re-route")
    lft = np.full((len(fabric.nodes), max_lid + 1), -1, dtype=np.int16)
    keep = lids <= max_lid
    lft[rows[keep], lids[keep]] = ports[keep]
    return lft


def _switch_row(guid: int, by_guid: dict[int, int], path: Path, fabric: Fabric) -> int:
    if guid not in by_guid:
        raise RoutingError(f"switch GUID 0x{guid:016x} is not in fabric '{fabric.name}'",
                           file=path, fix="these dumps belong to another fabric")
    return by_guid[guid]


def _line_entries(text: str, by_guid: dict[int, int], path: Path, fabric: Fabric) \
        -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    rows: list[int] = []
    lids: list[int] = []
    ports: list[int] = []
    seen = 0
    for block in re.split(r"^(?=Unicast lids )", text, flags=re.M):
        guid_m = HEAD.match(block)
        if not guid_m:
            continue
        row = _switch_row(int(guid_m.group(1), 16), by_guid, path, fabric)
        for lid, port in ENTRY.findall(block):
            rows.append(row)
            lids.append(int(lid, 16))
            ports.append(-1 if port == "UNREACHABLE" else int(port))
        seen += 1
    return (np.array(rows, dtype=np.int64), np.array(lids, dtype=np.int64),
            np.array(ports, dtype=np.int16), seen)
