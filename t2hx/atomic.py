"""Atomic files and directories: a reader (or a killed writer's rerun) sees the old content
or the new, never half of it. Everything is written beside the target under a dot-name and
renamed into place (rename is atomic within one filesystem).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_file(path: str | Path, mode: int = 0o644) -> Iterator[Path]:
    """A temp path beside ``path``; renamed onto it when the block ends without error,
    removed otherwise."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, data: str | bytes) -> Path:
    """Write text or bytes to ``path`` atomically; returns the path."""
    with staged_file(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
    return Path(path)


def atomic_copy(src: str | Path, path: str | Path) -> Path:
    with staged_file(path) as tmp:
        shutil.copyfile(src, tmp)
    return Path(path)


def atomic_with(path: str | Path, write: Callable[[Path], None]) -> Path:
    """``write(tmp)`` fills a temp file (e.g. a library that wants a file name)."""
    with staged_file(path) as tmp:
        write(tmp)
    return Path(path)


@contextmanager
def staged_dir(path: str | Path) -> Iterator[Path]:
    """A fresh directory beside ``path`` to fill; when the block ends without error it
    replaces ``path`` (an existing one is moved aside first, then removed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        yield fresh
        for item in fresh.rglob("*"):
            os.chmod(item, 0o755 if item.is_dir() else 0o644)
        os.chmod(fresh, 0o755)
        replace_dir(fresh, path)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


def replace_dir(fresh: Path, path: Path) -> None:
    """Rename the finished directory ``fresh`` onto ``path``."""
    old = None
    if path.exists():
        old = path.parent / f".{path.name}.old-{os.getpid()}"
        os.replace(path, old)
    os.replace(fresh, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
