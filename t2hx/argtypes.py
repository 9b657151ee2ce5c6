"""argparse ``type=`` callables shared by every command: numbers in range, input files that
are regular files, output folders that can be folders. A bad value ends in argparse's usage
line and one ``error: argument --OPTION: ... (fix: ...)`` line, exit 2, before any work."""

from __future__ import annotations

import argparse
import math
import re
import stat
from collections.abc import Callable
from pathlib import Path


def _number(kind: type, low: float | None, high: float | None = None, what: str = "",
            above: bool = False) -> Callable[[str], int | float]:
    """A parser of ``kind`` in low..high (``above``: strictly above low; None: unbounded)."""
    if low is None:
        bounds = "finite"
    else:
        bounds = (f"> {low:g}" if above else f">= {low:g}") if high is None else \
            f"in {'(' if above else ''}{low:g}..{high:g}{']' if above else ''}"

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except (TypeError, ValueError, OverflowError):
            raise argparse.ArgumentTypeError(
                f"{text[:60]!r} is not {'an integer' if kind is int else 'a number'} "
                f"(fix: give {what or 'a value'} {bounds})") from None
        if (isinstance(value, float) and not math.isfinite(value)) \
                or (low is not None and (value <= low if above else value < low)) \
                or (high is not None and value > high):
            raise argparse.ArgumentTypeError(
                f"{text[:60]!r} is out of range (fix: give {what or 'a value'} {bounds})")
        return value

    parse.__name__ = f"{kind.__name__} {bounds}"
    return parse


positive_int = _number(int, 1)
non_negative_int = _number(int, 0)
positive_float = _number(float, 0, above=True)
non_negative_float = _number(float, 0)
finite_float = _number(float, None)
lmc = _number(int, 0, 7, "an LMC")
#: Most seconds a wait, timeout or simulated window may be: a year (more is a typo).
MAX_SECONDS = 365 * 86400.0
seconds = _number(float, 0, MAX_SECONDS, "seconds", above=True)


def int_range(low: int, high: int | None = None, what: str = "") -> Callable[[str], int]:
    """An integer in low..high (high None: unbounded)."""
    return _number(int, low, high, what)  # type: ignore[return-value]


def input_file(text: str) -> str:
    """An existing regular file (not a folder, FIFO or device)."""
    path = Path(text)
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise argparse.ArgumentTypeError(
            f"{text!r}: {err.strerror} (fix: give an existing, readable file)") from None
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise argparse.ArgumentTypeError(
            f"{text!r} is {what} (fix: give an existing, readable file)")
    return text


def input_dir(text: str) -> str:
    """An existing folder."""
    if not text or not Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is not a folder (fix: give an existing "
                                         "folder)")
    return text


def _blocker(path: Path) -> Path | None:
    """The first existing non-folder among ``path`` and its parents (a folder is needed)."""
    for p in (path, *path.parents):
        if p.exists():
            return None if p.is_dir() else p
    return None


def output_dir(text: str) -> str:
    """A folder to write into: absent (it is created) or a folder, under no file."""
    if not text:
        raise argparse.ArgumentTypeError("empty path (fix: give a folder to write into)")
    block = _blocker(Path(text))
    if block is not None:
        raise argparse.ArgumentTypeError(f"{str(block)!r} is a file where a folder is needed "
                                         "(fix: give a folder to write into)")
    return text


def output_file(text: str) -> str:
    """A file to write: absent or a regular file, in a folder that is or can be created."""
    path = Path(text)
    if not text or text.endswith("/") or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder (fix: give a file name to "
                                         "write)")
    if path.exists() and not path.is_file():
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular file (fix: give a file "
                                         "name to write)")
    block = _blocker(path.parent)
    if block is not None:
        raise argparse.ArgumentTypeError(f"{str(block)!r} is a file where a folder is needed "
                                         "(fix: give a file in a folder you can write)")
    return text


def as_path(check: Callable[[str], str]) -> Callable[[str], Path]:
    """``check`` then :class:`~pathlib.Path` (for options the command uses as a Path)."""
    def parse(text: str) -> Path:
        return Path(check(text))

    parse.__name__ = check.__name__
    return parse


def input_file_or_stdin(text: str) -> str:
    """``-`` (stdin) or an existing regular file."""
    return text if text == "-" else input_file(text)


def unit_interval(text: str) -> float:
    """A probability in (0, 1]."""
    return float(_number(float, 0, 1, "a probability", above=True)(text))


def _int_list(text: str, least: int, example: str) -> str:
    """A comma list of integers >= ``least``, kept as text (the command splits it)."""
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or min(values) < least:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma list of integers >= {least} "
                                         f"(fix: e.g. {example})")
    return text


def positive_int_list(text: str) -> str:
    """A comma list of integers >= 1."""
    return _int_list(text, 1, "1,2,4")


def non_negative_int_list(text: str) -> str:
    """A comma list of integers >= 0."""
    return _int_list(text, 0, "0,32,256")


def msglog(text: str) -> str:
    """IMB's ``-msglog LO:HI``: message sizes 2^LO .. 2^HI bytes, 0 <= LO <= HI <= 31 (IMB's
    sizes are ints), kept as text."""
    lo, _, hi = text.partition(":")
    if not (lo.isdigit() and hi.isdigit() and int(lo) <= int(hi) <= 31):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not LO:HI with 0 <= LO <= HI <= 31 "
                                         "(fix: e.g. 0:22)")
    return text


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")


def name(text: str) -> str:
    """A name (plane, benchmark, campaign, profile, file prefix): letters, digits, ``_.+-``,
    not starting with ``.`` or ``-``, at most 100 characters; names become paths and lines."""
    if not _NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text[:60]!r} is not a name (fix: use letters, digits, '_', '.', '+' and '-', "
            "starting with a letter or digit)")
    return text


def text_line(text: str) -> str:
    """Free text on one line: not empty, printable, at most 4,096 characters."""
    if not text or len(text) > 4096 or not text.isprintable() \
            or any("\ud800" <= c <= "\udfff" for c in text):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is empty, too long or not one line "
                                         "of printable text (fix: give one line of text)")
    return text


def json_object(text: str) -> dict:
    """A JSON object on the command line (a job's study input)."""
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not JSON ({err.msg}) (fix: give "
                                         "a JSON object, e.g. '{\"size\": 1048576}')") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a JSON object (fix: give "
                                         "one, e.g. '{\"size\": 1048576}')")
    return value


def host(text: str) -> str:
    """A host name or IP address (ASCII letters, digits, ``.-:``)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}", text):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a host name or address "
                                         "(fix: e.g. 0.0.0.0 or sm1.example.org)")
    return text


def system(text: str) -> str:
    """A system: a name of conf/systems/ or a conf file (a regular file, not a folder)."""
    if not text_ok(text):
        raise argparse.ArgumentTypeError(f"{text[:60]!r} is not a system name or file (fix: "
                                         "give conf/systems/<sys>.yaml or its name)")
    path = Path(text)
    as_path = "/" in text or path.suffix in (".yaml", ".yml")
    if path.exists() and not path.is_file() and (as_path or not path.is_dir()):
        return input_file(text)     # a FIFO, device, or a folder named as a path: refused
    return text


def text_ok(text: str) -> bool:
    return bool(text) and len(text) <= 4096 and text.isprintable() \
        and not any("\ud800" <= c <= "\udfff" for c in text)
