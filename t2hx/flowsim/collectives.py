"""MPI collectives decomposed into point-to-point phases, as Open MPI's ``coll/tuned`` would
run them with its default (fixed) decision rules.

Rule sets, chosen by the system conf's ``model.collectives`` (:data:`RULES`):
``ompi-4.1`` (the default, the MPI of this stack), ``ompi-1.10`` (Open MPI 1.10.7, the
MPI the study ran, seed 000 §4.4.5) and ``binomial-rd-bruck`` (one algorithm each for
Bcast, Allreduce and Alltoall, as seed 001 simulates them). The Open MPI ones read
``ompi/mca/coll/tuned/coll_tuned_decision_fixed.c`` of their version
(docs/modelling.md#collective-decision-rules).

Open MPI 4.1 (``ompi-4.1``; the ``*_intra_dec_fixed`` functions of the v4.1.x file, commutative
op MPI_SUM, as IMB uses; n = communicator size, m = bytes per rank as IMB's ``#bytes``; the
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
* Reduce: the commutative branch of the v4.1.4 table in full (n < 4 and n < 8 switch
  between binary, pipeline, chain, binomial and linear by size: linear from 1 MiB on 4–7
  ranks, the root receiving every vector); n < 32: binary (m < 4 KiB, 8 KiB for n < 16)
  else binomial; larger: binomial, with the in-order binary tree's islands as binary.
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
* Gather and Scatter: the v4.1.4 tables in full (``ompi_coll_tuned_gather_intra_dec_fixed``,
  ``..._scatter_...``); Gather is binomial from 8 to 255 ranks at every size (and from 512
  on), Scatter switches between binomial, linear and ``linear_nb`` (the root posts every send
  at once) by size below 64 ranks. The earlier reduced reading (linear from 4 KiB) put
  bytes on rank pairs that the real IMB Gather at 14 and 28 ranks never uses
  (pml_monitoring profiles, tests/test_derived_demand.py).

Open MPI 1.10.7 (``ompi-1.10``; the same functions of the v1.10.7 file, read in full for
commutative MPI_SUM; IMB's reductions use MPI_FLOAT, so a reduction's element count is m / 4):

* Barrier: n a power of two recursive doubling (n = 2: two_procs, the same single
  exchange), else Bruck.
* Bcast: m < 2,048 B binomial; m < 370,728 B split binary tree, 1 KiB segments; larger:
  pipeline (128 KiB segments) while n < 1.6134e-6·m + 2.1102, else split binary tree
  (8 KiB) for n < 13, else pipeline 64 KiB while n < 2.3679e-6·m + 1.1787, 16 KiB while
  n < 3.2118e-6·m + 8.7936, 8 KiB beyond.
* Reduce: n < 8 and m < 512 B linear; (n < 8 and m < 20,480 B) or m < 2,048 B binomial;
  then the first that holds: n > 0.6016/1024·m + 1.3496 binomial with 1 KiB segments,
  n > 0.0410/1024·m + 9.7128 pipeline 1 KiB, n > 0.0422/1024·m + 1.1614 binary tree 32 KiB,
  n > 0.0033/1024·m + 1.6761 pipeline 32 KiB, else pipeline 64 KiB.
* Allreduce: m < 10,000 B recursive doubling; more elements than ranks: ring while
  n · 1 MiB ≥ m, else segmented ring (1 MiB segments); otherwise (n ≥ m / 4, only beyond
  2,500 ranks at these sizes) nonoverlapping reduce + bcast.
* Alltoall: n = 2 two_procs (modelled as pairwise: the same one exchange); m < 1,000 B and
  n > 12 Bruck; m < 2,000 B linear (every message at once); else pairwise.
* Gather: m > 92,160 B linear_sync with a 32 KiB first segment; m > 6,000 B linear_sync,
  1 KiB; n > 60 or (n > 10 and m < 1,024 B) binomial; else linear.
* Scatter: n > 10 and m < 300 B binomial, else linear.

How the 1.10 algorithms are modelled (our builders; an algorithm name ``alg@S`` means
segments of S bytes, no suffix the whole message per edge):

* split binary tree (``split_binary@S``): Open MPI's level-order binary tree (relative rank
  s on level L has children s + 2^L and s + 2^(L+1)); the root sends the first half of the
  message down its left subtree (odd ranks) and the second half down the right one (even
  ranks), segment by segment; then each rank swaps halves with its neighbour in the other
  subtree (even n: the root sends the second half to rank n − 1). Halves smaller than a
  segment: the segmented chain, as Open MPI falls back.
* pipeline (``pipeline@S``): a chain 0 → 1 → … → n − 1 (fanout 1), segmented.
* binomial/binary/pipeline reduce with segments: the same trees upwards; a rank sends
  segment k when it has combined segment k of all its children. The in-order binomial tree
  of 1.10's binomial reduce has the binomial tree's shape (only the combining order differs,
  which MPI_SUM does not see): our binomial tree.
* linear reduce: every rank sends to the root at once; the root combines n − 1 messages.
* segmented ring allreduce (``ring_segmented@S``): the ring's reduce-scatter repeated once
  per Open MPI phase (count / (n · segment elements), rounded as 1.10 does) on a 1/phases
  share of each block, then the ring allgather of whole blocks.
* nonoverlapping allreduce: our ``reduce_bcast`` (binomial reduce, binomial bcast), not
  1.10's own Reduce and Bcast choices; it is chosen only beyond 2,500 ranks here.
* linear_sync gather (``linear_sync@S``): the root handshakes with one rank after the
  other (a zero-byte message to it, its first segment back); a rank's rest flows to the
  root during the next rank's handshake.
* Bruck alltoall: our ``bruck`` builder (⌈log2 n⌉ rounds of the blocks whose bit is set).

Segmentation: a segmented algorithm moves segment k along an edge in step
start + k, where start is the sender's depth (fan-out) or height (fan-in), so S segments
over a chain of depth d take S + d − 1 phases. To bound the work, a pipeline takes at most
:data:`MAX_PIPELINE_STEPS` phases: beyond, the segments are made larger (fewer) until it fits.
At n ≤ 1,024 and m ≤ 4 MiB (the study's sweep) only 1.10's 1 KiB pipeline Reduce is
coarsened: at 2 MiB from 94 ranks, at 4 MiB from 178 ranks (e.g. 672 ranks, 4 MiB: 1,378
segments of ~3 KiB instead of 4,096 of 1 KiB); there it misses the per-segment latency
of the steps it drops, so it is faster than 1.10 would be. The 4.1 rules run every
algorithm unsegmented (4.1's default segment size 0).

Reductions add the local combine time (bytes / ``reduce_gbps``) to the phase that receives.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from t2hx.errors import WorkloadError
from t2hx.flowsim.bulk import Phase
from t2hx.doubling import Doubling, doubling, halving

COLLECTIVES = ("Barrier", "Bcast", "Gather", "Scatter", "Reduce", "Allreduce", "Alltoall")
KNOMIAL_RADIX = 4
KIB = 1024
MIB = 1024 * KIB
DEFAULT_RULES = "ompi-4.1"
#: IMB reduces MPI_FLOAT: 1.10's Allreduce rule compares the element count with n.
ELEMENT_BYTES = 4
#: At most this many phases per segmented algorithm (segments grow beyond): a pipeline of
#: S segments over depth d has about S·d messages, so this keeps it near (2048/2)^2 = 1M,
#: the size of the largest unsegmented pattern (linear Alltoall on 1,024 ranks).
MAX_PIPELINE_STEPS = 2048

Chooser = Callable[[int, int], str]


def canonical(name: str) -> str:
    for c in COLLECTIVES:
        if c.lower() == name.lower():
            return c
    raise WorkloadError(f"unknown collective '{name}'", field="benchmark",
                        fix=f"use one of: {', '.join(COLLECTIVES)}")


# -- decision rules ---------------------------------------------------------------------------
def rule_set(rules: str) -> dict[str, Chooser]:
    """The chooser table of a rule set name (conf ``model.collectives``)."""
    if rules not in RULES:
        raise WorkloadError(f"unknown collective rule set '{rules}'", field="model.collectives",
                            fix=f"use one of: {', '.join(RULES)}")
    return RULES[rules]


def choose(name: str, n: int, m: int, rules: str = DEFAULT_RULES) -> str:
    """The algorithm the rule set picks for ``name`` on n ranks, m bytes per rank
    (``alg@S``: segments of S bytes)."""
    name = canonical(name)
    table = rule_set(rules)
    if n < 1:
        raise WorkloadError("zero ranks", field="ranks", fix="run on at least one node")
    return table[name](n, m)


def segmented(alg: str) -> tuple[str, int]:
    """``"pipeline@8192"`` → ("pipeline", 8192); no suffix: segment size 0 (whole message)."""
    base, _, seg = alg.partition("@")
    return base, int(seg) if seg else 0


def _seg(alg: str, size: int) -> str:
    return f"{alg}@{size}"


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
    # The commutative branch of v4.1.4's table. Two algorithms it names are folded: its
    # Rabenseifner reduce (n < 4, m < 8 B) into binary, and the in-order binary tree (one-size
    # islands from 256 ranks) into binary, the same tree for a commutative op.
    if n < 4:
        return _first(m, [(16, "binary"), (32, "pipeline"), (256 * KIB, "linear"),
                          (512 * KIB, "pipeline"), (MIB, "chain"), (INF, "pipeline")])
    if n < 8:
        return _first(m, [(4 * KIB, "binary"), (64 * KIB, "chain"), (256 * KIB, "binomial"),
                          (512 * KIB, "linear"), (MIB, "binomial"), (INF, "linear")])
    if n < 16:
        return "binary" if m < 8 * KIB else "binomial"
    if n < 32:
        return "binary" if m < 4 * KIB else "binomial"
    if 256 <= n < 512:
        return _first(m, [(8 * KIB, "binomial"), (16 * KIB, "binary"), (INF, "binomial")])
    if 2048 <= n < 4096:
        return _first(m, [(512, "binomial"), (KIB, "binary"), (8 * KIB, "binomial"),
                          (16 * KIB, "binary"), (INF, "binomial")])
    if n >= 4096:
        return _first(m, [(16, "binomial"), (32, "binary"), (KIB, "binomial"),
                          (2 * KIB, "binary"), (8 * KIB, "binomial"), (16 * KIB, "binary"),
                          (INF, "binomial")])
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


def _first(m: int, table: list[tuple[int, str]]) -> str:
    """The algorithm of the first (limit, algorithm) row whose byte limit m is below."""
    return next(alg for limit, alg in table if m < limit)


INF = 1 << 62


def _choose_gather(n: int, m: int) -> str:
    if n < 4:
        return _first(m, [(2, "linear_sync"), (4, "linear"), (32 * KIB, "binomial"),
                          (64 * KIB, "linear"), (128 * KIB, "binomial"), (INF, "linear_sync")])
    if n < 8:
        return _first(m, [(KIB, "binomial"), (8 * KIB, "linear"), (32 * KIB, "binomial"),
                          (256 * KIB, "linear"), (INF, "linear_sync")])
    if 256 <= n < 512:
        return _first(m, [(2 * KIB, "binomial"), (8 * KIB, "linear"), (INF, "binomial")])
    return "binomial"


def _choose_scatter(n: int, m: int) -> str:
    if n < 4:
        return _first(m, [(2, "linear_nb"), (128 * KIB, "linear"), (256 * KIB, "linear_nb"),
                          (INF, "linear")])
    if n < 8:
        return _first(m, [(2 * KIB, "binomial"), (4 * KIB, "linear"), (8 * KIB, "binomial"),
                          (32 * KIB, "linear"), (MIB, "linear_nb"), (INF, "linear")])
    if n < 16:
        return _first(m, [(16 * KIB, "binomial"), (MIB, "linear_nb"), (INF, "linear")])
    if n < 32:
        return _first(m, [(16 * KIB, "binomial"), (32 * KIB, "linear"), (INF, "linear_nb")])
    if n < 64:
        return _first(m, [(512, "binomial"), (8 * KIB, "linear_nb"), (16 * KIB, "binomial"),
                          (INF, "linear_nb")])
    return "binomial" if m < 512 else "linear_nb"

#: Open MPI 4.1 coll/tuned's fixed decision rule per collective.
CHOOSERS: dict[str, Chooser] = {
    "Barrier": _choose_barrier, "Bcast": _choose_bcast, "Gather": _choose_gather,
    "Scatter": _choose_scatter, "Reduce": _choose_reduce, "Allreduce": _choose_allreduce,
    "Alltoall": _choose_alltoall}


# -- Open MPI 1.10.7 (coll_tuned_decision_fixed.c at v1.10.7) ----------------------------------
def _choose_barrier_1_10(n: int, m: int) -> str:
    # n = 2 runs two_procs, the one exchange recursive doubling also makes there
    return "recursive_doubling" if n & (n - 1) == 0 else "bruck"


def _choose_bcast_1_10(n: int, m: int) -> str:
    if m < 2048:
        return "binomial"
    if m < 370728:
        return _seg("split_binary", KIB)
    # large messages: fitted lines n = a·m + b (UTK MX measurements) pick the segment size
    if n < 1.6134e-6 * m + 2.1102:
        return _seg("pipeline", 128 * KIB)
    if n < 13:
        return _seg("split_binary", 8 * KIB)
    if n < 2.3679e-6 * m + 1.1787:
        return _seg("pipeline", 64 * KIB)
    if n < 3.2118e-6 * m + 8.7936:
        return _seg("pipeline", 16 * KIB)
    return _seg("pipeline", 8 * KIB)


def _choose_reduce_1_10(n: int, m: int) -> str:
    if n < 8 and m < 512:
        return "linear"
    if (n < 8 and m < 20480) or m < 2048:
        return "binomial"
    if n > 0.6016 / KIB * m + 1.3496:
        return _seg("binomial", KIB)
    if n > 0.0410 / KIB * m + 9.7128:
        return _seg("pipeline", KIB)
    if n > 0.0422 / KIB * m + 1.1614:
        return _seg("binary", 32 * KIB)
    if n > 0.0033 / KIB * m + 1.6761:
        return _seg("pipeline", 32 * KIB)
    return _seg("pipeline", 64 * KIB)


def _choose_allreduce_1_10(n: int, m: int) -> str:
    if m < 10000:
        return "recursive_doubling"
    if m // ELEMENT_BYTES > n:          # the ring needs a block per rank (MPI_SUM commutes)
        return "ring" if n * MIB >= m else _seg("ring_segmented", MIB)
    return "reduce_bcast"


def _choose_alltoall_1_10(n: int, m: int) -> str:
    if n == 2:
        return "pairwise"
    if m < 1000 and n > 12:
        return "bruck"
    return "linear" if m < 2000 else "pairwise"


def _choose_gather_1_10(n: int, m: int) -> str:
    if m > 92160:
        return _seg("linear_sync", 32 * KIB)
    if m > 6000:
        return _seg("linear_sync", KIB)
    return "binomial" if n > 60 or (n > 10 and m < 1024) else "linear"


def _choose_scatter_1_10(n: int, m: int) -> str:
    return "binomial" if n > 10 and m < 300 else "linear"


#: Open MPI 1.10.7 coll/tuned's fixed decision rule per collective.
CHOOSERS_1_10: dict[str, Chooser] = {
    "Barrier": _choose_barrier_1_10, "Bcast": _choose_bcast_1_10, "Gather": _choose_gather_1_10,
    "Scatter": _choose_scatter_1_10, "Reduce": _choose_reduce_1_10,
    "Allreduce": _choose_allreduce_1_10, "Alltoall": _choose_alltoall_1_10}

#: Rule sets by their conf name (``model.collectives``).
#: One algorithm per collective whatever n and m: binomial-tree Bcast, recursive-doubling
#: Allreduce, Bruck Alltoall (seed 001 §3.1, §5.5: the thesis' simulations; in Open MPI,
#: coll_tuned_use_dynamic_rules with coll_tuned_{bcast,allreduce,alltoall}_algorithm 6, 3, 3);
#: the other collectives as ompi-4.1.
CHOOSERS_BINOMIAL_RD_BRUCK: dict[str, Chooser] = {
    **CHOOSERS, "Bcast": lambda n, m: "binomial",
    "Allreduce": lambda n, m: "recursive_doubling",
    "Alltoall": lambda n, m: "pairwise" if n == 2 else "bruck"}
RULES: dict[str, dict[str, Chooser]] = {"ompi-4.1": CHOOSERS, "ompi-1.10": CHOOSERS_1_10,
                                        "binomial-rd-bruck": CHOOSERS_BINOMIAL_RD_BRUCK}


# -- algorithms: each returns the list of phases ----------------------------------------------
def phases(name: str, n: int, m: int, reduce_rate: float = 4e9, root: int = 0,
           algorithm: str | None = None, rules: str = DEFAULT_RULES) -> tuple[str, list[Phase]]:
    """(algorithm, phases) of collective ``name`` on ranks 0..n-1 with ``m`` bytes/rank, the
    algorithm as ``rules`` chooses it unless ``algorithm`` is given."""
    name = canonical(name)
    rule_set(rules)                     # a bad rule set is an error even when forced
    alg = algorithm or choose(name, n, m, rules)
    if n == 1:
        return alg, []
    base, seg = segmented(alg)
    gamma = m / reduce_rate
    if name == "Barrier":
        return alg, _barrier(base, n)
    if name == "Bcast":
        return alg, _bcast_segmented(base, seg, n, m, root)
    if name == "Reduce":
        return alg, _reduce(base, seg, n, m, root, reduce_rate)
    if name == "Gather":
        return alg, _gather_of(base, seg, n, m, root)
    if name == "Scatter":
        return alg, _reverse(_gather(base, n, m, root), 0.0)
    if name == "Allreduce":
        return alg, _allreduce_of(base, seg, n, m, gamma, reduce_rate)
    return alg, _alltoall(base, n, m)


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
        return sc + _shift(_allgather_halving(n, m, block), root, n)
    return [Phase.of((p + root) % n, (c + root) % n, m) for p, c in _tree_edges(alg, n)]


def _allgather_halving(n: int, m: int, block: int) -> list[Phase]:
    """The allgather of 4.1's scatter-allgather Bcast (``coll_base_bcast.c``
    ``ompi_coll_base_bcast_intra_scatter_allgather``): recursive doubling among the ranks
    that have a partner at distance ``mask``; off a power of two a rank whose partner is
    missing gets the data from one that has it, found by recursive halving. Counts follow
    the code (``curr_count``, ``recv_count``), in bytes, ranks relative to the root."""
    v = np.arange(n)
    curr = np.clip(m - v * block, 0, block)
    out: list[Phase] = []
    mask = 1
    while mask < n:
        remote = v ^ mask
        pair = remote < n
        got = np.where(pair, curr[np.minimum(remote, n - 1)], 0)
        out.append(Phase.of(v[pair], remote[pair], curr[pair], name="allgather"))
        curr = curr + got
        received = got
        tree = (v // mask) * mask
        alldata = n - tree - mask
        short = (remote // mask) * mask + mask > n
        half = mask >> 1
        while half:
            other = v ^ half
            root = (v // (half << 1)) * (half << 1)
            send = short & (other > v) & (v < root + alldata) & (other >= root + alldata) \
                & (other < n)
            if send.any():
                out.append(Phase.of(v[send], other[send], received[send], name="allgather"))
                gets = np.zeros(n, dtype=curr.dtype)
                gets[other[send]] = received[send]
                curr = curr + gets
                received = np.where(gets > 0, gets, received)
            half >>= 1
        mask <<= 1
    return out


def _subtree(c: np.ndarray, n: int) -> np.ndarray:
    """Size of the binomial subtree rooted at relative rank c (lowest set bit span)."""
    low = c & -c
    return np.minimum(low, n - c)


def _gather(alg: str, n: int, m: int, root: int) -> list[Phase]:
    r = np.arange(n)
    if alg in ("linear", "linear_nb"):
        return [Phase.of((r[1:] + root) % n, root, m)]
    fan = [Phase.of((p + root) % n, (c + root) % n, m * _subtree(c, n))
           for p, c in _tree_edges("binomial", n)]
    return _reverse(fan, 0.0)


def _recursive_doubling(n: int, m: float, gamma: float, grow: bool = False) -> list[Phase]:
    """Pairwise exchanges with newrank XOR 2^k; non-powers of two fold the extra ranks in
    first and out last, as Open MPI does (t2hx/doubling.py). ``grow``:
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
    # Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling;
    # off a power of two the pairs first swap halves, and the odd rank sends its reduced half.
    d = halving(n)
    out = []
    if d.extra:
        odd, even = d.fold
        half = math.ceil(m / 2)
        out = [Phase.of(np.r_[odd, even], np.r_[even, odd], half, gamma / 2, "fold"),
               Phase.of(odd, even, half, 0.0, "fold")]
    halves = []
    block = m / 2
    for dist in d.distances():          # distance 1 first, with the largest block
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


