"""The routed fabric as the flow model sees it: ranks → HCAs → paths of directed links.

:class:`Network` ties together a system conf, one plane, the routing tables real OpenSM
produced for it (or dumps copied from a real fabric), and a hostfile (line i holds the
i-th block of ``ranks_per_node`` ranks; two ranks of one host exchange through its
shared-memory link). Paths come from the LFTs; which of an HCA's 2^LMC LIDs a message
targets is asked of a *LID chooser* ``chooser(src_hca_idx, dst_hca_idx, msg_bytes) -> lid_index`` (arrays in,
array out; default: the base LID); one with ``per_message = True`` gets each call whole, one
size per message, since it draws per message. A ``parx`` network gets Table 1 there
(:class:`t2hx.routing.parx.Table1Chooser`), whether routed here or read from routing ``dumps``.

Routing runs come from :mod:`t2hx.routing.cache` (real OpenSM under ibsim, cached per
conf, fabric and routing inputs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

import numpy as np

from t2hx.routing import parx
from t2hx.conf import MPI_STACKS, System, load_system, system_path
from t2hx.errors import ConfError, WorkloadError
from t2hx.flowsim import bulk, timeline
from t2hx.flowsim.collectives import DEFAULT_RULES
from t2hx.flowsim.multirail import MultiRail, shares
from t2hx.fabric.build import build_plane
from t2hx.fabric.graph import Fabric
from t2hx.routing.cache import ensure_routing
from t2hx.routing.lft import Tables, load_tables
from t2hx.routing_engines import RoutingInput, routing_engine
from t2hx.textfile import read_text

# size: one for the call, or one per message for a chooser with ``per_message = True``
LidChooser = Callable[[np.ndarray, np.ndarray, int | np.ndarray], np.ndarray]
GBIT = 1e9 / 8          # bytes/s per Gbit/s


def base_lid(src: np.ndarray, dst: np.ndarray, size: int | np.ndarray) -> np.ndarray:
    """Default LID chooser: every message to the destination's base LID."""
    return np.zeros(len(src), dtype=np.int64)


@dataclass
class LogGP:
    """Latency parameters (seconds) from the conf's ``model:`` section."""

    hop: float = 100e-9
    overhead: float = 0.6e-6
    gap: float = 0.3e-6
    reduce_rate: float = 32.0 * GBIT
    collectives: str = DEFAULT_RULES     # coll/tuned rule set (t2hx.flowsim.collectives.RULES)
    send_extra: float = 0.0              # the sender's extra work per message (PARX's LID pick)

    @classmethod
    def from_conf(cls, model: dict, engine: str | None = None) -> LogGP:
        """``engine``: the routing engine; where MPI picks each message's LID (PARX's
        networks) a send adds that MPI path's per-message cost (``parx_message_ns``,
        docs/modelling.md#parx-mpi-cost) and runs on its stack (``parx_stack``)."""
        per_message = engine is not None and routing_engine(engine).lid_per_message
        # .get: a model dict built by hand (not by load_system) may lack the field
        extra = model.get("parx_message_ns", 0.0) * 1e-9 if per_message else 0.0
        # the endpoints' MPI stack (docs/modelling.md#mpi-stacks): its cost beyond 4.1's ob1
        mpi = model.get("mpi") or {}
        stack = MPI_STACKS[mpi.get("parx_stack" if per_message else "stack", "ompi-4.1-ob1")]
        return cls(hop=model["switch_latency_ns"] * 1e-9, overhead=model["overhead_us"] * 1e-6,
                   gap=model["gap_us"] * 1e-6 + stack["gap_ns"] * 1e-9,
                   reduce_rate=model["reduce_gbps"] * GBIT,
                   collectives=model.get("collectives", DEFAULT_RULES),
                   send_extra=extra + stack["message_ns"] * 1e-9)

    def latency(self, switches: np.ndarray) -> np.ndarray:
        """Zero-byte one-way time: send + receive overhead and the switch hops."""
        return 2 * self.overhead + self.send_extra + switches * self.hop


@dataclass
class Rail:
    """One rail a rank's traffic may take (t2hx.flowsim.multirail): an HCA port of a plane,
    that plane's routing tables, each rank's HCA node in it and the offset of its links in
    the network's link ids (planes' links are numbered one after another)."""
    tables: Tables
    port: int
    rank_hca: np.ndarray
    offset: int


