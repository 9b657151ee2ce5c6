"""PARX geometry (seed 000 §3.2): quadrants of a 2D HyperX, the quadrant LID policy that
OpenSM receives as guid2lid, the link-removal rules R1–R4, Table 1 (also as the flow model's
LID chooser) and the OpenSM arguments that run our plugin engines.

The C twin is ``parx/table1.c`` (plugin, Open MPI patch); tests check both agree. Geometry:
x = dimension 0, y = dimension 1, left = x < D0/2, top = y < D1/2;
Q0 = top-left, Q1 = bottom-left, Q2 = bottom-right, Q3 = top-right (docs/routing.md#quadrants).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from t2hx.conf import PARX_THRESHOLD
from t2hx.errors import ConfError, RoutingError
from t2hx.fabric.graph import Fabric
from t2hx.routing_engines import PARX_LMC, RoutingInput, routing_engine

LMC = PARX_LMC
NUM_LIDS = 1 << LMC
DEFAULT_THRESHOLD = PARX_THRESHOLD  # bytes; messages below it use Table 1a
SWITCH_LID_OFFSET = 10000
LIDS_PER_QUADRANT = 1000

# Table 1, [destination quadrant][source quadrant] -> valid LID offsets ("a|b" = either).
TABLE1_SMALL: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((1, 3), (1,), (0, 2), (3,)),
    ((1,), (1, 2), (2,), (0, 3)),
    ((1, 3), (2,), (0, 2), (0,)),
    ((3,), (1, 2), (0,), (0, 3)),
)
TABLE1_LARGE: tuple[tuple[tuple[int, ...], ...], ...] = (
    ((0, 2), (0,), (0, 2), (2,)),
    ((0,), (0, 3), (3,), (0, 3)),
    ((1, 3), (3,), (1, 3), (1,)),
    ((2,), (1, 2), (1,), (1, 2)),
)
# Rule R(x+1) removes links with both ends in this half while routing towards LID offset x.
RULE_HALF: tuple[frozenset[int], ...] = (
    frozenset({0, 1}),  # R1, LID0: left
    frozenset({2, 3}),  # R2, LID1: right
    frozenset({0, 3}),  # R3, LID2: top
    frozenset({1, 2}),  # R4, LID3: bottom
)


def lid_quadrant(lid: int) -> int:
    """q = floor(LID / 1000) mod 10 (switch LIDs carry +10000); -1 outside the policy."""
    q = (lid // LIDS_PER_QUADRANT) % 10
    return q if q < 4 else -1


def choices(src_q: int, dst_q: int, large: bool) -> tuple[int, ...]:
    table = TABLE1_LARGE if large else TABLE1_SMALL
    return table[dst_q][src_q]


def select(src_q: int, dst_q: int, size: int, threshold: int = DEFAULT_THRESHOLD,
           coin: int = 0) -> int:
    """The LID offset a message of ``size`` bytes uses; ``coin`` picks among two choices
    (its low bit, as in the C version)."""
    opts = choices(src_q, dst_q, size >= threshold)
    return opts[coin & 1] if len(opts) == 2 else opts[0]


def _table_array(table: tuple[tuple[tuple[int, ...], ...], ...]) -> np.ndarray:
    """[dst_q, src_q, coin bit] -> offset; a single choice fills both coin slots (as
    parx_table1_choices does)."""
    return np.array([[(c[0], c[-1]) for c in row] for row in table], dtype=np.int64)


SMALL_ARRAY = _table_array(TABLE1_SMALL)
LARGE_ARRAY = _table_array(TABLE1_LARGE)


#: Seed of the per-message coins (:func:`message_coins`): fixed, so a simulated case draws
#: the same coins in every run and the run cache's key (the model's code) stays valid.
COIN_SEED = 0x4501
_K_SRC, _K_DST, _K_SEQ, _K_SIZE = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F),
                                   np.uint64(0x165667B19E3779F9), np.uint64(0xD6E8FEB86659FD93))


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays (wrapping arithmetic): every input bit moves
    every output bit, so neighbouring counters give independent-looking coins."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def sender_sequence(src: np.ndarray) -> np.ndarray:
    """Each message's number among its sender's messages in the call (0, 1, ...): the
    counter the Open MPI patch advances per message (one ``static`` coin per process)."""
    src = np.asarray(src, dtype=np.int64)
    if src.size < 2 or np.bincount(src).max() < 2:
        return np.zeros(src.size, dtype=np.int64)        # one message per sender
    order = np.argsort(src, kind="stable")
    s = src[order]
    seq = np.empty(src.size, dtype=np.int64)
    seq[order] = np.arange(src.size) - np.searchsorted(s, s, side="left")
    return seq


def message_coins(src: np.ndarray, dst: np.ndarray, size: np.ndarray | int) -> np.ndarray:
    """A fair coin (0 or 1) per message of one call, where the Open MPI patch draws a fresh
    one per message: a counter-based hash of the sender and destination HCA, the message's
    number among its sender's messages in the call (:func:`sender_sequence`), a digest of
    all the call's messages and :data:`COIN_SEED`. The digest makes a pair's coin differ
    between calls (eBB's rounds, a program's steps) while identical calls (a phase the packet
    engine simulates once for all its repetitions) draw identically, so results depend on the
    simulated messages only, never on call order or caches."""
    s = np.asarray(src, dtype=np.int64).astype(np.uint64)
    d = np.asarray(dst, dtype=np.int64).astype(np.uint64)
    n = np.broadcast_to(np.asarray(size, dtype=np.int64), s.shape).astype(np.uint64)
    pair = s * _K_SRC ^ d * _K_DST
    digest = np.full(1, np.uint64(COIN_SEED)) + _mix(pair + n * _K_SIZE).sum(dtype=np.uint64)
    seq = sender_sequence(src).astype(np.uint64)
    return (_mix(_mix(pair + seq * _K_SEQ) + digest) >> np.uint64(63)).astype(np.int64)


def select_many(src_q: np.ndarray, dst_q: np.ndarray, size: np.ndarray | int,
                threshold: int = DEFAULT_THRESHOLD, coin: np.ndarray | int = 0) -> np.ndarray:
    """:func:`select` over arrays of quadrants (``size``: one for all or one per message)."""
    idx = (np.asarray(dst_q), np.asarray(src_q), np.asarray(coin) & 1)
    if np.ndim(size) == 0:
        return (LARGE_ARRAY if size >= threshold else SMALL_ARRAY)[idx]
    return np.where(np.asarray(size) >= threshold, LARGE_ARRAY[idx], SMALL_ARRAY[idx])


class Table1Chooser:
    """The flow model's LID chooser for PARX (``t2hx.flowsim.network.LidChooser``): Table 1a
    below ``threshold`` bytes, 1b from it on, quadrants of the HCAs from the fabric, and a
    coin per message (:func:`message_coins`) where the table offers two LIDs. It takes a
    whole call at once (``per_message``: one size per message), since the coins depend on
    every message of the call."""

    per_message = True

    def __init__(self, fabric: Fabric, threshold: int = DEFAULT_THRESHOLD,
                 source: object = None) -> None:
        if threshold < 0:
            raise ConfError(f"PARX threshold {threshold} B is negative", file=source,
                            field="parx_threshold", fix="give a message size in bytes, "
                            f"e.g. {DEFAULT_THRESHOLD}")
        quads = node_quadrants(fabric, source)
        self.quadrant = np.array([quads[h] for h in fabric.hcas()], dtype=np.int64)
        self.threshold = int(threshold)

    def __call__(self, src: np.ndarray, dst: np.ndarray, size: np.ndarray | int
                 ) -> np.ndarray:
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        return select_many(self.quadrant[src], self.quadrant[dst], size, self.threshold,
                           message_coins(src, dst, size))


def check_lids(fabric: Fabric, hca_lids: np.ndarray, lmc: int, source: object = None) -> None:
    """Routing tables PARX's Table 1 can be applied to: LMC 2 and every HCA's base LID in its
    quadrant's range (dumps of another engine or LID policy would make Table 1 pick LIDs
    whose paths follow no rule)."""
    if lmc != LMC:
        raise RoutingError(f"these routing tables have LMC {lmc}; PARX's Table 1 needs LMC "
                           f"{LMC}", file=source, fix="use dumps of a parx routing run")
    quads = node_quadrants(fabric, source)
    want = np.array([quads[h] for h in fabric.hcas()], dtype=np.int64)
    got = (np.asarray(hca_lids) // LIDS_PER_QUADRANT) % 10
    bad = np.nonzero(got != want)[0]
    if bad.size:
        h = fabric.hcas()[int(bad[0])]
        raise RoutingError(f"HCA {fabric.nodes[h].name} has base LID "
                           f"{int(hca_lids[bad[0]])}, outside quadrant Q{int(want[bad[0]])}'s "
                           "LIDs (not routed with the PARX LID policy)", file=source,
                           fix="use dumps of a parx routing run (t2hx reroute, fabric route)")


def rule_removes(offset: int, qa: int, qb: int) -> bool:
    half = RULE_HALF[offset]
    return qa in half and qb in half


def hyperx_dims(fabric: Fabric, source: object = None) -> tuple[int, int]:
    """The two dimensions of a PARX-capable HyperX, or one clear error."""
    topo = fabric.topology
    dims = list(topo.get("dims", [])) if topo.get("kind") == "hyperx" else []
    if topo.get("kind") != "hyperx":
        raise ConfError(f"PARX needs a HyperX plane, '{fabric.name}' is "
                        f"{topo.get('kind', 'unknown')}", file=source, field="topology.kind",
                        fix="use parx on the HyperX plane (dfsssp/sar elsewhere)")
    if len(dims) != 2 or any(d % 2 or d < 2 for d in dims):
        raise ConfError(f"PARX needs a 2D HyperX with even dimensions, got dims {dims}",
                        file=source, field="topology.dims",
                        fix="route this plane with dfsssp or sar instead of parx")
    return dims[0], dims[1]


def quadrant(coord: tuple[int, ...], dims: tuple[int, int]) -> int:
    left = coord[0] < dims[0] // 2
    top = coord[1] < dims[1] // 2
    if top:
        return 0 if left else 3
    return 1 if left else 2


def switch_quadrants(fabric: Fabric, source: object = None) -> dict[int, int]:
    """Switch node index -> quadrant."""
    dims = hyperx_dims(fabric, source)
    return {s: quadrant(tuple(fabric.nodes[s].attrs["coord"]), dims) for s in fabric.switches()}


def node_quadrants(fabric: Fabric, source: object = None) -> dict[int, int]:
    """Every node (switch or HCA) -> quadrant; an HCA lies in its switch's quadrant."""
    quads = switch_quadrants(fabric, source)
    out = dict(quads)
    for h in fabric.hcas():
        out[h] = quads[fabric.switch_of(h)]
    return out


