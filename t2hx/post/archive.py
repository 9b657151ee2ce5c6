"""A campaign's raw outputs packed: ``runs/``, ``companion/`` and ``histories/`` as one
``.tar.xz`` each.

A paper-scale campaign keeps thousands of small text outputs (IMB tables, mpiGraph matrices)
whose bulk is repetition; packed, a committed log is a fraction of the size and still
replays byte for byte. ``t2hx replay --pack`` packs a campaign; readers take a folder or its
archive (:func:`folder`), never both; ``t2hx campaign run`` unpacks a packed campaign before
it appends to it (:func:`unpack`), so a campaign committed part-way resumes.

An archive over :data:`PART_BYTES` is committed as numbered parts (``runs.tar.xz.000``,
``.001``, ...: the archive's bytes cut in order, as ``split -d -a 3`` would), so no committed
file is large; ``cat runs.tar.xz.* | tar -xJ`` unpacks them by hand.
"""

from __future__ import annotations

import lzma
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from typing import BinaryIO
from contextlib import contextmanager
from pathlib import Path

from t2hx.atomic import atomic_write, staged_file
from t2hx.errors import T2hxError
from t2hx.wire import COMPANION_DIR

PACKED = ("runs", COMPANION_DIR, "histories")   # histories: seed 004's per-sample rows
SUFFIX = ".tar.xz"
PART_BYTES = 1 << 20     # parts stay well under the 2 MiB past which a committed file is large


def archive_of(logdir: Path, name: str) -> Path:
    return Path(logdir) / f"{name}{SUFFIX}"


def parts_of(logdir: Path, name: str) -> list[Path]:
    """The files holding ``name``'s archive, in order: the archive itself, or its parts;
    [] when it is not packed."""
    whole = archive_of(logdir, name)
    parts = sorted(Path(logdir).glob(f"{whole.name}.[0-9][0-9][0-9]"))
    if whole.is_file() and parts:
        raise T2hxError(f"both {whole.name} and its parts {parts[0].name}...", file=logdir,
                        fix=f"keep one: remove {whole.name} or the numbered parts")
    return [whole] if whole.is_file() else parts


def split(tar: Path, part_bytes: int = PART_BYTES) -> list[Path]:
    """Cut an archive over ``part_bytes`` into numbered parts beside it (each written
    atomically, stale higher-numbered parts removed, the archive removed last); the files
    that now hold it."""
    size = tar.stat().st_size
    count = -(-size // part_bytes) if size > part_bytes else 0
    parts = [tar.with_name(f"{tar.name}.{i:03d}") for i in range(count)]
    with open(tar, "rb") as whole:
        for part in parts:
            atomic_write(part, whole.read(part_bytes))
    for stale in tar.parent.glob(f"{tar.name}.[0-9][0-9][0-9]"):
        if stale not in parts:
            stale.unlink()
    if not parts:
        return [tar]
    tar.unlink()
    return parts


@contextmanager
def folder(logdir: Path, name: str) -> Iterator[Path]:
    """A root whose ``name/`` is the campaign's folder: ``logdir`` itself, or a temporary
    directory holding the archive unpacked (removed on exit)."""
    logdir = Path(logdir)
    parts = parts_of(logdir, name)
    if not parts:
        yield logdir
        return
    if (logdir / name).exists():
        raise T2hxError(f"both {name}/ and {parts[0].name}", file=logdir,
                        fix=f"a campaign resumed after packing: move {parts[0].name} aside, "
                        "rerun the campaign or unpack it into the folder, then pack again")
    with tempfile.TemporaryDirectory(prefix="t2hx-unpacked-") as tmp:
        try:
            with _joined(parts) as stream, tarfile.open(fileobj=stream, mode="r:xz") as packed:
                packed.extractall(tmp, filter="data")
        except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as err:
            raise T2hxError(f"cannot unpack ({err})", file=parts[0],
                            fix="restore the archive (git checkout) or rerun the campaign") from None
        yield Path(tmp)


@contextmanager
def _joined(parts: list[Path]) -> Iterator[BinaryIO]:
    """One seekable stream over the parts in order (a temp file when there are several)."""
    if len(parts) == 1:
        with open(parts[0], "rb") as whole:
            yield whole
        return
    with tempfile.TemporaryFile() as whole:
        for part in parts:
            with open(part, "rb") as data:
                shutil.copyfileobj(data, whole)
        whole.seek(0)
        yield whole


def pack(logdir: Path, name: str, part_bytes: int = PART_BYTES) -> list[Path] | None:
    """Replace ``logdir/name/`` by its archive (members sorted, times and owners zeroed, so
    the same outputs pack to the same bytes), cut into parts when large (:func:`split`); the
    files written, None when there is no such folder."""
    src = Path(logdir) / name
    if not src.is_dir():
        return None
    tar = archive_of(logdir, name)
    with staged_file(tar) as tmp, tarfile.open(tmp, "w:xz") as out:
        for path in [src, *sorted(src.rglob("*"))]:
            info = out.gettarinfo(str(path), arcname=path.relative_to(src.parent).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with open(path, "rb") as data:
                    out.addfile(info, data)
            else:
                out.addfile(info)
    parts = split(tar, part_bytes)
    shutil.rmtree(src)
    return parts


def unpack(logdir: Path, name: str) -> bool:
    """Turn ``name.tar.xz`` (or its parts) back into ``logdir/name/`` (unpacked beside it,
    renamed into place, then the archive removed); whether there was one."""
    logdir = Path(logdir)
    parts = parts_of(logdir, name)
    if not parts:
        return False
    with folder(logdir, name) as root:       # refuses a folder beside its archive
        staged = Path(tempfile.mkdtemp(dir=logdir, prefix=f".{name}.", suffix=".tmp"))
        try:
            shutil.move(str(root / name), staged / name)
            (staged / name).rename(logdir / name)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    for part in parts:
        part.unlink()
    return True
