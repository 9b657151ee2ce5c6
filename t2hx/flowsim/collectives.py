"""MPI collectives decomposed into point-to-point phases, as Open MPI 4.1 ``coll/tuned``
would run them with its default (fixed) decision rules.

Decision rules modelled (Open MPI 4.1 ``coll_tuned_decision_fixed.c``, commutative op
MPI_SUM, as IMB uses; n = communicator size, m = bytes per rank as IMB's ``#bytes``; the
rules are a reduced reading of the 4.1 tables: the switch points that matter for
n = 2…1,024 are kept, narrow one-size islands of the tables are folded into their
neighbours and documented here):

* Barrier: n < 4 recursive doubling; n < 8 linear; n < 64 recursive doubling; n < 256 Bruck;
  n < 512 tree (modelled as binomial fan-in + fan-out); n < 1024 Bruck; else tree.
* Bcast: n < 8: binary tree (m < 2 KiB), binomial (m < 8 KiB), linear (m < 1 MiB), chain;
  n < 16: k-nomial (m < 4 KiB), binary (m < 16 KiB), binomial (m < 32 KiB), linear;
  n < 32: k-nomial (m < 4 KiB), binomial (m < 1 MiB), scatter+allgather;
  n < 64: binomial (m < 2 KiB) else k-nomial; n < 128: k-nomial;
  n < 256: binary (m < 16 KiB), linear (m < 32 KiB), binary (m < 64 KiB), k-nomial;
  n < 1024: k-nomial; larger: k-nomial (m < 512 KiB) else scatter+allgather.
  Segment size 0 (the 4.1 default): every algorithm moves the whole message per edge.
  k-nomial uses radix 4 (coll_tuned_bcast_knomial_radix default).
* Reduce: n < 8: binary (m < 4 KiB), chain (m < 64 KiB), binomial; n < 32: binary
  (m < 4 KiB, 8 KiB for n < 16) else binomial; larger: binomial.
* Allreduce: n < 8: recursive doubling (m < 8 KiB) else Rabenseifner; n < 16: recursive
  doubling (m < 8 KiB) else Rabenseifner; n < 32: recursive doubling (m < 4 KiB) else
  Rabenseifner; n < 64: Rabenseifner; n < 128: recursive doubling (m < 256 KiB) else
  Rabenseifner; n < 256: reduce+bcast (m < 128 KiB), recursive doubling (m < 256 KiB),
  Rabenseifner; n < 512: reduce+bcast (m < 4 KiB) else Rabenseifner; n < 2048:
  reduce+bcast (m < 2 KiB), recursive doubling (m < 16 KiB), Rabenseifner.
  (4.1's segmented ring appears only for tiny messages on 16–63 ranks; modelled as ring.)
* Alltoall: n == 2 pairwise; n < 16: linear (all messages at once; linear_sync likewise);
  n < 64: modified Bruck (m < 512 B) else linear; n < 1024: modified Bruck (m < 1 KiB),
  linear (m < 256 KiB, 32 KiB for n ≥ 256), pairwise above; larger: Bruck (m < 512 B),
  linear (m < 256 KiB), linear_sync.
* Gather: binomial for m < 4 KiB (n ≥ 8) else linear (all to the root at once).
* Scatter: binomial for m < 4 KiB (n ≥ 8) else linear (root to all at once).

Reductions add the local combine time (bytes / ``reduce_gbps``) to the phase that receives.
"""

from __future__ import annotations

import math

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim.bulk import Phase
from t2hx.placement.collectives import Doubling, doubling

COLLECTIVES = ("Barrier", "Bcast", "Gather", "Scatter", "Reduce", "Allreduce", "Alltoall")
KNOMIAL_RADIX = 4
KIB = 1024


def canonical(name: str) -> str:
    for c in COLLECTIVES:
        if c.lower() == name.lower():
            return c
    raise WorkloadError(f"unknown collective '{name}'", field="benchmark",
                        fix=f"use one of: {', '.join(COLLECTIVES)}")


# -- decision rules ---------------------------------------------------------------------------
def choose(name: str, n: int, m: int) -> str:
    name = canonical(name)
    if n < 1:
        raise WorkloadError("zero ranks", field="ranks", fix="run on at least one node")
    return CHOOSERS[name](n, m)


def _choose_barrier(n: int, m: int) -> str:
    if n < 4 or 8 <= n < 64:
        return "recursive_doubling"
    if n < 8:
        return "linear"
    if n < 256 or 512 <= n < 1024:
        return "bruck"
    return "tree"


def _choose_bcast(n: int, m: int) -> str:
    if n < 8:
        return ("binary" if m < 2 * KIB else "binomial" if m < 8 * KIB
                else "linear" if m < 1024 * KIB else "chain")
    if n < 16:
        return ("knomial" if m < 4 * KIB else "binary" if m < 16 * KIB
                else "binomial" if m < 32 * KIB else "linear")
    if n < 32:
        return "knomial" if m < 4 * KIB else "binomial" if m < 1024 * KIB else "scatter_allgather"
    if n < 64:
        return "binomial" if m < 2 * KIB else "knomial"
    if n < 128:
        return "knomial"
    if n < 256:
        return ("binary" if m < 16 * KIB else "linear" if m < 32 * KIB
                else "binary" if m < 64 * KIB else "knomial")
    if n < 1024:
        return "knomial"
    return "knomial" if m < 512 * KIB else "scatter_allgather"


