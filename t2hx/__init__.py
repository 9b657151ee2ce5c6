"""t2hx: benchmark and reproducibility framework for HPC interconnect studies.

``ROOT`` is the project checkout (conf/, hostfiles/, log/, paper/, parx/ ... live there), found
once at import by :func:`find_root`: from ``$T2HX_ROOT``, else the checkout this package
sits in (run/setup's editable install), else the working directory or its nearest parent
that is a checkout (an installed package run from inside one). Importing never fails when
none is found: ``ROOT`` is then the working directory, and :func:`require_checkout` (which
the command line calls before any command runs) raises the one-line error."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from t2hx.errors import T2hxError

__version__ = "0.1.0"

#: The environment variable naming the checkout, for a t2hx installed outside it.
ROOT_ENV = "T2HX_ROOT"
FIX = f"set {ROOT_ENV} to the directory holding conf/, or run from inside a checkout"


def is_checkout(path: Path) -> bool:
    """A t2hx checkout: conf/systems/ and pyproject.toml."""
    return (path / "conf" / "systems").is_dir() and (path / "pyproject.toml").is_file()


def _cwd() -> Path | None:
    try:
        return Path.cwd().resolve()
    except OSError:                   # the working directory was removed
        return None


def find_root(environ: Mapping[str, str] | None = None, cwd: Path | None = None,
              package: Path | None = None) -> Path:
    """The checkout: ``$T2HX_ROOT`` when set (a directory holding conf/; anything else is an
    error, not a fall-through), else the parent of ``package`` (default: this package's
    directory) when it is a checkout, else ``cwd`` (default: the working directory) or its
    nearest parent that is one. Raises :class:`T2hxError` when there is none."""
    environ = os.environ if environ is None else environ
    given = environ.get(ROOT_ENV)
    if given:
        path = Path(given).expanduser().resolve()
        if not (path / "conf").is_dir():
            raise T2hxError(f"{given} is not a t2hx checkout (no conf/ there)", field=ROOT_ENV,
                            fix=f"set {ROOT_ENV} to the directory holding conf/, or unset it")
        return path
    own = (package or Path(__file__).parent).resolve().parent
    if is_checkout(own):
        return own
    here = cwd.resolve() if cwd is not None else _cwd()
    for path in [here, *here.parents] if here is not None else []:
        if is_checkout(path):
            return path
    raise T2hxError("no t2hx checkout found", fix=FIX)


def _import_root() -> tuple[Path, T2hxError | None]:
    try:
        return find_root(), None
    except T2hxError as err:          # importing never fails: require_checkout() reports it
        return _cwd() or Path(os.sep), err


#: The project checkout (conf/, hostfiles/, parx/ ... live here); without one, the working
#: directory, and :data:`ROOT_ERROR` says why.
ROOT, ROOT_ERROR = _import_root()


def require_checkout() -> Path:
    """:data:`ROOT`, or the one-line error of why no checkout was found at import."""
    if ROOT_ERROR is not None:
        raise ROOT_ERROR
    return ROOT