# -- segmented (pipelined) algorithms and 1.10's other builders --------------------------------
def _shift(ph: list[Phase], root: int, n: int) -> list[Phase]:
    """Phases built for root 0 (relative ranks) moved to ``root``."""
    if root % n == 0:
        return ph
    return [Phase((p.src + root) % n, (p.dst + root) % n, p.size, p.compute, p.name) for p in ph]


def _bcast_segmented(alg: str, seg: int, n: int, m: int, root: int) -> list[Phase]:
    if alg == "pipeline":
        src = np.arange(n - 1)
        return _shift(_pipelined(src, src + 1, src, np.full(n - 1, m), seg), root, n)
    if alg == "split_binary":
        return _shift(_split_binary(n, m, seg), root, n)
    return _bcast(alg, n, m, root)


def _reduce(alg: str, seg: int, n: int, m: int, root: int, rate: float) -> list[Phase]:
    if alg == "linear":        # the root combines the n - 1 contributions one after another
        return _shift([Phase.of(np.arange(1, n), 0, m, (n - 1) * m / rate)], root, n)
    if not seg:
        return _reverse(_bcast(_tree_of(alg), n, m, root), m / rate)
    parents, children = _fan_out_edges(alg, n)
    height = _heights(parents, children, n)
    return _shift(_pipelined(children, parents, height[children], np.full(len(children), m),
                             seg, rate), root, n)


