"""The rooted collectives (Gather, Scatter, Bcast, Reduce) as per-rank programs
(t2hx/flowsim/timeline.py): what every rank of Open MPI's algorithms posts, in which order,
and what it waits for.

Read from Open MPI v1.10.7 ``ompi/mca/coll/tuned/coll_tuned_{gather,scatter,bcast,reduce}.c``
and ``coll_tuned_topo.c`` and v4.1.4 ``ompi/mca/coll/base/coll_base_*.c`` (docs/modelling.md
#per-rank-timelines cites each function):

* gather ``linear`` (basic_linear): every rank sends its block with one blocking send; the
  root receives with blocking receives in rank order, so a rendezvous sender waits until the
  root has received from every lower rank.
* gather ``linear_sync@S``: the root, rank by rank, posts the receive of the first S bytes,
  sends a zero-byte "go", posts the receive of the rest and waits for the first segment
  before the next rank; it waits for every rest at the end. A rank receives the go, then
  sends its first segment and its rest with blocking sends. Without S (4.1's fixed rules
  pass no segment size) the first segment is the whole block and the rest zero bytes.
* gather ``binomial``: the in-order binomial tree on ranks relative to the root (children
  v + 1, v + 2, v + 4, … below v's lowest set bit); a rank receives from its children in
  that order (blocking), then sends everything it holds to its parent.
* scatter ``linear`` (basic_linear): the root sends with blocking sends in rank order;
  ``linear_nb`` (4.1): the root posts every send at once and waits for all.
* scatter ``binomial``: a rank receives its subtree's blocks from its parent, then sends each
  child its subtree's part with blocking sends: nearest child first in 1.10, farthest
  first in 4.1.
* bcast over a tree (``binomial``, ``binary``, ``pipeline``/``chain``, ``knomial``;
  ``bcast_intra_generic``): segment by segment the root sends to all its children at once
  and waits for them before the next segment; an inner rank keeps two receives posted (the
  next segment's before it waits for the current one), forwards each segment to all its
  children at once and waits for them; a leaf keeps two receives posted.
* bcast ``split_binary@S``: the binary tree's left subtree gets the first half, the right
  subtree the second, segment by segment with blocking sends (the root alternates between
  its children); then every rank exchanges halves with its partner in the other subtree
  (``split_bintree``).
* bcast ``linear``: the root posts every send at once; ``scatter_allgather`` (4.1): a
  binomial scatter of n blocks, then a recursive-doubling allgather.
* reduce over a tree (``binomial``, ``binary``, ``pipeline``/``chain``; ``reduce_generic``):
  a rank posts the receive of (segment s, child i) before it waits for the previous one,
  combines each received segment into its accumulator (one reduction per child and
  segment) and, once a segment holds every child's data, sends it to its parent with a
  blocking send; a leaf sends its segments with blocking sends.
* reduce ``linear`` (basic_linear): every rank sends to the root; the root receives from
  n − 1, then from n − 2 … 1, combining each, then combines its own data.

Programs are built for root 0, IMB's root (``-root_shift`` off in both IMB versions). A
segmented algorithm is a :class:`~t2hx.flowsim.steady.Repeated` call: its program can leave
segments out of the middle of its pipeline, and t2hx/flowsim/steady.py extrapolates a long
pipeline from two such truncated calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from t2hx.flowsim.steady import Repeated, kept, whole
from t2hx.flowsim.timeline import Program

#: Rule sets whose binomial scatter serves the farthest child first (coll_base_scatter.c).
FARTHEST_FIRST = ("ompi-4.1",)
#: IMB's reductions count MPI_FLOAT; Bcast MPI_BYTE (segment sizes are whole elements).
FLOAT_BYTES = 4
#: The k-nomial Bcast's radix (coll_tuned_bcast_decision.c ``coll_tuned_bcast_knomial_radix``).
KNOMIAL_RADIX = 4

Entry = list[list[int]]        # per rank: the operations its first ones wait on
Kids = list[list[int]]         # per rank (relative to the root): its children, in order


# -- trees (coll_tuned_topo.c / coll_base_topo.c), root 0 -----------------------------------
def children(v: int, n: int) -> list[int]:
    """In-order binomial tree (``build_in_order_bmtree``): v's children, nearest first."""
    low = v & -v if v else 1 << max(n - 1, 1).bit_length()
    out, step = [], 1
    while step < low and v + step < n:
        out.append(v + step)
        step <<= 1
    return out


