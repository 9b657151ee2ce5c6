"""The one fabric graph type every topology generator produces.

A fabric is switches and HCAs (``Node``), each with numbered ports (1-based, as in
InfiniBand), and cables joining two ports. Generators fill it; the netfile writer, the
routing-table loader, the analysis and the flow model only read it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal
from collections.abc import Callable, Iterable

from t2hx.errors import ConfError

if TYPE_CHECKING:
    import numpy as np

Kind = Literal["switch", "hca"]

#: GUID prefixes keep switch and HCA GUIDs apart and recognisable in dumps.
SWITCH_GUID_BASE = 0x0002C90000000000
HCA_GUID_BASE = 0x0002C90100000000
#: An HCA reserves this many GUIDs (node GUID + one per port), as ibsim does.
HCA_GUID_STRIDE = 0x10


@dataclass
class Node:
    name: str
    kind: Kind
    ports: int
    guid: int
    attrs: dict = field(default_factory=dict)

    def port_guid(self, port: int) -> int:
        """Port GUID as ibsim assigns it (switches: the node GUID; HCAs: node GUID + port)."""
        return self.guid if self.kind == "switch" else self.guid + port


@dataclass(frozen=True)
class Cable:
    a: int
    pa: int
    b: int
    pb: int
    gbps: float = 32.0


@dataclass
class Fabric:
    """Switches, HCAs and cables of one network plane."""

    name: str
    topology: dict
    nodes: list[Node] = field(default_factory=list)
    cables: list[Cable] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _used: dict[int, set[int]] = field(default_factory=dict, repr=False)
    _counts: dict[str, int] = field(default_factory=dict, repr=False)

    # -- construction -------------------------------------------------------------------
    def add_node(self, name: str, kind: Kind, ports: int, **attrs: object) -> int:
        if name in self._index:
            raise ConfError(f"duplicate node name '{name}'", field="nodes",
                            fix="give every switch and host a unique name")
        count = self._counts.get(kind, 0)
        self._counts[kind] = count + 1
        guid = (SWITCH_GUID_BASE + count + 1 if kind == "switch"
                else HCA_GUID_BASE + HCA_GUID_STRIDE * (count + 1))
        self.nodes.append(Node(name, kind, ports, guid, dict(attrs)))
        self._index[name] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def connect(self, a: int, b: int, gbps: float = 32.0) -> Cable:
        """Cable the lowest free ports of nodes a and b."""
        cable = Cable(a, self._free_port(a), b, self._free_port(b), gbps)
        self.cables.append(cable)
        self._used.setdefault(a, set()).add(cable.pa)
        self._used.setdefault(b, set()).add(cable.pb)
        return cable

    def _free_port(self, i: int) -> int:
        used = self._used.get(i, set())
        for port in range(1, self.nodes[i].ports + 1):
            if port not in used:
                return port
        node = self.nodes[i]
        raise ConfError(f"{node.kind} '{node.name}' has more links than its {node.ports} ports",
                        field="topology.switch_ports",
                        fix="raise the port count or lower the link count")

    def remove_cables(self, doomed: Iterable[Cable]) -> None:
        gone = set(doomed)
        self.cables = [c for c in self.cables if c not in gone]
        self._used = {}
        for c in self.cables:
            self._used.setdefault(c.a, set()).add(c.pa)
            self._used.setdefault(c.b, set()).add(c.pb)

    # -- queries ------------------------------------------------------------------------
    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise ConfError(f"unknown node '{name}'", field="nodes",
                            fix="use a host or switch name of this fabric") from None

    def switches(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.kind == "switch"]

    def hcas(self) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.kind == "hca"]

    def hosts(self) -> list[str]:
        return [self.nodes[i].name for i in self.hcas()]

    def inter_switch_cables(self) -> list[Cable]:
        sw = {i for i in self.switches()}
        return [c for c in self.cables if c.a in sw and c.b in sw]

    def neighbours(self) -> list[list[int]]:
        adj: list[list[int]] = [[] for _ in self.nodes]
        for c in self.cables:
            adj[c.a].append(c.b)
            adj[c.b].append(c.a)
        return adj

    def switch_of(self, hca: int) -> int:
        """The switch an HCA is cabled to (its first port's peer)."""
        for c in self.cables:
            if c.a == hca:
                return c.b
            if c.b == hca:
                return c.a
        raise ConfError(f"host '{self.nodes[hca].name}' has no cable", field="topology",
                        fix="connect every host to a switch")

    def hop_matrix(self, keep: Callable[[Cable], bool] | None = None) -> np.ndarray:
        """Switch-to-switch hop counts (BFS), indexed by position in ``switches()``; only
        over the inter-switch cables ``keep`` accepts (all by default); -1 = unreachable."""
        import numpy as np   # here: loading a system conf builds no matrix (CLI start-up)

        sw = self.switches()
        pos = {s: k for k, s in enumerate(sw)}
        adj: list[list[int]] = [[] for _ in sw]
        for c in self.inter_switch_cables():
            if keep is not None and not keep(c):
                continue
            adj[pos[c.a]].append(pos[c.b])
            adj[pos[c.b]].append(pos[c.a])
        dist = np.full((len(sw), len(sw)), -1, dtype=np.int32)
        for s in range(len(sw)):
            dist[s, s] = 0
            queue = deque([s])
            while queue:
                u = queue.popleft()
                for v in adj[u]:
                    if dist[s, v] < 0:
                        dist[s, v] = dist[s, u] + 1
                        queue.append(v)
        return dist

    def subnets(self) -> int:
        """Connected components of the switch graph: HCAs do not forward, so switches that
        meet only through multi-port HCAs form separate subnets, each needing its own SM."""
        switches = set(self.switches())
        adj: dict[int, list[int]] = {s: [] for s in switches}
        for c in self.cables:
            if c.a in switches and c.b in switches:
                adj[c.a].append(c.b)
                adj[c.b].append(c.a)
        seen: set[int] = set()
        parts = 0
        for start in switches:
            if start in seen:
                continue
            parts += 1
            seen.add(start)
            queue = deque([start])
            while queue:
                for v in adj[queue.popleft()]:
                    if v not in seen:
                        seen.add(v)
                        queue.append(v)
        return parts

    def validate(self, source: object = None) -> None:
        """Ports in range and used once; the fabric connected. Raises ConfError."""
        seen: set[tuple[int, int]] = set()
        for c in self.cables:
            for node, port in ((c.a, c.pa), (c.b, c.pb)):
                n = self.nodes[node]
                if not 1 <= port <= n.ports:
                    raise ConfError(f"cable uses port {port} of '{n.name}' which has "
                                    f"{n.ports} ports", file=source, field="topology",
                                    fix="use a port number within the switch's port count")
                if (node, port) in seen:
                    raise ConfError(f"port {port} of '{n.name}' is cabled twice", file=source,
                                    field="topology", fix="give every cable its own port")
                seen.add((node, port))
        self._check_connected(source)

    def _check_connected(self, source: object) -> None:
        if not self.nodes:
            raise ConfError("fabric has no nodes", file=source, field="topology",
                            fix="describe at least one switch and one host")
        adj = self.neighbours()
        reached = {0}
        queue = deque([0])
        while queue:
            for v in adj[queue.popleft()]:
                if v not in reached:
                    reached.add(v)
                    queue.append(v)
        if len(reached) != len(self.nodes):
            lost = next(self.nodes[i].name for i in range(len(self.nodes)) if i not in reached)
            raise ConfError(f"fabric '{self.name}' is disconnected ('{lost}' cannot be reached)",
                            file=source, field="missing_cables",
                            fix="remove fewer cables or add links so every node is reachable")
