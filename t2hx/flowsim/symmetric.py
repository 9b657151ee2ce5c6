"""The symmetric collectives (Barrier, Allreduce) as per-rank programs
(t2hx/flowsim/timeline.py): what every rank of Open MPI's algorithms posts, in which order,
and what it waits for.

Read from Open MPI v1.10.7 ``ompi/mca/coll/tuned/coll_tuned_{barrier,allreduce}.c`` and
v4.1.4 ``ompi/mca/coll/base/coll_base_{barrier,allreduce}.c`` (docs/modelling.md
#per-rank-timelines cites each function). A "send-receive" posts the receive, then the send,
and waits for both (``sendrecv_zero``, ``sendrecv_actual``):

* barrier ``recursive_doubling`` (n = 2: two_procs, the same exchange): off a power of two
  the ranks above the largest power of two p send to r − p and receive from it at the end
  (one send-receive); r − p receives (blocking) first and sends synchronously last;
  between, zero-byte send-receives with r ^ 1, r ^ 2, ….
* barrier ``bruck``: send-receives to r + d and from r − d, d = 1, 2, 4, … < n.
* barrier ``linear`` (4.1): every rank sends to rank 0 and receives from it (blocking);
  rank 0 posts every receive, waits, then sends to 1 … n − 1 (blocking).
* barrier ``tree``: the in-order binomial tree, zero bytes up (receive from each child,
  then send to the parent) and down (receive from the parent, send to the children,
  farthest first), blocking.
* allreduce ``recursive_doubling``: off a power of two the even ranks below 2·extra send
  their vector to r + 1 and get the result back at the end; the others send-receive the
  whole vector with partners at distance 1, 2, 4, … and combine after each.
* allreduce ``ring``: n − 1 reduce-scatter steps (the next block's receive posted, the
  previous one waited for, combined and sent on with a blocking send), then n − 1
  send-receives of the allgather; ``ring_segmented@S`` (1.10) runs the reduce-scatter once
  per phase on a share of every block, then one allgather of whole blocks. Both are
  :class:`~t2hx.flowsim.steady.Repeated` calls of n − 1 steps per phase (a truncated call
  leaves steps out of the middle of every phase).
* allreduce ``rabenseifner`` (4.1 ``redscat_allgather``): recursive halving of the vector
  with recursive distance doubling, then the allgather in reverse; off a power of two the
  first 2·extra ranks pair up first and the even ones hand the result to the odd ones.
* allreduce ``reduce_bcast`` (nonoverlapping): the rule set's own Reduce to rank 0, then its
  own Bcast (``comm->c_coll.coll_reduce`` and ``coll_bcast``: the fixed decisions again).
"""

from __future__ import annotations

from t2hx.flowsim import collectives, rooted
from t2hx.flowsim.rooted import FLOAT_BYTES, Entry, Planner, _rate, emit, lookup, plain
from t2hx.flowsim.steady import Repeated, kept, whole
from t2hx.flowsim.timeline import Program


def call(name: str, alg: str, n: int, m: int, rules: str,
         reduce_rate: float | None = None) -> Repeated | None:
    """Collective ``name`` with algorithm ``alg`` (``base@segment``) as a call whose
    ring steps can be truncated, or None when the algorithm has no program here (the
    caller falls back to phases)."""
    return lookup(PLANNERS, name, alg, n, m, rules, reduce_rate)


def program(name: str, alg: str, n: int, m: int, rules: str,
            reduce_rate: float | None = None) -> Program | None:
    """The whole program of :func:`call`, or None."""
    found = call(name, alg, n, m, rules, reduce_rate)
    return None if found is None else found.whole()


def _fresh(n: int) -> Entry:
    return [[] for _ in range(n)]


def sendrecv(prog: Program, a: int, b: int, to_b: int, to_a: int, state: Entry) -> None:
    """Ranks a and b send-receive (``to_b`` bytes a → b, ``to_a`` back; a zero count is no
    message), each once it completed ``state``; both then wait for both."""
    done: dict[int, list[int]] = {a: [], b: []}
    if to_b:
        k = prog.add(a, b, to_b, send_after=state[a], recv_after=state[b])
        done[a].append(k)
        done[b].append(k)
    if to_a:
        k = prog.add(b, a, to_a, send_after=state[b], recv_after=state[a])
        done[a].append(k)
        done[b].append(k)
    for r in (a, b):
        if done[r]:
            state[r] = done[r]