def subtree(c: int, n: int) -> int:
    """Ranks in the in-order binomial subtree of c (c itself and its descendants)."""
    return min(c & -c, n - c) if c else n


def in_order_binomial(n: int) -> Kids:
    return [children(v, n) for v in range(n)]


def binomial(n: int) -> Kids:
    """``build_bmtree``: v's children v + 2^k for every 2^k above v, nearest first."""
    out = []
    for v in range(n):
        mask = 1 << v.bit_length()          # opal_next_poweroftwo(v)
        kids = []
        while mask < n and v + mask < n:
            kids.append(v + mask)
            mask <<= 1
        out.append(kids)
    return out


def kary(n: int, fanout: int) -> Kids:
    """``build_tree``: level by level, v on level L (fanout^L ranks on it) has the children
    v + fanout^L · i, i = 1 … fanout; ``fanout`` 1 is the chain 0 → 1 → … (``build_chain``
    with fanout 1, the pipeline)."""
    out = []
    for v in range(n):
        level, first, width = 0, 0, 1
        while first + width <= v:
            first += width
            width *= fanout
            level += 1
        delta = fanout ** level
        out.append([c for c in (v + delta * i for i in range(1, fanout + 1)) if c < n])
    return out


def knomial(n: int, radix: int = KNOMIAL_RADIX) -> Kids:
    """``build_kmtree``: v's children v + mask·r (r = 1 … radix − 1) for the masks below v's
    lowest radix digit, farthest mask first."""
    out = []
    for v in range(n):
        mask = 1
        while mask < n and v % (radix * mask) == 0:
            mask *= radix
        mask //= radix
        kids = []
        while mask > 0:
            kids += [v + mask * r for r in range(1, radix) if v + mask * r < n]
            mask //= radix
        out.append(kids)
    return out


def parents(kids: Kids) -> list[int]:
    up = [-1] * len(kids)
    for v, cs in enumerate(kids):
        for c in cs:
            up[c] = v
    return up


def breadth_first(kids: Kids) -> list[int]:
    order, i = [0], 0
    while i < len(order):
        order += kids[order[i]]
        i += 1
    return order


def height(kids: Kids) -> int:
    """Edges on the longest path from the root (0) down to a leaf."""
    depth = [0] * len(kids)
    for v in breadth_first(kids):
        for c in kids[v]:
            depth[c] = depth[v] + 1
    return max(depth)


def post_order(kids: Kids) -> list[int]:
    out: list[int] = []
    stack = [(0, False)]
    while stack:
        v, seen = stack.pop()
        if seen:
            out.append(v)
            continue
        stack.append((v, True))
        stack += [(c, False) for c in reversed(kids[v])]
    return out