def _choose_reduce(n: int, m: int) -> str:
    if n < 8:
        return "binary" if m < 4 * KIB else "chain" if m < 64 * KIB else "binomial"
    if n < 16:
        return "binary" if m < 8 * KIB else "binomial"
    if n < 32:
        return "binary" if m < 4 * KIB else "binomial"
    return "binomial"


def _choose_allreduce(n: int, m: int) -> str:
    if n < 16:
        return "recursive_doubling" if m < 8 * KIB else "rabenseifner"
    if n < 32:
        return "recursive_doubling" if m < 4 * KIB else "rabenseifner"
    if n < 64:
        return "ring" if m < 128 else "rabenseifner"
    if n < 128:
        return "recursive_doubling" if m < 256 * KIB else "rabenseifner"
    if n < 256:
        return ("reduce_bcast" if m < 128 * KIB else "recursive_doubling" if m < 256 * KIB
                else "rabenseifner")
    if n < 512:
        return "reduce_bcast" if m < 4 * KIB else "rabenseifner"
    return ("reduce_bcast" if m < 2 * KIB else "recursive_doubling" if m < 16 * KIB
            else "rabenseifner")


def _choose_alltoall(n: int, m: int) -> str:
    if n == 2:
        return "pairwise"
    if n < 16:
        return "linear"
    if n < 64:
        return "bruck" if m < 512 else "linear"
    if n < 1024:
        limit = 256 * KIB if n < 256 else 32 * KIB
        return "bruck" if m < 1024 else "linear" if m < limit else "pairwise"
    return "bruck" if m < 512 else "linear"


def _choose_gather(n: int, m: int) -> str:
    return "binomial" if n >= 8 and m < 4 * KIB else "linear"


_choose_scatter = _choose_gather

#: Open MPI 4.1 coll/tuned's fixed decision rule per collective.
CHOOSERS = {"Barrier": _choose_barrier, "Bcast": _choose_bcast, "Gather": _choose_gather,
            "Scatter": _choose_scatter, "Reduce": _choose_reduce,
            "Allreduce": _choose_allreduce, "Alltoall": _choose_alltoall}


# -- algorithms: each returns the list of phases ----------------------------------------------
def phases(name: str, n: int, m: int, reduce_rate: float = 4e9, root: int = 0,
           algorithm: str | None = None) -> tuple[str, list[Phase]]:
    """(algorithm, phases) of collective ``name`` on ranks 0..n-1 with ``m`` bytes/rank."""
    name = canonical(name)
    alg = algorithm or choose(name, n, m)
    if n == 1:
        return alg, []
    gamma = m / reduce_rate
    if name == "Barrier":
        return alg, _barrier(alg, n)
    if name == "Bcast":
        return alg, _bcast(alg, n, m, root)
    if name == "Reduce":
        return alg, _reverse(_bcast(_tree_of(alg), n, m, root), gamma)
    if name == "Gather":
        return alg, _gather(alg, n, m, root)
    if name == "Scatter":
        return alg, _reverse(_gather(alg, n, m, root), 0.0)
    if name == "Allreduce":
        return alg, _allreduce(alg, n, m, gamma, reduce_rate)
    return alg, _alltoall(alg, n, m)


def _tree_of(alg: str) -> str:
    return {"chain": "chain", "binary": "binary", "binomial": "binomial"}.get(alg, "binomial")


def _reverse(ph: list[Phase], gamma: float) -> list[Phase]:
    """The mirror of a fan-out: children send to parents, leaves first."""
    return [Phase(p.dst, p.src, p.size, gamma, p.name) for p in reversed(ph)]


def _barrier(alg: str, n: int) -> list[Phase]:
    r = np.arange(n)
    if alg == "linear":
        return [Phase.of(r[1:], 0, 0), Phase.of(0, r[1:], 0)]
    if alg == "bruck":
        return [Phase.of(r, (r + (1 << k)) % n, 0) for k in range(math.ceil(math.log2(n)))]
    if alg == "tree":
        fan = _bcast("binomial", n, 0, 0)
        return _reverse(fan, 0.0) + fan
    return _recursive_doubling(n, 0, 0.0)