def engine_lmc(engine: str, plane_lmc: int) -> int:
    """The LMC a plane routes with under ``engine``: an engine with its own (PARX needs four
    LIDs per port) whatever the plane's (docs/routing.md#lmc-and-lid-policy)."""
    own = routing_engine(engine).lmc
    return plane_lmc if own is None else own


def lid_policy(fabric: Fabric, source: object = None) -> dict[int, int]:
    """Port GUID -> base LID under the PARX policy: HCA ports of quadrant q get the first
    LMC-aligned free LIDs of q*1000 .. q*1000+999 (LID 0 is invalid, so Q0 starts at 4);
    switches get q*1000+10000 onwards."""
    quads = node_quadrants(fabric, source)
    next_hca = {q: max(NUM_LIDS, q * LIDS_PER_QUADRANT) for q in range(4)}
    next_sw = {q: SWITCH_LID_OFFSET + q * LIDS_PER_QUADRANT for q in range(4)}
    lids: dict[int, int] = {}
    for s in fabric.switches():
        q = quads[s]
        lids[fabric.nodes[s].guid] = next_sw[q]
        next_sw[q] += 1
    for h in fabric.hcas():
        q = quads[h]
        for port in range(1, fabric.nodes[h].ports + 1):
            lids[fabric.nodes[h].port_guid(port)] = next_hca[q]
            next_hca[q] += NUM_LIDS
    for q in range(4):
        if next_hca[q] > (q + 1) * LIDS_PER_QUADRANT or \
                next_sw[q] > SWITCH_LID_OFFSET + (q + 1) * LIDS_PER_QUADRANT:
            raise ConfError(f"quadrant Q{q} of '{fabric.name}' has more ports than its 1000 "
                            "LIDs hold (250 HCA ports with LMC 2)", file=source,
                            field="topology", fix="PARX's LID policy limits the system size")
    return lids