def segments(total: int, seg: int, element: int, drop: int = 0) -> list[int]:
    """Bytes of the messages one edge carries: Open MPI's segments of ``seg`` bytes in
    whole elements (``COLL_TUNED_COMPUTED_SEGCOUNT``; 0 or at least the message: one
    segment), the last one the rest; ``drop`` of them left out before the last (a
    truncated call, t2hx/flowsim/steady.py)."""
    if total <= 0:
        return []
    size = total
    if element <= seg < total:
        size = (seg // element + (seg % element > element / 2)) * element
    sizes = [min(size, total - i) for i in range(0, total, size)]
    return [sizes[i] for i in kept(len(sizes), drop)]


# -- registry ------------------------------------------------------------------------------
#: (ranks, bytes, segment size, rule set, reduce rate) -> the call
Planner = Callable[[int, int, int, str, float | None], Repeated]
Builder = Callable[[int, int, int, str, float | None], Program]
#: (program, bytes, segment size, rule set, reduce rate, entry, segments dropped) -> each
#: rank's last operations
Emitter = Callable[[Program, int, int, str, float | None, Entry, int], Entry]
#: (ranks, bytes, segment size) -> (segments, depth) of an emitter's pipeline
Shape = Callable[[int, int, int], tuple[int, int]]


def call(name: str, alg: str, n: int, m: int, rules: str,
         reduce_rate: float | None = None) -> Repeated | None:
    """Collective ``name`` with algorithm ``alg`` (``base@segment``) as a call whose
    pipeline can be truncated, or None when the algorithm has no program here (the caller
    falls back to phases). ``reduce_rate``: bytes/s a rank combines (Reduce)."""
    return lookup(PLANNERS, name, alg, n, m, rules, reduce_rate)


def program(name: str, alg: str, n: int, m: int, rules: str,
            reduce_rate: float | None = None) -> Program | None:
    """The whole program of :func:`call`, or None."""
    found = call(name, alg, n, m, rules, reduce_rate)
    return None if found is None else found.whole()


def lookup(planners: dict[tuple[str, str], Planner], name: str, alg: str, n: int, m: int,
           rules: str, reduce_rate: float | None) -> Repeated | None:
    base, _, seg = alg.partition("@")
    plan = planners.get((name, base))
    if plan is None or n < 2:
        return None
    return plan(n, m, int(seg or 0), rules, reduce_rate)


def plain(build: Builder) -> Planner:
    """An algorithm without a pipeline: its program as it is."""
    return lambda n, m, seg, rules, rate: whole(build(n, m, seg, rules, rate))


def _rate(reduce_rate: float | None) -> float:
    if not reduce_rate or reduce_rate <= 0:
        raise ValueError("a reduction's program needs the rate a rank combines at "
                         "(loggp.reduce_rate, bytes/s)")
    return reduce_rate


# -- Gather, Scatter -------------------------------------------------------------------------
def _gather_linear(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog, prev = Program(n), None
    for i in range(1, n):
        prev = prog.add(i, 0, m, recv_after=[] if prev is None else [prev])
    return prog


def _gather_linear_sync(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    first = min(seg, m) if seg else m
    prog, prev = Program(n), None
    for i in range(1, n):
        before: list[int] = [] if prev is None else [prev]
        go = prog.add(0, i, 0, send_after=before)
        head = prog.add(i, 0, first, send_after=[go], recv_after=before)
        prog.add(i, 0, m - first, send_after=[head], recv_after=[go])
        prev = head
    return prog


def _gather_binomial(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog = Program(n)

    def up(v: int, parent: int, sibling: int | None) -> int:
        got: int | None = None
        for c in children(v, n):
            got = up(c, v, got)
        return prog.add(v, parent, m * subtree(v, n), send_after=[] if got is None else [got],
                        recv_after=[] if sibling is None else [sibling])

    last = None
    for c in children(0, n):
        last = up(c, 0, last)
    return prog


def _scatter_linear(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog, prev = Program(n), None
    for i in range(1, n):
        prev = prog.add(0, i, m, send_after=[] if prev is None else [prev])
    return prog


def _scatter_linear_nb(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog = Program(n)
    for i in range(1, n):
        prog.add(0, i, m)
    return prog


def _scatter_binomial(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog = Program(n)

    def down(v: int, incoming: int | None) -> None:
        order = children(v, n)
        if rules in FARTHEST_FIRST:
            order = order[::-1]
        prev = None
        for c in order:
            after = [k for k in (incoming, prev) if k is not None]
            prev = prog.add(v, c, m * subtree(c, n), send_after=after)
            down(c, prev)

    down(0, None)
    return prog


# -- Bcast -----------------------------------------------------------------------------------
def bcast_tree(prog: Program, kids: Kids, sizes: list[int], entry: Entry) -> Entry:
    """``bcast_intra_generic`` over ``kids`` with these segments; returns each rank's
    last operations."""
    n, nseg = prog.n, len(sizes)
    sent: list[list[list[int]]] = [[] for _ in range(n)]     # per rank, per segment
    got: list[list[int]] = [[] for _ in range(n)]
    order = [v for v in breadth_first(kids) if kids[v]]
    for s in range(nseg):
        for v in order:
            before = (entry[v] if s == 0 else sent[v][s - 1]) if v == 0 else \
                [got[v][s]] + (sent[v][s - 1] if s else [])
            ids = []
            for c in kids[v]:
                if s < 2:
                    posted = entry[c]
                else:       # an inner rank posts after its sends of s − 2, a leaf after s − 2
                    posted = sent[c][s - 2] if kids[c] else [got[c][s - 2]]
                k = prog.add(v, c, sizes[s], send_after=before, recv_after=posted)
                got[c].append(k)
                ids.append(k)
            sent[v].append(ids)
    exits: Entry = []
    for v in range(n):
        if kids[v]:
            exits.append(sent[v][-1])
        else:
            exits.append(got[v][-2:] if nseg else entry[v])
    return exits


@dataclass(frozen=True)
class Algorithm:
    """How an algorithm emits its messages, and the (segments, depth) of its pipeline."""
    emit: Emitter
    shape: Shape = lambda n, m, seg: (1, 0)


def _bcast_over(tree: Callable[[int], Kids]) -> Algorithm:
    def emit(prog: Program, m: int, seg: int, rules: str, rate: float | None,
             entry: Entry, drop: int) -> Entry:
        return bcast_tree(prog, tree(prog.n), segments(m, seg, 1, drop), entry)

    def shape(n: int, m: int, seg: int) -> tuple[int, int]:
        return len(segments(m, seg, 1)), height(tree(n))
    return Algorithm(emit, shape)


def bcast_linear(prog: Program, m: int, entry: Entry) -> Entry:
    """``bcast_intra_basic_linear``: the root posts a send to every rank at once."""
    sends = [prog.add(0, i, m, send_after=entry[0], recv_after=entry[i])
             for i in range(1, prog.n)]
    return [sends] + [[k] for k in sends]


def _halves(m: int, seg: int) -> tuple[int, int] | None:
    """split_bintree's halves, or None when a half is smaller than a segment (the chain)."""
    halves = (m - m // 2, m // 2)
    return None if min(halves) == 0 or seg > min(halves) else halves


def _split_binary_shape(n: int, m: int, seg: int) -> tuple[int, int]:
    halves = _halves(m, seg)
    if halves is None:
        return len(segments(m, seg, 1)), n - 1
    return max(len(segments(h, seg, 1)) for h in halves), height(kary(n, 2))


def bcast_split_binary(prog: Program, m: int, seg: int, entry: Entry, drop: int = 0
                       ) -> Entry:
    """``bcast_intra_split_bintree``: the first half down the binary tree's left subtree
    (odd ranks), the second down the right one, segmented, blocking sends (the root
    alternates between its children); then partners swap halves (even n: the root sends
    the second half to rank n − 1). ``drop``: segments left out of each half."""
    n = prog.n
    halves = _halves(m, seg)
    if halves is None:                              # too small to split: the chain
        return bcast_tree(prog, kary(n, 1), segments(m, seg, 1, drop), entry)
    kids = kary(n, 2)
    cut = [segments(h, seg, 1, drop) for h in halves]
    half = [1] + [(v + 1) % 2 for v in range(1, n)]      # 0: the first half (odd ranks)
    last = [list(e) for e in entry]                      # a rank's last blocking send
    got: list[list[int]] = [[] for _ in range(n)]
    sent: list[list[list[int]]] = [[] for _ in range(n)]  # an inner rank's last send per s
    order = [v for v in breadth_first(kids) if kids[v]]
    for s in range(len(cut[0])):
        for v in order:
            for i, c in enumerate(kids[v]):
                sizes = cut[half[c]]
                if s >= len(sizes):
                    continue
                before = last[v]
                if v and i == 0:            # an inner rank forwards s once it has it
                    before = [got[v][s]] + (last[v] if s else [])
                if kids[c]:                 # it posts s after its sends of s − 2
                    posted = entry[c] if s < 2 else sent[c][s - 2]
                else:                       # a leaf receives segment after segment
                    posted = entry[c] if s == 0 else [got[c][s - 1]]
                k = prog.add(v, c, sizes[s], send_after=before, recv_after=posted)
                got[c].append(k)
                last[v] = [k]
            if v:
                sent[v].append(last[v])
    done = [last[v] if kids[v] else got[v][-1:] for v in range(n)]
    exits = [list(d) for d in done]
    for v in range(1, n):
        if n % 2 == 0 and v == n - 1:       # no partner: the root sends the second half
            k = prog.add(0, v, halves[1], send_after=done[0], recv_after=done[v])
            exits[0], exits[v] = [k], exits[v] + [k]
            continue
        pair = v + 1 if half[v] == 0 else v - 1
        k = prog.add(v, pair, halves[half[v]], send_after=done[v], recv_after=done[pair])
        exits[v].append(k)
        exits[pair].append(k)
    return exits



# -- Reduce ----------------------------------------------------------------------------------
class _TreeReduce:
    """``reduce_generic`` over ``kids``: rank v's receives are (segment s, child i) in that
    order, receive t posted before it waits for receive t − 1; step t ≥ 1 waits for receive
    t − 1, combines it (one reduction of the segment) and, when that completes a segment
    (t = (s + 1)·k), sends segment s to the parent. Messages are emitted segment by segment
    leaves first; a rank's steps run as far as the messages they wait on exist."""

    def __init__(self, prog: Program, kids: Kids, sizes: list[int], rate: float,
                 entry: Entry) -> None:
        self.prog, self.kids, self.sizes = prog, kids, sizes
        self.rate = rate
        self.up = parents(kids)
        self.slot = [0] * prog.n                 # a rank's position among its parent's kids
        for cs in kids:
            for i, c in enumerate(cs):
                self.slot[c] = i
        self.state = [list(e) for e in entry]    # what a rank completed last
        self.step = [0] * prog.n                 # steps done (step 0 only posts)
        self.got: list[list[int]] = [[] for _ in range(prog.n)]

    def run(self) -> Entry:
        order = post_order(self.kids)
        for s in range(len(self.sizes)):
            for v in order:
                k = len(self.kids[v])
                if k:
                    self._advance(v, (s + 1) * k)
                else:
                    self._send(v, s, self.state[v])
        return self.state

    def _posting(self, v: int, t: int) -> list[int]:
        """The state in which rank v posts its receive t."""
        self._advance(v, t - 1)
        return self.state[v]

    def _advance(self, v: int, upto: int) -> None:
        k = len(self.kids[v])
        while self.step[v] < upto:
            t = self.step[v] + 1
            s = (t - 1) // k
            after = self.state[v] + [self.got[v][t - 1]]
            self.step[v] = t
            if t % k == 0 and v:    # the segment is complete: combine, send (one entry)
                self._send(v, s, after, self.sizes[s] / self.rate)
            else:
                self.state[v] = [self.prog.work(v, self.sizes[s] / self.rate, after=after)]

    def _send(self, v: int, s: int, before: list[int], compute: float = 0.0) -> None:
        p = self.up[v]
        posted = self._posting(p, s * len(self.kids[p]) + self.slot[v])
        k = self.prog.add(v, p, self.sizes[s], send_after=before, recv_after=posted,
                          compute=compute)
        self.got[p].append(k)
        self.state[v] = [k]


def reduce_tree(prog: Program, kids: Kids, sizes: list[int], rate: float, entry: Entry
                ) -> Entry:
    """``reduce_generic`` over ``kids`` with these segments; each rank's last operations."""
    return _TreeReduce(prog, kids, sizes, rate, entry).run()


def _reduce_over(tree: Callable[[int], Kids]) -> Algorithm:
    def emit(prog: Program, m: int, seg: int, rules: str, rate: float | None,
             entry: Entry, drop: int) -> Entry:
        return reduce_tree(prog, tree(prog.n), segments(m, seg, FLOAT_BYTES, drop),
                           _rate(rate), entry)

    def shape(n: int, m: int, seg: int) -> tuple[int, int]:
        return len(segments(m, seg, FLOAT_BYTES)), height(tree(n))
    return Algorithm(emit, shape)


def reduce_linear(prog: Program, m: int, rate: float, entry: Entry) -> Entry:
    """``reduce_intra_basic_linear``: every rank sends to the root (blocking); the root
    receives from n − 1, then from n − 2 … 1, combining each, then combines its own."""
    n = prog.n
    exits = [list(e) for e in entry]
    state = entry[0]
    for i in range(n - 1, 0, -1):
        k = prog.add(i, 0, m, send_after=entry[i], recv_after=state)
        exits[i] = [k]
        state = [k] if i == n - 1 else [prog.work(0, m / rate, after=[k])]
    exits[0] = [prog.work(0, m / rate, after=state)]
    return exits


#: Bcast and Reduce algorithms as emitters into a program (composable: nonoverlapping
#: Allreduce is a Reduce then a Bcast, t2hx/flowsim/symmetric.py).
EMITTERS: dict[tuple[str, str], Algorithm] = {
    ("Bcast", "binomial"): _bcast_over(binomial),
    ("Bcast", "binary"): _bcast_over(lambda n: kary(n, 2)),
    ("Bcast", "pipeline"): _bcast_over(lambda n: kary(n, 1)),
    ("Bcast", "chain"): _bcast_over(lambda n: kary(n, 1)),
    ("Bcast", "knomial"): _bcast_over(knomial),
    ("Bcast", "split_binary"): Algorithm(
        lambda prog, m, seg, rules, rate, entry, drop:
            bcast_split_binary(prog, m, seg, entry, drop), _split_binary_shape),
    ("Bcast", "linear"): Algorithm(lambda prog, m, seg, rules, rate, entry, drop:
                                   bcast_linear(prog, m, entry)),
    ("Reduce", "binomial"): _reduce_over(in_order_binomial),
    ("Reduce", "binary"): _reduce_over(lambda n: kary(n, 2)),
    ("Reduce", "pipeline"): _reduce_over(lambda n: kary(n, 1)),
    ("Reduce", "chain"): _reduce_over(lambda n: kary(n, 1)),
    ("Reduce", "linear"): Algorithm(lambda prog, m, seg, rules, rate, entry, drop:
                                    reduce_linear(prog, m, _rate(rate), entry)),
}


def emit(name: str, alg: str, prog: Program, m: int, rules: str, reduce_rate: float | None,
         entry: Entry, drop: int = 0) -> Entry:
    """Append collective ``name`` with algorithm ``alg`` to ``prog``, every rank starting
    once it completed ``entry[rank]``, ``drop`` segments left out of its pipeline; each
    rank's last operations. MPI returns at once for 0 elements (``MPI_Bcast``/
    ``MPI_Reduce`` in ompi/mpi/c/)."""
    base, _, seg = alg.partition("@")
    if not m:
        return [list(e) for e in entry]
    return EMITTERS[(name, base)].emit(prog, m, int(seg or 0), rules, reduce_rate, entry, drop)


def _emitted(name: str, base: str) -> Planner:
    shape = EMITTERS[(name, base)].shape

    def plan(n: int, m: int, seg: int, rules: str, rate: float | None) -> Repeated:
        def build(drop: int) -> Program:
            prog = Program(n)
            emit(name, f"{base}@{seg}" if seg else base, prog, m, rules, rate,
                 [[] for _ in range(n)], drop)
            return prog
        repeats, depth = shape(n, m, seg) if m else (1, 0)
        return Repeated(build, repeats, depth)
    return plan


PLANNERS: dict[tuple[str, str], Planner] = {
    **{key: plain(build) for key, build in (
        (("Gather", "linear"), _gather_linear), (("Gather", "linear_sync"), _gather_linear_sync),
        (("Gather", "binomial"), _gather_binomial), (("Scatter", "linear"), _scatter_linear),
        (("Scatter", "linear_nb"), _scatter_linear_nb),
        (("Scatter", "binomial"), _scatter_binomial))},
    **{key: _emitted(*key) for key in EMITTERS}}
