"""Seed 004 §3.3's property-preserving network update (Def 6, Fig 6), checked on tables the
real OpenSM and our plugin routed.

The protocol's network state has two LIDs per port (LMC=1): base LIDs routed by SAR on VLs
0..n-2, high LIDs by Up*/Down* on VL n-1, and packets never mix the two. A re-route moves
every reliable connection to the high LIDs (phase 2), rewrites the base LIDs' LFT blocks
(phase 3), and moves them back (phase 4). :func:`check_update` checks Def 6 on a pair of
states built by :func:`compose`:

1. both states deadlock-free: no loop or black hole towards any HCA LID, and per VL an
   acyclic channel dependency graph (CDG) of every leaf-to-HCA path with its VL. Phase 2
   runs S's base paths beside the high ones, phase 4 S''s, so these two CDGs are those of
   the mixed phases too;
2. per-flow consistency: phase 3's live flows use high LIDs only, so no LFT block OpenSM
   sends may change a high LID's entry; every intermediate state then forwards each live
   packet as S and S' both do;
3. SAR leaves VL n-1 to Up*/Down* (its layers fit in n-1 VLs).

OpenSM 3.3.23 sends the blocks that changed (``osm_ucast_mgr.c``: ``set_lft_block`` skips a
block equal to the switch's current one) block by block, each block to every switch in the
order of its switch table (``ucast_mgr_pipeline_fwd_tbl`` over ``sw_guid_tbl``, a cl_qmap
keyed by the node GUID in network byte order, so on a little-endian host by the
byte-reversed GUID). :func:`mads` lists them in that order. Without the protocol traffic
stays on the base LIDs while they are rewritten: :func:`naive` counts the intermediate
states with a loop and the block rounds whose mixed CDG has a cycle (packets keep the VL of
the old path, as a connection keeps its SL). docs/history.md#the-network-update.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from t2hx.errors import RoutingError
from t2hx.routing.lft import Tables

#: LFT entries per LinearForwardingTable MAD (IB_SMP_DATA_SIZE).
BLOCK = 64
NO_VL = 255


@dataclass
class State:
    """One network state in the LMC=1 LID space of ``tables`` (its ``lft`` is the state's)."""
    tables: Tables
    vl: np.ndarray               # (nodes, max_lid + 1) VL from a leaf towards a LID; 255 none
    layers: int                  # VLs SAR's base paths use


@dataclass
class Update:
    """What :func:`check_update` found for one re-route S -> S'."""
    mads: int                    # LFT blocks OpenSM sends
    rounds: int                  # block numbers among them (phase 3's rounds)
    switches: int                # switches that get at least one block
    high_changed: int            # MADs changing a high LID's entry (Def 6.2: must be 0)
    cycles: dict[str, list[int]] = field(default_factory=dict)   # state -> VLs with a cycle
    unreachable: dict[str, int] = field(default_factory=dict)    # state -> LIDs not reached
    layers: tuple[int, int] = (0, 0)   # SAR's VLs in S and S'
    top_vl: int = 0                    # the high LIDs' VL
    paths: int = 0               # leaf-to-base-LID paths
    moved: int = 0               # of them, paths S' changes: without the protocol each is a
    #                              flow whose route changes under it (out-of-order delivery)
    naive_loop_states: int | None = None    # without the protocol (naive())
    naive_cycle_rounds: int | None = None

    @property
    def preserving(self) -> bool:
        """Def 6 holds for this re-route under the protocol."""
        return (self.high_changed == 0 and not any(self.cycles.values())
                and not any(self.unreachable.values()) and max(self.layers) <= self.top_vl)


def compose(high: Tables, sar: Tables, layers: np.ndarray, top_vl: int) -> State:
    """The protocol's state: ``high`` is an LMC=1 routing by Up*/Down* (its high LIDs and
    every switch LID stay), ``sar`` an LMC=0 routing whose entries towards each HCA become
    that HCA's base LID's, ``layers`` SAR's layer per (switch, SAR LID) (px-sar's)."""
    if high.lmc != 1:
        raise RoutingError(f"the high LIDs need an LMC=1 routing, not LMC={high.lmc}",
                           field="lmc", fix="route Up*/Down* with --lmc 1")
    base = high.hca_lids(0)
    theirs = sar.hca_lids(0)
    lft = high.lft.copy()
    lft[:, base] = sar.lft[:, theirs]
    vl = np.full(high.lft.shape, NO_VL, dtype=np.uint8)
    vl[:, base] = layers[:, theirs]
    vl[:, high.hca_lids(1)] = top_vl
    used = layers[:, theirs][layers[:, theirs] != NO_VL]
    n = int(used.max()) + 1 if used.size else 0
    return State(dataclasses.replace(high, lft=lft), vl, n)


def mads(old: np.ndarray, new: np.ndarray, tables: Tables) -> list[tuple[int, int]]:
    """(block, switch node) of every LFT block that differs, in OpenSM's sending order."""
    switches = sorted((n for n in range(len(tables.fabric.nodes))
                       if tables.fabric.nodes[n].kind == "switch"),
                      key=lambda n: int.from_bytes(
                          tables.fabric.nodes[n].guid.to_bytes(8, "big"), "little"))
    width = old.shape[1]
    blocks = -(-width // BLOCK)
    pad = blocks * BLOCK - width
    o = np.pad(old[switches], ((0, 0), (0, pad))).reshape(len(switches), blocks, BLOCK)
    n = np.pad(new[switches], ((0, 0), (0, pad))).reshape(len(switches), blocks, BLOCK)
    changed = (o != n).any(axis=2)                 # (switch, block)
    return [(b, switches[k]) for b in range(blocks) for k in np.flatnonzero(changed[:, b])]


#: Hops after which a walk counts as a loop (as t2hx.routing.lft.Tables.paths).
MAX_HOPS = 64


def _walk(tables: Tables, lft: np.ndarray, src: np.ndarray, lid: np.ndarray,
          lane: np.ndarray | None = None, other: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """Walk from switch ``src[i]`` towards ``lid[i]``: (reached per pair, and with ``lane``
    the channel dependencies ``(lane, link, next link)`` of the walks as a 3-row array).
    With ``other`` tables instead of ``reached``: whether ``other`` differs at a switch on
    the path (the path moves when the tables change)."""
    node = src.copy()
    live = np.ones(len(src), dtype=bool)
    reached = np.zeros(len(src), dtype=bool)
    moved = np.zeros(len(src), dtype=bool)
    target = tables.lid_node[lid]
    prev = np.full(len(src), -1, dtype=np.int64)
    deps = []
    for _ in range(MAX_HOPS):
        if not live.any():
            break
        port = lft[node, lid]
        if other is not None:
            moved |= live & (other[node, lid] != port)
        link = np.where(live & (port > 0), tables.link_of[node, np.maximum(port, 0)], -1)
        if lane is not None:
            d = (prev >= 0) & (link >= 0)
            deps.append(np.stack([lane[d], prev[d], link[d]]))
        nxt = tables.link_dst[np.maximum(link, 0)]
        arrived = (link >= 0) & (nxt == target)
        reached |= arrived
        live &= (link >= 0) & ~arrived
        node = np.where(live, nxt, node)
        prev = np.where(live, link, -1)
    if other is not None:
        reached = moved
    return reached, (np.concatenate(deps, axis=1) if deps else np.zeros((3, 0), np.int64))


def leaves(tables: Tables) -> np.ndarray:
    """The switches HCAs hang from (every path starts at one)."""
    f = tables.fabric
    return np.unique(tables.link_dst[tables.link_of[f.hcas(), 1]])


def unreachable(tables: Tables, lft: np.ndarray, lids: np.ndarray,
                src: np.ndarray | None = None) -> np.ndarray:
    """The LIDs of ``lids`` some leaf (of ``src``, default all) does not reach (a loop or a
    missing entry)."""
    src = leaves(tables) if src is None else src
    s, d = np.repeat(src, len(lids)), np.tile(lids, len(src))
    ok, _ = _walk(tables, lft, s, d)
    return np.unique(d[~ok])


def cyclic_vls(tables: Tables, lft: np.ndarray, src: np.ndarray, lid: np.ndarray,
               lane: np.ndarray) -> list[int]:
    """The VLs whose channel dependency graph has a cycle, over the paths from switch
    ``src[i]`` to ``lid[i]``, each on VL ``lane[i]`` all the way (SL i -> VL i on every
    hop; 255: no path, left out)."""
    keep = lane != NO_VL
    _, deps = _walk(tables, lft, src[keep], lid[keep], lane[keep].astype(np.int64))
    n = tables.links
    out = []
    for v in np.unique(deps[0]):
        a, b = deps[1:, deps[0] == v]
        g = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
        _, label = connected_components(g, directed=True, connection="strong")
        if np.bincount(label).max() > 1:
            out.append(int(v))
    return out


def state_cycles(tables: Tables, lft: np.ndarray, vl: np.ndarray, lids: np.ndarray
                 ) -> list[int]:
    """:func:`cyclic_vls` over every path from a leaf to ``lids`` on the VL ``vl[leaf, lid]``."""
    src = leaves(tables)
    s, d = np.repeat(src, len(lids)), np.tile(lids, len(src))
    return cyclic_vls(tables, lft, s, d, vl[s, d])


def check_update(old: State, new: State, naive_too: bool = False) -> Update:
    """Def 6 for the re-route ``old`` -> ``new`` (module docstring)."""
    t = old.tables
    base, high = t.hca_lids(0), t.hca_lids(1)
    lids = np.concatenate([base, high])
    sent = mads(t.lft, new.tables.lft, t)
    is_high = np.zeros(t.lft.shape[1], dtype=bool)
    is_high[high] = True
    touched = sum(1 for b, s in sent if (is_high[b * BLOCK:(b + 1) * BLOCK] &
                                          (t.lft[s, b * BLOCK:(b + 1) * BLOCK] !=
                                           new.tables.lft[s, b * BLOCK:(b + 1) * BLOCK])).any())
    top = int(old.vl[:, high].max()) if len(high) else 0
    out = Update(mads=len(sent), rounds=len({b for b, _ in sent}),
                 switches=len({s for _, s in sent}), high_changed=touched,
                 layers=(old.layers, new.layers), top_vl=top)
    src = leaves(t)
    s, d = np.repeat(src, len(base)), np.tile(base, len(src))
    out.paths = len(s)
    out.moved = int(_walk(t, t.lft, s, d, other=new.tables.lft)[0].sum())
    for name, state in (("S", old), ("S'", new)):
        out.unreachable[name] = len(unreachable(state.tables, state.tables.lft, lids))
        out.cycles[name] = state_cycles(state.tables, state.tables.lft, state.vl, lids)
    if naive_too:
        out.naive_loop_states, out.naive_cycle_rounds = naive(old, new, sent)
    return out


def naive(old: State, new: State, sent: list[tuple[int, int]]) -> tuple[int, int]:
    """Without the protocol: the intermediate states (after each MAD) in which a base LID
    is not reached from some leaf, and the block rounds after which the mixed tables' CDG
    has a cycle on some VL (paths keep S's VLs)."""
    t = old.tables
    lft = t.lft.copy()
    base = t.hca_lids(0)
    is_base = np.zeros(lft.shape[1], dtype=bool)
    is_base[base] = True
    broken: set[int] = set()
    src = leaves(t)
    loop_states = cycle_rounds = 0
    for k, (b, s) in enumerate(sent):
        cols = np.arange(b * BLOCK, min((b + 1) * BLOCK, lft.shape[1]))
        changed = cols[(lft[s, cols] != new.tables.lft[s, cols]) & is_base[cols]]
        lft[s, cols] = new.tables.lft[s, cols]
        if len(changed):               # only a LID whose entries changed can change status
            broken -= set(int(x) for x in changed)
            broken |= set(int(x) for x in unreachable(t, lft, changed, src))
        loop_states += bool(broken)
        if k + 1 == len(sent) or sent[k + 1][0] != b:      # a block round is complete
            cycle_rounds += bool(state_cycles(t, lft, old.vl, base))
    return loop_states, cycle_rounds
