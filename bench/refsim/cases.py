"""The reference-simulator cases: 3 fabrics x 5 traffic patterns (docs/validation.md).

Every fabric is a small system conf under ``tests/data/refsim/<fabric>/system.yaml``, routed by
the real OpenSM exactly as t2hx routes it (:func:`t2hx.flowsim.network.open_network`). Ranks
are the conf's hosts in ``System.hostnames()`` order (``hostfile.txt`` beside the conf). Every
flow starts at t = 0 and moves a fixed number of bytes; the patterns are drawn with fixed seeds
so they are data, committed as ``<pattern>.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "tests" / "data" / "refsim"

MIB = 1 << 20
KIB = 1 << 10
#: IB MTU of every packet (bytes); message sizes are multiples of it (the flit model cuts a
#: message into whole MTU packets).
MTU = 2048


@dataclass(frozen=True)
class FabricCase:
    name: str          # directory under tests/data/refsim
    plane: str
    engine: str        # OpenSM routing engine (the conf's first)

    @property
    def dir(self) -> Path:
        return DATA / self.name

    @property
    def system(self) -> Path:
        return self.dir / "system.yaml"


FABRICS = (
    FabricCase("fattree", "fattree", "ftree"),
    FabricCase("hyperx", "hyperx", "dfsssp"),
    FabricCase("hyperx-missing", "hyperx", "dfsssp"),
)

PATTERNS = ("shift", "permutation", "incast", "alltoall", "bisection")

#: Pattern parameters (the same on every fabric).
SHIFT_K = 5                 # rank i sends to rank (i + 5) mod N
PERM_SEED = 26001           # random permutation without fixed points
INCAST_SENDERS = 8          # senders into one destination
INCAST_SEED = 26002
INCAST_DST = 0
BISECTION_SEED = 26003      # random halves, random pairs across, both directions
FLOW_BYTES = 1 * MIB        # shift, permutation, incast, bisection: bytes per flow
ALLTOALL_BYTES = 64 * KIB   # all-to-all: bytes per (src, dst) pair


def fabric(name: str) -> FabricCase:
    for f in FABRICS:
        if f.name == name:
            return f
    raise KeyError(f"unknown fabric '{name}' (one of {', '.join(f.name for f in FABRICS)})")


def pattern_pairs(pattern: str, n: int) -> tuple[list[tuple[int, int]], int, dict]:
    """(src, dst) rank pairs of ``pattern`` on ``n`` ranks, the bytes per flow and the
    parameters that define it (recorded in the pattern file)."""
    if pattern == "shift":
        return [(i, (i + SHIFT_K) % n) for i in range(n)], FLOW_BYTES, {"k": SHIFT_K}
    if pattern == "permutation":
        rng = np.random.default_rng(PERM_SEED)
        while True:
            perm = rng.permutation(n)
            if not (perm == np.arange(n)).any():
                break
        return [(i, int(perm[i])) for i in range(n)], FLOW_BYTES, {"seed": PERM_SEED}
    if pattern == "incast":
        rng = np.random.default_rng(INCAST_SEED)
        others = np.array([r for r in range(n) if r != INCAST_DST])
        senders = sorted(int(s) for s in rng.choice(others, INCAST_SENDERS, replace=False))
        return [(s, INCAST_DST) for s in senders], FLOW_BYTES, {
            "seed": INCAST_SEED, "senders": INCAST_SENDERS, "dst": INCAST_DST}
    if pattern == "alltoall":
        return [(s, d) for s in range(n) for d in range(n) if s != d], ALLTOALL_BYTES, {}
    if pattern == "bisection":
        rng = np.random.default_rng(BISECTION_SEED)
        order = rng.permutation(n)
        half_a, half_b = order[: n // 2], order[n // 2:]
        pairs = []
        for a, b in zip(half_a, half_b):
            pairs += [(int(a), int(b)), (int(b), int(a))]
        return sorted(pairs), FLOW_BYTES, {"seed": BISECTION_SEED}
    raise KeyError(f"unknown pattern '{pattern}' (one of {', '.join(PATTERNS)})")
