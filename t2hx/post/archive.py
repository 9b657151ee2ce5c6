"""A campaign's raw outputs packed: ``runs/``, ``companion/`` and ``histories/`` as one
``.tar.xz`` each.

A paper-scale campaign keeps thousands of small text outputs (IMB tables, mpiGraph matrices)
whose bulk is repetition; packed, a committed log is a fraction of the size and still
replays byte for byte. ``t2hx replay --pack`` packs a campaign; readers take a folder or its
archive (:func:`folder`), never both; ``t2hx campaign run`` unpacks a packed campaign before
it appends to it (:func:`unpack`), so a campaign committed part-way resumes.
"""

from __future__ import annotations

import lzma
import shutil
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from t2hx.atomic import staged_file
from t2hx.errors import T2hxError
from t2hx.wire import COMPANION_DIR

PACKED = ("runs", COMPANION_DIR, "histories")   # histories: seed 004's per-sample rows
SUFFIX = ".tar.xz"


def archive_of(logdir: Path, name: str) -> Path:
    return Path(logdir) / f"{name}{SUFFIX}"


@contextmanager
def folder(logdir: Path, name: str) -> Iterator[Path]:
    """A root whose ``name/`` is the campaign's folder: ``logdir`` itself, or a temporary
    directory holding the archive unpacked (removed on exit)."""
    logdir = Path(logdir)
    tar = archive_of(logdir, name)
    if not tar.is_file():
        yield logdir
        return
    if (logdir / name).exists():
        raise T2hxError(f"both {name}/ and {tar.name}", file=logdir,
                        fix=f"a campaign resumed after packing: move {tar.name} aside, rerun "
                        "the campaign or unpack it into the folder, then pack again")
    with tempfile.TemporaryDirectory(prefix="t2hx-unpacked-") as tmp:
        try:
            with tarfile.open(tar, "r:xz") as packed:
                packed.extractall(tmp, filter="data")
        except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as err:
            raise T2hxError(f"cannot unpack ({err})", file=tar,
                            fix="restore the archive (git checkout) or rerun the campaign") from None
        yield Path(tmp)


def pack(logdir: Path, name: str) -> Path | None:
    """Replace ``logdir/name/`` by its archive (members sorted, times and owners zeroed, so
    the same outputs pack to the same bytes); None when there is no such folder."""
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
    shutil.rmtree(src)
    return tar


def unpack(logdir: Path, name: str) -> bool:
    """Turn ``name.tar.xz`` back into ``logdir/name/`` (unpacked beside it, renamed into place,
    then the archive removed); whether there was one."""
    logdir = Path(logdir)
    tar = archive_of(logdir, name)
    if not tar.is_file():
        return False
    with folder(logdir, name) as root:       # refuses a folder beside its archive
        staged = Path(tempfile.mkdtemp(dir=logdir, prefix=f".{name}.", suffix=".tmp"))
        try:
            shutil.move(str(root / name), staged / name)
            (staged / name).rename(logdir / name)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
    tar.unlink()
    return True
