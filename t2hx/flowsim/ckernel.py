"""The compiled kernels (t2hx/flowsim/kernel/, built by run/setup): loaded once per process,
with one clear error when one is not built."""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

from t2hx.errors import T2hxError

KERNELS = Path(__file__).resolve().parent / "kernel"


@cache
def load(library: str, entry: str, what: str) -> ctypes.CDLL:
    """``library`` (a file of t2hx/flowsim/kernel/) with ``entry`` returning an int."""
    path = KERNELS / library
    if not path.exists():
        raise T2hxError(f"{what}'s kernel is not built: {path}",
                        fix="run run/setup (it runs make in t2hx/flowsim/kernel)")
    lib = ctypes.CDLL(str(path))
    if not hasattr(lib, entry):       # built from an older source
        raise T2hxError(f"{what}'s kernel {path} has no {entry}: it is older than its source",
                        fix="run run/setup (it runs make in t2hx/flowsim/kernel)")
    getattr(lib, entry).restype = ctypes.c_int
    return lib