def _combine(prog: Program, r: int, nbytes: int, rate: float, state: Entry) -> None:
    state[r] = [prog.work(r, nbytes / rate, after=state[r])]


def _largest_power_of_two(n: int) -> int:
    return 1 << (n.bit_length() - 1)


# -- Barrier ---------------------------------------------------------------------------------
def _barrier_recursive_doubling(n: int, m: int, seg: int, rules: str,
                                rate: float | None) -> Program:
    prog, state = Program(n), _fresh(n)
    p = _largest_power_of_two(n)
    first: dict[int, int] = {}
    for r in range(p, n):       # r's send-receive with r − p: the send (r − p: a receive)
        first[r] = prog.add(r, r - p, 0)
        state[r - p] = [first[r]]
    mask = 1
    while mask < p:
        _exchange_zero(prog, p, mask, [list(s) for s in state], state)
        mask <<= 1
    for r in range(n - p):      # into the receive r + p posted first; r returns once matched
        k = prog.add(r, r + p, 0, send_after=state[r], sync=True)
        state[r] = [k]
        state[r + p] = [first[r + p], k]
    return prog


def _exchange_zero(prog: Program, p: int, mask: int, old: Entry, state: Entry) -> None:
    """Zero-byte send-receives of ranks r < p with r ^ mask (both messages posted in the
    state before the round)."""
    for r in range(p):
        peer = r ^ mask
        if r < peer:
            ab = prog.add(r, peer, 0, send_after=old[r], recv_after=old[peer])
            ba = prog.add(peer, r, 0, send_after=old[peer], recv_after=old[r])
            state[r] = state[peer] = [ab, ba]


