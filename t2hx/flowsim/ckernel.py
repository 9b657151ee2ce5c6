"""The compiled kernels (t2hx/flowsim/kernel/): loaded once per process, with one clear error
when one cannot be had. In a checkout run/setup builds them beside their sources; without
that build (an installed package, whose directory may not be writable), the first use builds
them from the sources the package ships (its package data) with the same Makefile, into
``<work>/kernels/<digest of the sources>/`` (``T2HX_WORK_ROOT``, else the checkout's work/)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from t2hx.errors import T2hxError
from t2hx.paths import work_root

KERNELS = Path(__file__).resolve().parent / "kernel"
SETUP_FIX = "run run/setup (it runs make in t2hx/flowsim/kernel)"


def sources() -> list[Path]:
    """What a kernel is built from: the Makefile and the C sources."""
    return [KERNELS / "Makefile", *sorted(KERNELS.glob("*.c"))]


def build_dir() -> Path:
    """Where a kernel missing beside its sources is built: one directory per version of the
    sources, so a changed source never loads an older build."""
    digest = hashlib.sha256()
    for path in sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return work_root() / "kernels" / digest.hexdigest()[:16]


def build(library: str, what: str) -> Path:
    """``library`` built from the package's sources in :func:`build_dir` (once: a later call
    finds it). Each build runs in its own temporary directory and renames its result into
    place, so processes starting together never load a half-written library."""
    dest = build_dir()
    path = dest / library
    if path.exists():
        return path
    make = shutil.which("make")
    if make is None:
        raise T2hxError(f"{what}'s kernel is not built and make is not installed",
                        fix="install make and a C compiler (Debian: build-essential), or "
                        + SETUP_FIX)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest, prefix=".build-") as tmp:
        for src in sources():
            shutil.copyfile(src, Path(tmp) / src.name)
        done = subprocess.run([make, "-s", "-C", tmp, library], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["make failed"])[-1]
            raise T2hxError(f"{what}'s kernel failed to build in {dest}: {last}",
                            fix="install a C11 compiler (gcc; or set CC) and make, or " + SETUP_FIX)
        os.replace(Path(tmp) / library, path)
    return path


@cache
def load(library: str, entry: str, what: str) -> ctypes.CDLL:
    """``library`` (a kernel of t2hx/flowsim/kernel/) with ``entry`` returning an int: run/setup's
    build beside the sources, else one built from them on first use (:func:`build`)."""
    path = KERNELS / library
    if not path.exists():
        path = build(library, what)
    lib = ctypes.CDLL(str(path))
    if not hasattr(lib, entry):       # built from an older source
        raise T2hxError(f"{what}'s kernel {path} has no {entry}: it is older than its source",
                        fix=SETUP_FIX)
    getattr(lib, entry).restype = ctypes.c_int
    return lib