def _tree_edges(alg: str, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Fan-out rounds (parents, children) of the tree algorithms, root 0, relative ranks."""
    rounds: list[tuple[np.ndarray, np.ndarray]] = []
    if alg == "linear":
        return [(np.zeros(n - 1, dtype=np.int64), np.arange(1, n))]
    if alg == "chain":
        return [(np.array([k]), np.array([k + 1])) for k in range(n - 1)]
    if alg == "binary":
        level = [0]
        while level:
            parents, children = [], []
            for p in level:
                for c in (2 * p + 1, 2 * p + 2):
                    if c < n:
                        parents.append(p)
                        children.append(c)
            if parents:
                rounds.append((np.array(parents), np.array(children)))
            level = children
        # a parent sends to its two children one after the other: two phases per level
        return _split_siblings(rounds)
    radix = KNOMIAL_RADIX if alg == "knomial" else 2
    span = 1
    while span < n:
        span *= radix
    span //= radix
    while span >= 1:
        parents, children = [], []
        for p in range(0, n, span * radix):
            for j in range(1, radix):
                c = p + j * span
                if c < n:
                    parents.append(p)
                    children.append(c)
        if radix == 2:
            rounds.append((np.array(parents), np.array(children)))
        else:
            rounds.extend(_by_sibling(parents, children))
        span //= radix
    return rounds


def _by_sibling(parents: list[int], children: list[int]) -> list[tuple[np.ndarray, np.ndarray]]:
    """A parent sends to its children one at a time: k-th child of each parent per phase."""
    out: dict[int, tuple[list[int], list[int]]] = {}
    seen: dict[int, int] = {}
    for p, c in zip(parents, children):
        k = seen.get(p, 0)
        seen[p] = k + 1
        out.setdefault(k, ([], []))
        out[k][0].append(p)
        out[k][1].append(c)
    return [(np.array(a), np.array(b)) for _, (a, b) in sorted(out.items())]


def _split_siblings(rounds: list[tuple[np.ndarray, np.ndarray]]
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for parents, children in rounds:
        out.extend(_by_sibling(list(parents), list(children)))
    return out


def _bcast(alg: str, n: int, m: int, root: int) -> list[Phase]:
    if alg == "scatter_allgather":
        block = math.ceil(m / n)
        sc = [Phase.of((p + root) % n, (c + root) % n, block * _subtree(c, n), name="scatter")
              for p, c in _tree_edges("binomial", n)]
        return sc + _recursive_doubling(n, block, 0.0, grow=True)
    return [Phase.of((p + root) % n, (c + root) % n, m) for p, c in _tree_edges(alg, n)]


def _subtree(c: np.ndarray, n: int) -> np.ndarray:
    """Size of the binomial subtree rooted at relative rank c (lowest set bit span)."""
    low = c & -c
    return np.minimum(low, n - c)


def _gather(alg: str, n: int, m: int, root: int) -> list[Phase]:
    r = np.arange(n)
    if alg == "linear":
        return [Phase.of((r[1:] + root) % n, root, m)]
    fan = [Phase.of((p + root) % n, (c + root) % n, m * _subtree(c, n))
           for p, c in _tree_edges("binomial", n)]
    return _reverse(fan, 0.0)


def _recursive_doubling(n: int, m: float, gamma: float, grow: bool = False) -> list[Phase]:
    """Pairwise exchanges with newrank XOR 2^k; non-powers of two fold the extra ranks in
    first and out last, as Open MPI does (t2hx/placement/collectives.py). ``grow``:
    allgather, the block doubles."""
    d = doubling(n)
    out = _fold(d, m, gamma)
    block = m
    for dist in d.distances():
        out.append(Phase.of(*d.exchange(dist), block, gamma))
        if grow:
            block *= 2
    return out + _unfold(d, m * (n if grow else 1))


def _fold(d: Doubling, m: float, gamma: float) -> list[Phase]:
    return [Phase.of(*d.fold, m, gamma, "fold")] if d.extra else []


def _unfold(d: Doubling, m: float) -> list[Phase]:
    return [Phase.of(*d.unfold, m, 0.0, "unfold")] if d.extra else []


def _allreduce(alg: str, n: int, m: int, gamma: float, rate: float) -> list[Phase]:
    r = np.arange(n)
    if alg == "recursive_doubling":
        return _recursive_doubling(n, m, gamma)
    if alg == "ring":
        chunk = math.ceil(m / n)
        step = Phase.of(r, (r + 1) % n, chunk, chunk / rate)
        plain = Phase.of(r, (r + 1) % n, chunk)
        return [step] * (n - 1) + [plain] * (n - 1)
    if alg == "reduce_bcast":
        return (_reverse(_bcast("binomial", n, m, 0), gamma) + _bcast("binomial", n, m, 0))
    # Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling.
    d = doubling(n)
    out = _fold(d, m, gamma)
    halves = []
    block = m / 2
    for dist in reversed(d.distances()):
        halves.append(Phase.of(*d.exchange(dist), math.ceil(block), block / rate))
        block /= 2
    out.extend(halves)
    out.extend(Phase(p.src, p.dst, p.size, 0.0, "allgather") for p in reversed(halves))
    return out + _unfold(d, m)


def _alltoall(alg: str, n: int, m: int) -> list[Phase]:
    r = np.arange(n)
    if alg == "pairwise":
        return [Phase.of(r, (r + k) % n, m) for k in range(1, n)]
    if alg == "bruck":
        out = []
        k = 1
        while k < n:
            blocks = sum(1 for j in range(n) if j & k)
            out.append(Phase.of(r, (r + k) % n, m * blocks))
            k <<= 1
        return out
    src = np.repeat(r, n)
    dst = np.tile(r, n)
    return [Phase.of(src, dst, m)]