def _barrier_bruck(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog, state = Program(n), _fresh(n)
    d = 1
    while d < n:
        sent = [prog.add(r, (r + d) % n, 0, send_after=state[r], recv_after=state[(r + d) % n])
                for r in range(n)]
        state = [[sent[r], sent[(r - d) % n]] for r in range(n)]
        d <<= 1
    return prog


def _barrier_linear(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog = Program(n)
    into = [prog.add(r, 0, 0) for r in range(1, n)]
    before = into
    for r in range(1, n):
        before = [prog.add(0, r, 0, send_after=before, recv_after=[into[r - 1]])]
    return prog


def _barrier_tree(n: int, m: int, seg: int, rules: str, rate: float | None) -> Program:
    prog, state = Program(n), _fresh(n)
    kids = rooted.in_order_binomial(n)
    for v in rooted.post_order(kids):           # up: every child, then the parent
        for c in kids[v]:
            k = prog.add(c, v, 0, send_after=state[c], recv_after=state[v])
            state[v] = state[c] = [k]
    for v in rooted.breadth_first(kids):        # down: farthest child first
        for c in reversed(kids[v]):
            k = prog.add(v, c, 0, send_after=state[v], recv_after=state[c])
            state[v] = state[c] = [k]
    return prog


# -- Allreduce -------------------------------------------------------------------------------
def _allreduce_recursive_doubling(n: int, m: int, seg: int, rules: str,
                                  rate: float | None) -> Program:
    prog = Program(n)
    if m:
        allreduce_recursive_doubling(prog, m, _rate(rate), _fresh(n))
    return prog


def allreduce_recursive_doubling(prog: Program, m: int, rate: float, state: Entry) -> Entry:
    n = prog.n
    p = _largest_power_of_two(n)
    extra = n - p
    handed: dict[int, int] = {}
    for r in range(0, 2 * extra, 2):            # even r hands its vector to r + 1
        handed[r] = prog.add(r, r + 1, m, send_after=state[r], recv_after=state[r + 1])
        state[r] = [handed[r]]
        state[r + 1] = [handed[r]]
        _combine(prog, r + 1, m, rate, state)
    real = [2 * v + 1 if v < extra else v + extra for v in range(p)]
    dist = 1
    while dist < p:
        old = [list(s) for s in state]
        for v in range(p):
            w = v ^ dist
            if v < w:
                a, b = real[v], real[w]
                sendrecv(prog, a, b, m, m, old)
                state[a], state[b] = old[a], old[b]
        for v in range(p):
            _combine(prog, real[v], m, rate, state)
        dist <<= 1
    for r in range(0, 2 * extra, 2):            # the result back to r
        k = prog.add(r + 1, r, m, send_after=state[r + 1], recv_after=state[r])
        state[r] = state[r + 1] = [k]
    return state


def _blocks(count: int, parts: int) -> list[int]:
    """``COLL_TUNED_COMPUTE_BLOCKCOUNT``: the first count % parts blocks one element more."""
    base, split = divmod(count, parts)
    return [base + (i < split) for i in range(parts)]


def _allreduce_ring(n: int, m: int, seg: int, rules: str, rate: float | None) -> Repeated:
    count = m // FLOAT_BYTES
    if not m:
        return whole(Program(n))
    if count < n:                   # allreduce_intra_ring: recursive doubling then
        return plain(_allreduce_recursive_doubling)(n, m, seg, rules, rate)
    blocks = [FLOAT_BYTES * b for b in _blocks(count, n)]
    return _ring(n, [blocks], blocks, _rate(rate))


def _ring(n: int, phases: list[list[int]], blocks: list[int], rate: float) -> Repeated:
    """The ring's reduce-scatter once per phase (``phases[p][b]`` bytes of block b), then
    its allgather of ``blocks``: n − 1 steps each, every rank waiting on its neighbours."""
    def build(drop: int) -> Program:
        prog = Program(n)
        state = _reduce_scatter_ring(prog, phases, rate, _fresh(n), drop)
        _allgather_ring(prog, blocks, state, drop)
        return prog
    return Repeated(build, n - 1, n - 1, coupled=True)


def _reduce_scatter_ring(prog: Program, phases: list[list[int]], rate: float,
                         state: Entry, drop: int = 0) -> Entry:
    """The ring's reduce-scatter once per phase, ``phases[p][b]`` bytes of block b: rank r
    sends block r − i in step i (blocking), having combined what it received in step
    i − 1; it posts step i's receive once step i − 1's send completed. ``drop``: steps
    left out of each phase."""
    n = prog.n
    for share in phases:
        sent: list[int] = []
        for i in kept(n - 1, drop):
            if not sent:
                sent = [prog.add(r, (r + 1) % n, share[(r - i) % n], send_after=state[r],
                                 recv_after=state[(r + 1) % n]) for r in range(n)]
                continue
            # combine block r − i (the send's compute), send it
            sent = [prog.add(r, (r + 1) % n, share[(r - i) % n],
                             send_after=[sent[r], sent[(r - 1) % n]],
                             recv_after=[sent[(r + 1) % n]],
                             compute=share[(r - i) % n] / rate) for r in range(n)]
        state = [[prog.work(r, share[(r + 1) % n] / rate, after=[sent[r], sent[(r - 1) % n]])]
                 for r in range(n)]
    return state


def _allgather_ring(prog: Program, blocks: list[int], state: Entry, drop: int = 0) -> Entry:
    n = prog.n
    for j in kept(n - 1, drop):
        sent = [prog.add(r, (r + 1) % n, blocks[(r + 1 - j) % n], send_after=state[r],
                         recv_after=state[(r + 1) % n]) for r in range(n)]
        state = [[sent[r], sent[(r - 1) % n]] for r in range(n)]
    return state


def _allreduce_ring_segmented(n: int, m: int, seg: int, rules: str,
                              rate: float | None) -> Repeated:
    """``allreduce_intra_ring_segmented``: phases of the reduce-scatter on a share of every
    block (count / (n · segment elements) of them, one more for a large rest)."""
    if not m:
        return whole(Program(n))
    count = m // FLOAT_BYTES
    segcount = seg // FLOAT_BYTES if FLOAT_BYTES <= seg < m else count
    if count < n * segcount:
        return _allreduce_ring(n, m, 0, rules, rate)
    phases, left = divmod(count, n * segcount)
    phases += int(left >= n and left > n * segcount / 2)
    blocks = _blocks(count, n)
    share = [[FLOAT_BYTES * _blocks(b, phases)[p] for b in blocks] for p in range(phases)]
    return _ring(n, share, [FLOAT_BYTES * b for b in blocks], _rate(rate))


def _allreduce_reduce_bcast(n: int, m: int, seg: int, rules: str,
                            rate: float | None) -> Program:
    """Nonoverlapping: the rule set's Reduce to rank 0, then its Bcast (the collectives'
    own fixed decisions for the same n and m)."""
    prog = Program(n)
    if m:
        state = emit("Reduce", collectives.choose("Reduce", n, m, rules), prog, m, rules,
                     rate, _fresh(n))
        emit("Bcast", collectives.choose("Bcast", n, m, rules), prog, m, rules, rate, state)
    return prog


def _allreduce_rabenseifner(n: int, m: int, seg: int, rules: str,
                            rate: float | None) -> Program:
    """``allreduce_intra_redscat_allgather`` (4.1)."""
    prog = Program(n)
    if not m:
        return prog
    speed = _rate(rate)
    count = m // FLOAT_BYTES
    p = _largest_power_of_two(n)
    if count < p:                   # basic_linear: linear Reduce, then linear Bcast
        state = rooted.reduce_linear(prog, m, speed, _fresh(n))
        rooted.bcast_linear(prog, m, state)
        return prog
    extra = n - p
    state = _fresh(n)
    low, high = count // 2, count - count // 2
    for r in range(0, 2 * extra, 2):            # pairs (r, r + 1): halves across, r gets all
        sendrecv(prog, r, r + 1, FLOAT_BYTES * high, FLOAT_BYTES * low, state)
        _combine(prog, r, FLOAT_BYTES * low, speed, state)
        _combine(prog, r + 1, FLOAT_BYTES * high, speed, state)
        k = prog.add(r + 1, r, FLOAT_BYTES * high, send_after=state[r + 1],
                     recv_after=state[r])
        state[r] = state[r + 1] = [k]
    real = [2 * v if v < extra else v + extra for v in range(p)]
    window = [count] * p
    sends: list[list[int]] = [[] for _ in range(p)]     # elements sent per step
    kept: list[list[int]] = [[] for _ in range(p)]      # elements kept (and received)
    mask = 1
    while mask < p:                             # reduce-scatter: halving, distance doubling
        old = [list(s) for s in state]
        for v in range(p):
            w = v ^ mask
            lower = real[v] < real[w]
            keep = window[v] // 2 if lower else window[v] - window[v] // 2
            sends[v].append(window[v] - keep)
            kept[v].append(keep)
        for v in range(p):
            w = v ^ mask
            if v < w:
                a, b = real[v], real[w]
                sendrecv(prog, a, b, FLOAT_BYTES * sends[v][-1], FLOAT_BYTES * sends[w][-1],
                         old)
                state[a], state[b] = old[a], old[b]
        for v in range(p):
            _combine(prog, real[v], FLOAT_BYTES * kept[v][-1], speed, state)
            window[v] = kept[v][-1]
        mask <<= 1
    step = len(kept[0]) - 1
    mask = p >> 1
    while mask:                                 # allgather: the same pairs in reverse
        old = [list(s) for s in state]
        for v in range(p):
            w = v ^ mask
            if v < w:
                a, b = real[v], real[w]
                sendrecv(prog, a, b, FLOAT_BYTES * kept[v][step], FLOAT_BYTES * kept[w][step],
                         old)
                state[a], state[b] = old[a], old[b]
        step -= 1
        mask >>= 1
    for r in range(0, 2 * extra, 2):            # the result to the odd ranks
        k = prog.add(r, r + 1, m, send_after=state[r], recv_after=state[r + 1])
        state[r] = state[r + 1] = [k]
    return prog


PLANNERS: dict[tuple[str, str], Planner] = {
    ("Barrier", "recursive_doubling"): plain(_barrier_recursive_doubling),
    ("Barrier", "bruck"): plain(_barrier_bruck),
    ("Barrier", "linear"): plain(_barrier_linear),
    ("Barrier", "tree"): plain(_barrier_tree),
    ("Allreduce", "recursive_doubling"): plain(_allreduce_recursive_doubling),
    ("Allreduce", "ring"): _allreduce_ring,
    ("Allreduce", "ring_segmented"): _allreduce_ring_segmented,
    ("Allreduce", "reduce_bcast"): plain(_allreduce_reduce_bcast),
    ("Allreduce", "rabenseifner"): plain(_allreduce_rabenseifner),
}