def guid2lid_file(fabric: Fabric, lids: dict[int, int]) -> str:
    """OpenSM's guid2lid cache format: one ``0xGUID 0xLID 0xTOP`` entry per port, entries
    separated by blank lines (OpenSM's key/value store reads a non-blank line after an entry
    as a continuation of that entry)."""
    switch_guids = {fabric.nodes[s].guid for s in fabric.switches()}
    entries = []
    for guid, lid in sorted(lids.items(), key=lambda kv: kv[1]):
        top = lid if guid in switch_guids else lid + NUM_LIDS - 1
        entries.append(f"0x{guid:016x} 0x{lid:04x} 0x{top:04x}\n")
    return "\n".join(entries)


def routing_args(fabric: Fabric, engine: str, routing_input: RoutingInput | None = None,
                 max_vls: int | None = None, fallback: bool = False,
                 source: object = None) -> dict:
    """Keyword arguments for ``t2hx.routing.opensm.route`` that run our plugin engines:
    the engine's own LMC and LID policy (PARX's quadrant LIDs), ``qos TRUE`` so OpenSM
    programs the SL2VL maps the engines ask for, the input file as the engine's plugin
    option, and no silent fallback."""
    row = routing_engine(engine)
    options = []
    if routing_input:
        if routing_input.kind != row.reads:
            raise ConfError(f"{engine} reads no {routing_input.kind} file",
                            file=routing_input.path, field="routing input",
                            fix="route with an engine that reads one "
                            "(docs/routing.md#engines)")
        options.append(f"{row.option}={Path(routing_input.path).resolve()}")
    if max_vls:
        options.append(f"max_vls={max_vls}")
    conf: dict[str, object] = {"qos": "TRUE",
                               "routing_engine": engine if fallback else f"{engine},no_fallback"}
    if options:
        conf["event_plugin_options"] = ",".join(options)
    args: dict = {"lmc": row.lmc or 0, "extra_conf": conf, "guid2lid": None}
    if row.lid_policy:
        args["guid2lid"] = lid_policy(fabric, source)
    return args
