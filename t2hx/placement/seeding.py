"""Reproducible random streams: one per (seed, label…), independent of call order."""

from __future__ import annotations

import zlib

import numpy as np


def rng_for(seed: int, *labels: object) -> np.random.Generator:
    """A generator for ``seed`` and a tuple of labels (placement name, node count…).

    Labels are hashed with CRC-32 (stable across Python runs, unlike ``hash``), so the same
    inputs always give the same stream and different placements never share one."""
    words = [int(seed) & 0xFFFFFFFF]
    for label in labels:
        words.append(zlib.crc32(str(label).encode()))
    return np.random.default_rng(np.random.SeedSequence(words))
