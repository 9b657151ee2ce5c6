"""Gather and Scatter as per-rank programs (t2hx/flowsim/timeline.py): what every rank of
Open MPI's algorithms posts, in which order, and what it waits for.

Read from Open MPI v1.10.7 ``ompi/mca/coll/tuned/coll_tuned_gather.c`` and
``coll_tuned_scatter.c`` and v4.1.4 ``ompi/mca/coll/base/coll_base_gather.c`` and
``coll_base_scatter.c`` (docs/modelling.md#per-rank-timelines cites each function):

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

Programs are built for root 0, IMB's root (``-root_shift`` off in both IMB versions).
"""

from __future__ import annotations

from t2hx.flowsim.timeline import Program

#: Rule sets whose binomial scatter serves the farthest child first (coll_base_scatter.c).
FARTHEST_FIRST = ("ompi-4.1",)


def children(v: int, n: int) -> list[int]:
    """In-order binomial tree: v's children, nearest first."""
    low = v & -v if v else 1 << max(n - 1, 1).bit_length()
    out, step = [], 1
    while step < low and v + step < n:
        out.append(v + step)
        step <<= 1
    return out


def subtree(c: int, n: int) -> int:
    """Ranks in the subtree of c (c itself and its descendants)."""
    return min(c & -c, n - c) if c else n


def program(name: str, alg: str, n: int, m: int, rules: str) -> Program | None:
    """The program of collective ``name`` with algorithm ``alg`` (``base@segment``), or
    None when the algorithm has none here (the caller falls back to phases)."""
    base, _, seg = alg.partition("@")
    build = BUILDERS.get((name, base))
    if build is None or n < 2:
        return None
    return build(n, m, int(seg or 0), rules)


def _gather_linear(n: int, m: int, seg: int, rules: str) -> Program:
    prog, prev = Program(n), None
    for i in range(1, n):
        prev = prog.add(i, 0, m, recv_after=[] if prev is None else [prev])
    return prog


def _gather_linear_sync(n: int, m: int, seg: int, rules: str) -> Program:
    first = min(seg, m) if seg else m
    prog, prev = Program(n), None
    for i in range(1, n):
        before: list[int] = [] if prev is None else [prev]
        go = prog.add(0, i, 0, send_after=before)
        head = prog.add(i, 0, first, send_after=[go], recv_after=before)
        prog.add(i, 0, m - first, send_after=[head], recv_after=[go])
        prev = head
    return prog


def _gather_binomial(n: int, m: int, seg: int, rules: str) -> Program:
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


def _scatter_linear(n: int, m: int, seg: int, rules: str) -> Program:
    prog, prev = Program(n), None
    for i in range(1, n):
        prev = prog.add(0, i, m, send_after=[] if prev is None else [prev])
    return prog


def _scatter_linear_nb(n: int, m: int, seg: int, rules: str) -> Program:
    prog = Program(n)
    for i in range(1, n):
        prog.add(0, i, m)
    return prog


def _scatter_binomial(n: int, m: int, seg: int, rules: str) -> Program:
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


BUILDERS = {("Gather", "linear"): _gather_linear, ("Gather", "linear_sync"): _gather_linear_sync,
            ("Gather", "binomial"): _gather_binomial, ("Scatter", "linear"): _scatter_linear,
            ("Scatter", "linear_nb"): _scatter_linear_nb,
            ("Scatter", "binomial"): _scatter_binomial}
