"""The packet engine: the workloads' phases as MTU-sized packets on the routed fabric.

:class:`PacketNetwork` answers what a workload asks of any network (t2hx/flowsim/
engines.py): it keeps the flow model's :class:`~t2hx.flowsim.network.Network` for routing
(hosts, LIDs, the LID each message targets, paths from the OpenSM LFTs) and times each
phase in the compiled packet kernel (t2hx/flowsim/packetk.py). Per phase, as bulk.py
defines it: every message starts ``o + k·g`` after the phase start (k: the sender's
earlier messages in that phase); a message above the conf's eager limit first sends a
request to send and waits for the receiver's answer (each a header-only packet, ``o``
after the other's arrival), then its data ``o`` after the answer; it ends ``o`` after its
last byte reached the receiver's memory; the phase ends with its last message, plus its
compute. Phases are independent (the fabric drains between them), so identical phases
are simulated once.

The fabric the kernel sees: every directed cable at the plane's rate and the conf's
propagation delay, with input buffers per VL behind it (switch or HCA sizes), forwarding
after the switch latency (``switch_latency_ns``, the flow model's L) or the HCA's; and per
host two more links for its host interface (t2hx/flowsim/hostif.py). A message travels
on the VL its SL maps to (t2hx/routing/slvl.py): the SL OpenSM gives its path
(t2hx/routing/pathsl.py: DFSSSP's layers), else SL 0; ``sl_of`` overrides both (tests).
docs/modelling.md#packet-engine lists the parameters and their sources.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from collections.abc import Callable

import numpy as np

from t2hx.errors import ConfError, WorkloadError
from t2hx.flowsim import components, hostif, packetk, timeline
from t2hx.flowsim.bulk import Phase, Result, _rank_end, _sorted_by_size
from t2hx.flowsim.network import LogGP, Network
from t2hx.routing import pathsl, slvl

CREDIT = 64
#: Phases simulated in one kernel call (their messages and results held at once).
BATCH = 256
#: Largest group (messages) whose result is kept for groups of equal signature: small
#: groups recur across rounds and combos, large ones practically never.
GROUP_KEEP = 64
#: Seed of the draws that stand in for OpenSM's rand() in DFSSSP's path SLs.
SL_SEED = 26
#: sl_of(src ranks, dst ranks, LID indices) -> SL per message.
SlChooser = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class PacketNetwork:
    net: Network
    sl_of: SlChooser | None = None
    params: dict = field(default_factory=dict)       # conf model.packet (validated)
    stats: dict[str, float] = field(default_factory=dict)   # kernel counters and seconds, summed
    _phases: dict = field(default_factory=dict, repr=False)
    #: simulate each phase as its link-disjoint groups (t2hx/flowsim/components.py); the
    #: same results either way, tests compare them
    decompose: bool = True
    _groups: dict = field(default_factory=dict, repr=False)
    _sl_table: dict = field(default_factory=dict, repr=False)
    _kernel_state: packetk.Kernel | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.params:
            self.params = self.net.system.model["packet"]
        if self.net.rails:
            raise WorkloadError("the packet engine simulates one rail", field="engine",
                                fix="use engine flow for multirail confs")
        p = self.params
        self.sl2vl = self._sl2vl()
        # one SL per rank pair among those OpenSM's answer may draw (a connection asks once)
        self._draw = np.random.default_rng(SL_SEED).integers(
            0, 1 << 30, (self.net.ranks, self.net.ranks))
        self.arb = packetk.Arbitration(p["mtu"], p["header_bytes"],
                                       slvl.parse_table(p["vlarb_high"]),
                                       slvl.parse_table(p["vlarb_low"]), p["high_limit"],
                                       p["input_arbitration"] == "oldest",
                                       p["input_queues"] == "per_output")
        self.links = self._links()

    # -- what a workload sees ----------------------------------------------------------
    @property
    def hosts(self) -> list[str]:
        return self.net.hosts

    @property
    def hostfile(self) -> str:
        return self.net.hostfile

    @property
    def engine(self) -> str:
        return self.net.engine

    @property
    def loggp(self) -> LogGP:
        return self.net.loggp

    @property
    def ranks(self) -> int:
        return self.net.ranks

    @property
    def label(self) -> str:
        return self.net.label

    def __getattr__(self, name: str):
        """Anything else (paths, LID choice, tables) is the routed network's."""
        if name.startswith("_") or name == "net":
            raise AttributeError(name)
        return getattr(self.net, name)

    def run(self, phases: list[Phase], keep_rates: bool = False) -> Result:
        """Times of every phase (and, with ``keep_rates``, each message's time from the
        phase start and its data rate), in bulk.run's message order."""
        ordered = [_sorted_by_size(ph) for ph in phases]
        self._simulate_new(ordered)
        phase_time = np.zeros(len(phases))
        rates, times = [], []
        for i, ph in enumerate(ordered):
            t, rate = self.phase(ph)
            phase_time[i] = (t.max() if len(t) else 0.0) + ph.compute
            rates.append(rate)
            times.append(t)
        result = Result(phase_time)
        if keep_rates:
            result.rates, result.flow_time = rates, times
        result.rank_end = _rank_end(self.ranks, ordered, phase_time)
        return result

    # -- one phase ---------------------------------------------------------------------
    def phase(self, ph: Phase) -> tuple[np.ndarray, np.ndarray]:
        """(time from the phase start to each message's end, its data rate), cached by the
        phase's messages."""
        self._simulate_new([ph])
        return self._phases[_key(ph)]

    def messages(self, ph: Phase) -> tuple[packetk.Messages, np.ndarray, np.ndarray]:
        """The kernel's messages of a phase, and for each phase message the index of its
        data message and its start time."""
        n = len(ph.src)
        if n == 0:
            empty = packetk.Messages(np.zeros(0, np.int64), np.zeros(1, np.int64),
                                     np.zeros(0, np.int32), np.zeros(0, np.int8),
                                     np.zeros(0, np.int32), np.zeros(0))
            return empty, np.zeros(0, np.int64), np.zeros(0)
        o, g = self.loggp.overhead, self.loggp.gap
        size = ph.size.astype(np.int64)
        start = o + self.loggp.send_extra + g * _injection_order(ph.src)
        rndv = size > self.params["eager_bytes"]
        k = np.flatnonzero(rndv)
        # kernel messages: every eager message, then RTS, CTS and data of each rendezvous
        src = np.concatenate([ph.src, ph.src[k], ph.dst[k], ph.src[k]])
        dst = np.concatenate([ph.dst, ph.dst[k], ph.src[k], ph.dst[k]])
        nbytes = np.concatenate([np.where(rndv, 0, size), np.zeros(2 * len(k), np.int64),
                                 size[k]])
        lid_size = np.concatenate([size, size[k], size[k], size[k]])
        m = len(k)
        dep = np.full(len(src), -1, np.int32)
        dep[n + m:n + 2 * m] = n + np.arange(m)
        dep[n + 2 * m:] = n + m + np.arange(m)
        delay = np.concatenate([start, start[k], np.full(2 * m, o)])
        data = np.arange(n, dtype=np.int64)
        data[k] = n + 2 * m + np.arange(m)
        # kernel message 0..n-1 of a rendezvous message is its RTS's twin: drop it
        keep = np.ones(len(src), bool)
        keep[k] = False
        remap = np.cumsum(keep) - 1
        src, dst, nbytes, lid_size = src[keep], dst[keep], nbytes[keep], lid_size[keep]
        dep, delay = dep[keep], delay[keep]
        dep = np.where(dep >= 0, remap[np.maximum(dep, 0)], -1).astype(np.int32)
        data = remap[data]
        return self._routed(src, dst, nbytes, lid_size, dep, delay), data, start

    def run_program(self, prog: timeline.Program) -> np.ndarray:
        """Each rank's end of one call (t2hx/flowsim/timeline.py) in the packet engine: a
        message leaves its sender's overhead after it is ready (after the receiver's and the
        sender's overhead when it waits on a delivery), and a rank ends one receive overhead
        after its last delivery."""
        return timeline.rank_ends(*self.program_completions(prog))

    def program_completions(self, prog: timeline.Program) -> tuple[timeline.Wire, np.ndarray]:
        """The program's wire messages and when each completes the operations waiting on
        it: one receive overhead after its delivery."""
        wire = timeline.compile(prog, self.params["eager_bytes"])
        if len(wire.src) == 0:
            return wire, np.zeros(0)
        o, extra = self.loggp.overhead, self.loggp.send_extra
        waits = np.diff(wire.dep_off) > 0
        delay = (np.where(waits, 2 * o, o) + np.where(wire.kind != timeline.CTS, extra, 0.0)
                 + wire.compute)
        delay = np.where(wire.local, wire.compute, delay)    # a rank's work, a join: no link
        net = ~wire.local
        msgs = _joins(self._routed(wire.src[net], wire.dst[net], wire.size[net],
                                   wire.lid_size[net], wire.dep, delay, wire.dep_off), net)
        _, end = self._kernel(msgs)
        return wire, end + o

    def _kernel(self, msgs: packetk.Messages) -> tuple[np.ndarray, np.ndarray]:
        """(first injection, delivery) of every message; the kernel's counters added up."""
        return self._kernel_batch([msgs])[0]

    def _kernel_batch(self, batch: list[packetk.Messages]
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Independent phases in one kernel call, on the kernel state this engine keeps
        for its fabric; the counters of all added up."""
        if not batch:
            return []
        if self._kernel_state is None:
            self._kernel_state = packetk.Kernel(self.links, self.arb)
        clock, cpu = time.perf_counter(), time.process_time()
        out = self._kernel_state.run(batch)
        counters: dict[str, float] = {"kernel_s": time.perf_counter() - clock,
                                      "kernel_cpu_s": time.process_time() - cpu,
                                      "phases": len(batch)}
        for _, _, counts in out:
            for name, count in counts.items():
                counters[name] = counters.get(name, 0) + count
        for name, value in counters.items():
            self.stats[name] = self.stats.get(name, 0) + value
        return [(first, end) for first, end, _ in out]

    def _simulate_new(self, phases: list[Phase]) -> None:
        """Simulates the phases not in the cache (each distinct one once), up to
        :data:`BATCH` to a kernel call."""
        todo: dict[tuple, Phase] = {}
        for ph in phases:
            key = _key(ph)
            if key not in self._phases and key not in todo:
                todo[key] = ph
        keys, new = list(todo), list(todo.values())
        for i in range(0, len(new), BATCH):
            for key, result in zip(keys[i:i + BATCH], self._simulate(new[i:i + BATCH])):
                self._phases[key] = result

    def _simulate(self, phases: list[Phase]) -> list[tuple[np.ndarray, np.ndarray]]:
        """(time from the phase start to each message's end, its data rate) per phase."""
        busy = [ph for ph in phases if len(ph.src)]
        built = [self.messages(ph) for ph in busy]
        batch = [msgs for msgs, _, _ in built]
        times = iter(self._grouped(batch) if self.decompose else self._kernel_batch(batch))
        shapes = iter(built)
        results = []
        for ph in phases:
            if not len(ph.src):
                results.append((np.zeros(0), np.zeros(0)))
                continue
            (first, end), (_, data, _) = next(times), next(shapes)
            t = end[data] + self.loggp.overhead
            with np.errstate(divide="ignore", invalid="ignore"):
                rate = np.where(ph.size > 0, ph.size / (end[data] - first[data]), np.inf)
            results.append((t, rate))
        return results

    def _grouped(self, batch: list[packetk.Messages]) -> list[tuple[np.ndarray, np.ndarray]]:
        """(first injection, delivery) of every message of independent phases, each phase
        simulated as its groups (t2hx/flowsim/components.py), a group equal to one already
        simulated not again."""
        if "classes" not in self._sl_table:
            self._sl_table["classes"] = components.link_classes(self.links)
        classes, pair = self._sl_table["classes"], self.links.pair
        plans, todo, fresh = [], {}, 0
        for msgs in batch:
            plan = []
            for idx in components.split(msgs, pair):
                group = msgs if len(idx) == len(msgs.bytes) else components.subset(msgs, idx)
                if len(idx) <= GROUP_KEEP:
                    key: object = components.signature(group, classes, pair)
                else:
                    key, fresh = ("once", fresh), fresh + 1
                if key not in self._groups and key not in todo:
                    todo[key] = group
                plan.append((idx, key))
            plans.append(plan)
        done = dict(zip(todo, self._kernel_batch(list(todo.values()))))
        self.stats["groups"] = self.stats.get("groups", 0) + sum(map(len, plans))
        self.stats["groups_simulated"] = self.stats.get("groups_simulated", 0) + len(todo)
        out = []
        for msgs, plan in zip(batch, plans):
            first, end = np.empty(len(msgs.bytes)), np.empty(len(msgs.bytes))
            for idx, key in plan:
                first[idx], end[idx] = done[key] if key in done else self._groups[key]
            out.append((first, end))
        for key, result in done.items():
            if not isinstance(key, tuple):
                self._groups[key] = result
        return out

    def _routed(self, src: np.ndarray, dst: np.ndarray, nbytes: np.ndarray,
                lid_size: np.ndarray, dep: np.ndarray, delay: np.ndarray,
                dep_off: np.ndarray | None = None) -> packetk.Messages:
        net = self.net
        # one LID draw per message, shared by its path and its VL
        lid = net.lid_index(src, dst, lid_size)
        paths, _ = net.paths(src, dst, lid_size, lid)
        h, links = net.ranks, net.tables.links
        full = np.concatenate([(links + src)[:, None], paths, (links + h + dst)[:, None]],
                              axis=1)
        # the padding (-1) of a shorter path sits before the ejection link: drop it
        valid = full >= 0
        counts = valid.sum(axis=1)
        off = np.zeros(len(src) + 1, np.int64)
        np.cumsum(counts, out=off[1:])
        route = full[valid].astype(np.int32)
        return packetk.Messages(nbytes.astype(np.int64), off, route,
                                self._vls(src, dst, lid).astype(np.int8), dep, delay,
                                dep_off)

    # -- VLs ---------------------------------------------------------------------------
    def _path_sl(self) -> pathsl.PathSL | None:
        """The routing engine's SL table (read, or asked of OpenSM, on first use)."""
        if "table" not in self._sl_table:
            self._sl_table["table"] = (pathsl.path_sl(self.net.tables, self.net.dumps,
                                                      self.net.engine)
                                       if self.net.dumps else None)
        return self._sl_table["table"]

    def _sl2vl(self) -> np.ndarray:
        dumped = slvl.read_sl2vl(self.net.dumps) if self.net.dumps else None
        if dumped is not None:
            return dumped
        return np.array([int(x) for x in self.params["sl2vl"].split(",")], np.int64)

    def _vls(self, src: np.ndarray, dst: np.ndarray, lid: np.ndarray) -> np.ndarray:
        net = self.net
        if self.sl_of is not None:
            sl = np.asarray(self.sl_of(src, dst, lid), np.int64)
        elif (path_sl := self._path_sl()) is not None:
            t = net.tables
            slid = t.base_lid[net.rank_hca[src], 1]
            dlid = t.base_lid[net.rank_hca[dst], 1] + lid
            sl = path_sl.sl(slid, dlid, self._draw[src, dst])
        else:
            sl = np.zeros(len(src), np.int64)
        return self.sl2vl[sl]

    # -- the fabric --------------------------------------------------------------------
    def _links(self) -> packetk.Links:
        net, p = self.net, self.params
        t = net.tables
        nodes = net.fabric.nodes
        is_switch = np.array([n.kind == "switch" for n in nodes])
        links, h = t.links, net.ranks
        sw_cap = p["buffer_bytes"] // CREDIT
        hca_cap = p["hca_buffer_bytes"] // CREDIT
        if max(sw_cap, hca_cap) * CREDIT < p["mtu"] + p["header_bytes"]:
            raise WorkloadError("a buffer smaller than one packet", field="model.packet",
                                fix="make buffer_bytes and hca_buffer_bytes at least "
                                "mtu + header_bytes")
        into_switch = is_switch[t.link_dst]
        switch_ns = net.loggp.hop
        hca_ns = p["hca_ns"] * 1e-9
        host = self._host(float(net.capacity[t.link_of[net.rank_hca, 1]].min()))
        rate = np.concatenate([net.capacity, np.full(h, host.read_rate),
                               np.full(h, host.write_rate)])
        lat = np.concatenate([np.full(links, p["cable_ns"] * 1e-9), np.zeros(2 * h)])
        fwd = np.concatenate([np.where(into_switch, switch_ns, hca_ns), np.full(h, hca_ns),
                              np.zeros(h)])
        hdr = np.concatenate([np.full(links, p["header_bytes"]), np.zeros(2 * h)])
        cap = np.concatenate([np.where(into_switch, sw_cap, hca_cap), np.full(h, hca_cap),
                              np.full(h, -1)])
        pair = np.concatenate([np.full(links, -1), links + h + np.arange(h), np.full(h, -1)])
        debt = np.concatenate([np.zeros(links),
                               np.full(h, host.request_bytes_per_byte / host.raw_rate),
                               np.zeros(h)])
        # switch output buffers (at the near end of a link out of a switch)
        from_switch = is_switch[t.link_src]
        ob = p["output_buffer_bytes"] // CREDIT
        if ob and ob * CREDIT <= p["mtu"] + p["header_bytes"]:
            raise WorkloadError("an output buffer of one packet or less",
                                field="model.packet.output_buffer_bytes",
                                fix="0 (none), or more than mtu + header_bytes")
        obuf = np.concatenate([np.where(from_switch, ob, 0), np.zeros(2 * h)])
        xbar = p["crossbar_gbps"] * 1e9 / 8
        xrate = np.where(obuf > 0, xbar if xbar > 0 else rate, rate)
        return packetk.Links(rate, lat, fwd, hdr.astype(np.int32), cap.astype(np.int32),
                             pair.astype(np.int32), debt, obuf.astype(np.int32), xrate)

    def _host(self, link_rate: float) -> hostif.HostInterface:
        hca = self.params["hca"]
        if not hca.get("interface"):
            raise ConfError("the packet engine needs the HCA's host interface",
                            file=self.net.system.path, field="model.packet.hca",
                            fix="describe it, e.g. model: {packet: {hca: {interface: pcie, "
                            "pcie_gen: 4, lanes: 16}}}, or hca: {interface: link}")
        if hca["interface"] == "link":
            return hostif.unlimited(link_rate)
        for key in ("pcie_gen", "lanes"):
            if hca.get(key) is None:
                raise ConfError("a PCIe host interface needs its generation and lanes",
                                file=self.net.system.path, field=f"model.packet.hca.{key}",
                                fix="e.g. hca: {interface: pcie, pcie_gen: 2, lanes: 8}")
        return hostif.pcie(hca["pcie_gen"], hca["lanes"], hca["max_payload"],
                           hca["max_read_request"], hca["completion_bytes"],
                           hca["tlps_per_dllp"])


def _joins(routed: packetk.Messages, net: np.ndarray) -> packetk.Messages:
    """All messages from the routed ones (``net``): the others take no link, the kernel's
    joins."""
    if net.all():
        return routed
    links = np.zeros(len(net), np.int64)
    links[net] = np.diff(routed.route_off)
    off = np.zeros(len(net) + 1, np.int64)
    np.cumsum(links, out=off[1:])
    nbytes = np.zeros(len(net), np.int64)
    nbytes[net] = routed.bytes
    vl = np.zeros(len(net), np.int8)
    vl[net] = routed.vl
    return packetk.Messages(nbytes, off, routed.route, vl, routed.dep, routed.delay,
                            routed.dep_off)


def _key(ph: Phase) -> tuple[bytes, bytes, bytes]:
    """What a phase's simulation depends on: its messages (ordered by size)."""
    return ph.src.tobytes(), ph.dst.tobytes(), ph.size.tobytes()


def _injection_order(src: np.ndarray) -> np.ndarray:
    """How many messages each message's sender injected before it (bulk.py's g term)."""
    order = np.argsort(src, kind="stable")
    s = src[order]
    first = np.searchsorted(s, s, side="left")
    k = np.empty(len(s))
    k[order] = np.arange(len(s)) - first
    return k


def open_packet(net: Network, sl_of: SlChooser | None = None,
                params: dict | None = None) -> PacketNetwork:
    """The packet engine on a routed network; ``params`` overrides the conf's
    ``model.packet`` fields (tests, benches)."""
    merged = dict(net.system.model["packet"])
    for key, value in (params or {}).items():
        merged[key] = {**merged[key], **value} if isinstance(value, dict) else value
    return PacketNetwork(net, sl_of, merged)
