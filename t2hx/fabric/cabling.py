"""Cable lengths of a switch graph laid out in cabinets (seed 001 §5.6, after Fujiwara et
al., "Swap-and-randomize", TPDS 2015): 8 switches per cabinet, switch ``i`` in cabinet
``i // 8`` (ring order, so ring neighbours share a cabinet), cabinets on a 2-D grid of
``r = ceil(sqrt(c))`` rows and ``ceil(c / r)`` columns filled row by row, each cabinet
0.6 m wide and 2.1 m deep. A cable inside a cabinet is 1 m (its overhead); one between
cabinets runs the Manhattan distance between them plus 2 m. Host cables are left out, as
seed 001 does. The layout is data (:class:`Layout`), so a site can give its own."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Layout:
    per_cabinet: int = 8
    width_m: float = 0.6
    depth_m: float = 2.1
    intra_m: float = 1.0
    inter_overhead_m: float = 2.0

    def grid(self, switches: int) -> tuple[int, int]:
        cabinets = math.ceil(switches / self.per_cabinet)
        rows = math.ceil(math.sqrt(cabinets))
        return rows, math.ceil(cabinets / rows)


def cable_lengths(n: int, edges: list[tuple[int, int]], layout: Layout = Layout()) -> np.ndarray:
    """Length in metres of every inter-switch cable, in ``edges`` order."""
    pairs = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    _rows, cols = layout.grid(n)
    cab = pairs // layout.per_cabinet
    row, col = cab // cols, cab % cols
    manhattan = (np.abs(col[:, 0] - col[:, 1]) * layout.width_m
                 + np.abs(row[:, 0] - row[:, 1]) * layout.depth_m)
    same = cab[:, 0] == cab[:, 1]
    return np.where(same, layout.intra_m, manhattan + layout.inter_overhead_m)