@dataclass
class Network:
    system: System
    plane: str
    engine: str
    fabric: Fabric
    tables: Tables
    hosts: list[str]                 # rank → hostname
    hostfile: str
    loggp: LogGP
    chooser: LidChooser = base_lid
    dumps: Path | None = None                  # the routing run's directory
    multirail: MultiRail = MultiRail()         # conf model.multirail; default: one rail
    other_planes: dict = field(default_factory=dict)   # plane -> Tables of the other rails
    capacity: np.ndarray = field(init=False)   # bytes/s per directed link, every plane
    rails: list = field(init=False)            # Rail per rail; [] with one rail
    rank_hca: np.ndarray = field(init=False)   # rank → HCA node index
    rank_hca_idx: np.ndarray = field(init=False)  # rank → position in fabric.hcas()
    rank_node: np.ndarray = field(init=False)     # rank → its host among the distinct ones
    shm_link: np.ndarray | None = field(init=False)  # node → its shared-memory link (or None)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        hcas = self.fabric.hcas()
        pos = {h: k for k, h in enumerate(hcas)}
        self.rank_hca = np.array([self.fabric.index(h) for h in self.hosts], dtype=np.int64)
        self.rank_hca_idx = np.array([pos[h] for h in self.rank_hca], dtype=np.int64)
        nodes, self.rank_node = np.unique(self.rank_hca, return_inverse=True)
        self._node_hca = nodes if len(nodes) < len(self.rank_hca) else self.rank_hca
        if len(nodes) == len(self.rank_hca):
            self.rank_node = np.arange(len(self.rank_hca))
        self._switch = np.array([n.kind == "switch" for n in self.fabric.nodes])
        offsets = {self.plane: 0}
        links = [self.tables.link_gbps]
        for plane, tables in self.other_planes.items():
            offsets[plane] = sum(len(x) for x in links)
            links.append(tables.link_gbps)
        self.capacity = np.concatenate(links) * GBIT
        self.shm_link = None
        if len(nodes) < len(self.rank_hca):     # several ranks on a host: its memory copies
            self.shm_link = np.arange(len(nodes)) + len(self.capacity)
            self.capacity = np.concatenate([self.capacity, np.full(len(nodes), shm_rate(
                self.system))])
        self.rails = [self._rail(r, offsets) for r in range(self.multirail.rails)
                      ] if self.multirail.rails > 1 else []

    def _rail(self, r: int, offsets: dict) -> Rail:
        plane, port = self.multirail.lane(r)
        plane = plane or self.plane
        tables = self.tables if plane == self.plane else self.other_planes[plane]
        nodes = np.array([tables.fabric.index(h) for h in self.hosts], dtype=np.int64)
        if (tables.link_of[nodes, port] < 0).any():
            raise ConfError(f"rail {r} uses port {port} of plane '{plane}', which the HCAs "
                            "do not have", file=self.system.path,
                            field="model.multirail.lanes",
                            fix="cable that port (XGFT p1 = 2) or name another plane")
        return Rail(tables, port, nodes, offsets[plane])

    @property
    def ranks(self) -> int:
        return len(self.hosts)

    @property
    def label(self) -> str:
        return f"{self.system.name}/{self.plane}"

    def run(self, phases: list[bulk.Phase], keep_rates: bool = False) -> bulk.Result:
        """The times of ``phases`` under max-min fair rates: what a workload asks of any
        network engine (t2hx/flowsim/models.py)."""
        return bulk.run(self, phases, keep_rates)

    def run_program(self, prog: timeline.Program) -> np.ndarray:
        """Each rank's end of one call whose ranks wait on their partners under the MPI
        protocol (t2hx/flowsim/timeline.py), with max-min rates between events."""
        return timeline.rank_ends(*self.program_completions(prog))

    def program_completions(self, prog: timeline.Program) -> tuple[timeline.Wire, np.ndarray]:
        """The program's wire messages and when each completes the operations waiting on
        it (its delivery): what :meth:`run_program` reduces to each rank's end."""
        wire = timeline.compile(prog, timeline.eager_limit(self.system))
        if len(wire.src) == 0:
            return wire, np.zeros(0)
        paths, hops = self.paths(wire.src, wire.dst, wire.lid_size)
        latency = np.where(wire.local, 0.0, self.loggp.latency(hops.astype(np.float64)))
        delivered = timeline.fluid_times(paths, self.capacity, wire.size, latency,
                                         wire.dep_off, wire.dep, wire.compute)
        return wire, delivered

    # -- paths ------------------------------------------------------------------------
    def lid_index(self, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray
                  ) -> np.ndarray:
        """LID offset of each message; ``size``: one size for all, or one per message."""
        a, b = self.rank_hca_idx[src], self.rank_hca_idx[dst]
        if np.ndim(size) == 0:
            idx = np.asarray(self.chooser(a, b, int(size)), dtype=np.int64)
        elif getattr(self.chooser, "per_message", False):
            # the chooser draws per message from the whole call: no split by size
            size = np.broadcast_to(np.asarray(size, dtype=np.int64), np.shape(src))
            idx = np.asarray(self.chooser(a, b, size), dtype=np.int64)
        else:
            size = np.broadcast_to(np.asarray(size), np.shape(src))
            idx = np.zeros(len(a), dtype=np.int64)
            for value in np.unique(size):
                sel = size == value
                idx[sel] = self.chooser(a[sel], b[sel], int(value))
        if idx.size and (idx.min() < 0 or idx.max() >= (1 << self.tables.lmc)):
            raise WorkloadError(f"LID chooser picked LID index {int(idx.max())} but LMC is "
                                f"{self.tables.lmc}", field="lmc",
                                fix="route with a larger --lmc or fix the chooser")
        return idx

    def _all_pairs(self, lid_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Paths and switch counts for every pair of the ranks' hosts towards LID
        ``lid_index``, cached: (hosts, hosts, hops) int32 and (hosts, hosts) int16."""
        if lid_index not in self._cache:
            n = len(self._node_hca)
            src = np.repeat(self._node_hca, n)
            lids = self.tables.base_lid[self._node_hca, 1] + lid_index
            dst = np.tile(lids, n)
            p = self.tables.paths(src, dst)
            hops = (p >= 0).sum(axis=1) - 1        # links - 1 = switches crossed
            self._cache[lid_index] = (p.reshape(n, n, -1), hops.reshape(n, n).astype(np.int16))
        return self._cache[lid_index]

    def _pairs(self, table: tuple[np.ndarray, np.ndarray], src: np.ndarray, dst: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Rows of a host-pair table for messages src → dst (ranks); two ranks of one host
        exchange through its shared-memory link, no switch crossed."""
        a, b = self.rank_node[src], self.rank_node[dst]
        p, h = table[0][a, b], table[1][a, b]
        if self.shm_link is not None:
            same = (a == b) & (src != dst)
            p[same] = -1
            p[same, 0] = self.shm_link[a[same]]
            h[same] = 0
        return p, h

    def paths(self, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray = 0,
              lid: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(paths, switches) of messages src[k] → dst[k] (ranks) of ``size`` bytes (one size,
        or one per message: PARX picks the LID by size and a coin per message). ``lid``: the
        LID indices :meth:`lid_index` gave for this very call, when the caller needs both."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if src.size == 0:
            return np.zeros((0, 1), dtype=np.int32), np.zeros(0, dtype=np.int16)
        if lid is None:
            lid = self.lid_index(src, dst, size)
        if not lid.any():
            return self._pairs(self._all_pairs(0), src, dst)
        width = max(self._all_pairs(int(i))[0].shape[2] for i in np.unique(lid))
        out = np.full((len(src), width), -1, dtype=np.int32)
        hops = np.zeros(len(src), dtype=np.int16)
        for i in np.unique(lid):
            sel = lid == i
            p, h = self._pairs(self._all_pairs(int(i)), src[sel], dst[sel])
            out[sel, :p.shape[1]] = p
            hops[sel] = h
        return out, hops

    def latency(self, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray = 0
                ) -> np.ndarray:
        return self.loggp.latency(self.paths(src, dst, size)[1].astype(np.float64))

    def rail_parts(self, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(message, rail, bytes) parts of messages src[k] → dst[k] under the conf's
        multirail policy (t2hx.flowsim.multirail); one rail: every message whole on rail 0."""
        return shares(self.multirail, src, dst, size)

    def flows(self, src: np.ndarray, dst: np.ndarray, size: int | np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """What the solvers route: (message index, paths, switches, bytes) of every *part*
        of messages src[k] → dst[k] (``size``: one for all or one per message). One rail:
        each message whole, the arrays of :meth:`paths`; several: each part on its rail's
        port and plane (link ids of other planes offset past the first's)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        nbytes = np.broadcast_to(np.asarray(size), src.shape)
        if not self.rails:
            p, h = self.paths(src, dst, size)
            return np.arange(len(src), dtype=np.int64), p, h, nbytes
        msg, rail, part = self.rail_parts(src, dst, nbytes)
        out: list[tuple] = []
        for r in np.unique(rail):
            sel = np.flatnonzero(rail == r)
            p, h = self._rail_paths(int(r), src[msg[sel]], dst[msg[sel]], nbytes[msg[sel]])
            out.append((sel, p, h))
        width = max(p.shape[1] for _, p, _ in out) if out else 1
        paths = np.full((len(msg), width), -1, dtype=np.int32)
        hops = np.zeros(len(msg), dtype=np.int16)
        for sel, p, h in out:
            paths[sel, :p.shape[1]] = p
            hops[sel] = h
        return msg, paths, hops, part

    def _rail_paths(self, r: int, src: np.ndarray, dst: np.ndarray, size: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """Paths of messages on rail r (the first rail is :meth:`paths`, LID choice included;
        the others go to the base LID of the destination's port on that rail)."""
        rail = self.rails[r]
        if rail.tables is self.tables and rail.port == 1:
            return self.paths(src, dst, size)
        key = ("rail", r)
        if key not in self._cache:
            hcas = rail.rank_hca[self._first_rank()]
            n = len(hcas)
            lids = rail.tables.base_lid[hcas, rail.port]
            p = rail.tables.paths(np.repeat(hcas, n), np.tile(lids, n), port=rail.port)
            hops = (p >= 0).sum(axis=1) - 1
            p = np.where(p >= 0, p + rail.offset, -1).astype(np.int32)
            self._cache[key] = (p.reshape(n, n, -1), hops.reshape(n, n).astype(np.int16))
        return self._pairs(self._cache[key], src, dst)

    def _first_rank(self) -> np.ndarray:
        """Each host's first rank (hosts in rank_node order)."""
        first = np.full(len(self._node_hca), -1, dtype=np.int64)
        first[self.rank_node[::-1]] = np.arange(len(self.rank_node))[::-1]
        return first


def shm_rate(system: System) -> float:
    """Bytes/s of a host's shared-memory link: what its ranks' intra-node messages share.
    Open MPI 4.1's vader BTL moves a message of more than its eager limit with one copy by
    the receiver (CMA, ``mca_btl_vader_get_cma``), so each byte is read and written once:
    half the node's memory bandwidth (conf ``nodes.mem_gbs``, docs/modelling.md#ranks-per-node)."""
    from t2hx.flowsim.appmodel import node_of

    return node_of(system.nodes)["mem_gbs"] * 1e9 / 2


# -- construction ---------------------------------------------------------------------------
def read_hostfile(path: str | Path, system: System) -> list[str]:
    """Hostnames in rank order; ``host``, ``host slots=N`` and ``# comments`` accepted."""
    path = Path(path)
    text = read_text(path, WorkloadError, "hostfile",
                     "give a hostfiles/<sys>/<placement>/<n>.txt file")
    known = set(system.hostnames())
    down = set(system.nodes["down"])
    hosts: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name = line.split()[0]
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or name not in known:
            raise WorkloadError(f"line {number}: '{name}' is not a node of system "
                                f"'{system.name}'", file=path, field="hostfile",
                                fix=f"use hostnames of {system.path}")
        if name in down:
            raise WorkloadError(f"line {number}: '{name}' is listed as down", file=path,
                                field="hostfile", fix="pick nodes that are up")
        hosts.append(name)
    if not hosts:
        raise WorkloadError("hostfile names no nodes (zero ranks)", file=path, field="hostfile",
                            fix="list one hostname per rank")
    if len(set(hosts)) != len(hosts):
        dup = next(h for h in hosts if hosts.count(h) > 1)
        raise WorkloadError(f"'{dup}' appears twice (a line per node)", file=path,
                            field="hostfile", fix="list each node once; ranks per node come "
                            "from --ranks-per-node (the study's ranks_per_node)")
    return hosts


def open_network(system: str | Path | System, plane: str, engine: str,
                 hostfile: str | Path | None = None, *, work: str | Path = "work",
                 lmc: int | None = None, dumps: str | Path | None = None,
                 chooser: LidChooser | None = None, quiet: bool = True,
                 hosts: list[str] | None = None,
                 routing_input: RoutingInput | None = None,
                 parx_threshold: int = parx.DEFAULT_THRESHOLD,
                 ranks_per_node: int = 1) -> Network:
    """Build the plane, route it (or read the routing ``dumps``), map the hostfile's ranks:
    ``ranks_per_node`` on each line, in order (Open MPI's ``--map-by ppr:N:node``).

    ``routing_input``: the demand or job file to route with. A network whose MPI picks a
    LID per message (PARX's) chooses LIDs by Table 1 (1a below ``parx_threshold`` bytes,
    1b from it on) unless ``chooser`` says otherwise; other engines default to the base
    LID."""
    sys_ = system if isinstance(system, System) else load_system(system_path(str(system)))
    fabric = build_plane(sys_, plane)
    if dumps is None:
        dumps = ensure_routing(sys_, plane, engine, lmc, Path(work), fabric, quiet,
                               routing_input=routing_input)
    elif routing_input:
        raise WorkloadError(f"a {routing_input.kind} file routes the plane, but routing dumps "
                            "were given too", field="routing", fix="pass one of them, not both")
    tables = load_tables(fabric, dumps)
    if chooser is None:
        chooser = _default_chooser(engine, fabric, tables, sys_, dumps, parx_threshold)
    if ranks_per_node > sys_.nodes["cores"]:
        raise WorkloadError(f"{ranks_per_node} ranks per node, but a node of {sys_.name} has "
                            f"{sys_.nodes['cores']} cores", field="ranks_per_node",
                            fix=f"use at most {sys_.nodes['cores']}, or set nodes.cores in "
                            f"{sys_.path}")
    hosts = [h for h in _hosts(sys_, fabric, plane, hostfile, hosts)
             for _ in range(ranks_per_node)]
    rails = MultiRail.from_conf(sys_.model, sys_.path, tuple(sys_.planes))
    return Network(sys_, plane, engine, fabric, tables, list(hosts),
                   str(hostfile) if hostfile else "-", LogGP.from_conf(sys_.model, engine),
                   chooser,
                   Path(dumps), rails, _rail_planes(sys_, plane, engine, lmc, rails, work,
                                                      quiet))


def _rail_planes(system: System, plane: str, engine: str, lmc: int | None, rails: MultiRail,
                 work: str | Path, quiet: bool) -> dict[str, Tables]:
    """Routing tables of the planes other rails use besides ``plane`` (each routed by the
    same engine under ibsim, cached like the first)."""
    if rails.rails < 2:
        return {}
    out: dict[str, Tables] = {}
    for r in range(rails.rails):
        other = rails.lane(r)[0]
        if other and other != plane and other not in out:
            fabric = build_plane(system, other)
            run = ensure_routing(system, other, engine, lmc, Path(work), fabric, quiet)
            out[other] = load_tables(fabric, run)
    return out


def _default_chooser(engine: str, fabric: Fabric, tables: Tables, system: System,
                     dumps: str | Path, threshold: int) -> LidChooser:
    if not routing_engine(engine).lid_per_message:
        return base_lid
    parx.check_lids(fabric, tables.hca_lids(0), tables.lmc, Path(dumps) / "guid2lid")
    return parx.Table1Chooser(fabric, threshold, system.path)


def _hosts(system: System, fabric: Fabric, plane: str, hostfile: str | Path | None,
           hosts: list[str] | None) -> list[str]:
    if hosts is None:
        if hostfile is None:
            raise WorkloadError("no hostfile", field="hostfile", fix="pass --hostfile FILE")
        hosts = read_hostfile(hostfile, system)
    elif not hosts:
        raise WorkloadError("zero ranks requested", field="hosts", fix="use at least one node")
    else:
        known = set(system.hostnames())
        bad = [h for h in hosts if h not in known]
        if bad:
            raise WorkloadError(f"'{bad[0]}' is not a node of system '{system.name}'",
                                field="hosts", fix=f"use hostnames of {system.path}")
    if not all(h in fabric._index for h in hosts):
        stray = next(h for h in hosts if h not in fabric._index)
        raise ConfError(f"host '{stray}' is not attached to plane '{plane}'", file=system.path,
                        field=f"planes.{plane}", fix="use hosts of that plane")
    return hosts