def _fan_out_edges(alg: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(parent, child) relative ranks of a segmented tree, parents before their children."""
    if alg == "pipeline":
        src = np.arange(n - 1)
        return src, src + 1
    if alg == "binary":
        return _level_tree(n, 2)
    rounds = _tree_edges("binomial", n)
    return np.concatenate([p for p, _ in rounds]), np.concatenate([c for _, c in rounds])


def _level_tree(n: int, fanout: int) -> tuple[np.ndarray, np.ndarray]:
    """Open MPI's coll/tuned k-ary tree: relative rank s on level L (delta = fanout^L) has the
    children s + delta·i, i = 1…fanout; so for fanout 2 the root's left subtree holds the odd
    ranks and its right subtree the even ones, which split binary relies on."""
    parents: list[int] = []
    children: list[int] = []
    level, delta = [0], 1
    while level:
        below = []
        for s in level:
            kids = [c for c in (s + delta * i for i in range(1, fanout + 1)) if c < n]
            parents += [s] * len(kids)
            children += kids
            below += kids
        level, delta = below, delta * fanout
    return np.array(parents, dtype=np.int64), np.array(children, dtype=np.int64)


def _depths(parents: np.ndarray, children: np.ndarray, n: int) -> np.ndarray:
    depth = np.zeros(n, dtype=np.int64)
    for p, c in zip(parents.tolist(), children.tolist()):   # parents come first
        depth[c] = depth[p] + 1
    return depth


def _heights(parents: np.ndarray, children: np.ndarray, n: int) -> np.ndarray:
    """Longest path down to a leaf: when a rank of a fan-in can pass segment 0 on."""
    height = np.zeros(n, dtype=np.int64)
    for p, c in zip(parents[::-1].tolist(), children[::-1].tolist()):   # children first
        height[p] = max(height[p], height[c] + 1)
    return height


def _pipelined(src: np.ndarray, dst: np.ndarray, start: np.ndarray, total: np.ndarray,
               seg: int, rate: float | None = None) -> list[Phase]:
    """Edge e moves ``total[e]`` bytes in segments of ``seg``, its k-th in step start[e] + k: a
    rank forwards a segment in the step after it got it. ``rate``: the receivers combine
    what they got (a reduction), the busiest one sets the phase's compute time."""
    seg = _coarsen(seg, int(total.max(initial=0)), int(start.max(initial=0)) + 1)
    count = np.maximum(1, -(-total // seg))
    out = []
    for t in range(int((start + count).max(initial=0))):
        k = t - start
        on = (k >= 0) & (k < count)
        size = np.minimum(seg, total[on] - k[on] * seg)
        work = 0.0 if rate is None else float(np.bincount(dst[on], size).max()) / rate
        out.append(Phase.of(src[on], dst[on], size, work, "segment"))
    return out


def _coarsen(seg: int, total: int, depth: int) -> int:
    """The segment size modelled: ``seg`` (0: the whole message), or larger when S segments
    over ``depth`` edges would take more than MAX_PIPELINE_STEPS phases (S + depth − 1)."""
    room = max(1, MAX_PIPELINE_STEPS - depth + 1)
    whole = max(total, 1)
    return min(whole, max(seg if seg > 0 else whole, -(-total // room), 1))


def _split_binary(n: int, m: int, seg: int) -> list[Phase]:
    """Halves down the two subtrees of the binary tree, segmented, then pairs swap halves."""
    first = -(-m // 2)
    halves = (first, m - first)
    if min(halves) == 0 or seg > min(halves):     # too small to split: Open MPI's chain
        return _bcast_segmented("pipeline", seg, n, m, 0)
    parents, children = _level_tree(n, 2)
    depth = _depths(parents, children, n)
    own = np.where(np.arange(n) % 2 == 1, halves[0], halves[1])    # odd: left, first half
    out = _pipelined(parents, children, depth[parents], own[children], seg)
    ranks = np.arange(1, n - 1 if n % 2 == 0 else n)
    pair = np.where(ranks % 2 == 1, ranks + 1, ranks - 1)
    src, dst, size = ranks, pair, own[ranks]
    if n % 2 == 0:     # rank n - 1 has no partner: the root gives it the second half
        src, dst, size = np.append(src, 0), np.append(dst, n - 1), np.append(size, halves[1])
    return out + [Phase.of(src, dst, size, name="swap")]


def _gather_of(alg: str, seg: int, n: int, m: int, root: int) -> list[Phase]:
    if alg == "linear_sync":
        return _shift(_linear_sync(n, m, seg), root, n)
    return _gather(alg, n, m, root)


def _linear_sync(n: int, m: int, seg: int) -> list[Phase]:
    """Root 0 handshakes with rank 1, 2, … in turn (zero bytes to it, its first segment back);
    a rank's rest flows while the root handshakes with the next rank."""
    first = min(seg, m) if seg else m
    rest = m - first
    out: list[Phase] = []
    for i in range(1, n):
        src, dst, size = [0], [i], [0]
        if rest and i > 1:
            src, dst, size = [0, i - 1], [i, 0], [0, rest]
        out += [Phase.of(src, dst, size, name="sync"), Phase.of(i, 0, first, name="first")]
    return out + ([Phase.of(n - 1, 0, rest, name="rest")] if rest else [])


def _allreduce_of(alg: str, seg: int, n: int, m: int, gamma: float,
                  rate: float) -> list[Phase]:
    if alg == "ring_segmented":
        return _ring_segmented(n, m, seg, rate)
    return _allreduce(alg, n, m, gamma, rate)


def _ring_segmented(n: int, m: int, seg: int, rate: float) -> list[Phase]:
    """1.10's segmented ring: the reduce-scatter once per phase on a share of each block,
    then the ring allgather of whole blocks."""
    count, per_seg = m // ELEMENT_BYTES, max(1, seg // ELEMENT_BYTES)
    if count < n * per_seg:                 # Open MPI runs the plain ring then
        return _allreduce("ring", n, m, m / rate, rate)
    rounds, left = divmod(count, n * per_seg)
    rounds += int(left >= n and left > n * per_seg / 2)       # 1.10 rounds a large rest up
    r = np.arange(n)
    block = math.ceil(m / n)
    piece = math.ceil(block / rounds)
    step = Phase.of(r, (r + 1) % n, piece, piece / rate)
    return [step] * ((n - 1) * rounds) + [Phase.of(r, (r + 1) % n, block)] * (n - 1)
