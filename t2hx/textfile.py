"""Reading the text files users hand over (confs, studies, hostfiles, demand and job files).

Every reader goes through :func:`read_text` (and YAML through :func:`load_yaml`), so an
unreadable file, bytes that are not UTF-8, bad YAML or a duplicated YAML key end in one
T2hxError line naming the file, never in a traceback.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import yaml

from t2hx.errors import T2hxError

_MERGE = "tag:yaml.org,2002:merge"
#: Larger than any conf, study, hostfile, demand or job file (the 672-node demand file is
#: a few hundred kB): a bigger one is a wrong path, read into memory otherwise.
MAX_BYTES = 64 << 20


def read_text(path: str | Path, error: type[T2hxError] = T2hxError, what: str = "file",
              fix: str = "pass an existing, readable file") -> str:
    """The file's text; ``error`` (a T2hxError subclass) names the file on any failure."""
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):     # a FIFO or device would block or never end
            raise error(f"{what} is not a regular file", file=path, fix=fix)
        if info.st_size > MAX_BYTES:
            raise error(f"{what} of {info.st_size} bytes is over the {MAX_BYTES >> 20} MiB "
                        "limit", file=path, fix=fix)
        data = path.read_bytes()
    except OSError as err:
        raise error(f"cannot read {what} ({err.strerror or err})", file=path,
                    fix=fix) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise error(f"not UTF-8 text (byte 0x{data[err.start]:02x} on line {line})", file=path,
                    fix="save the file as UTF-8 (e.g. iconv -t UTF-8)") from None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping: PyYAML silently keeps the
    last one, so a pasted duplicate ``racks:`` would change the system without a word."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                              _StrictLoader.construct_mapping)


def load_yaml(path: str | Path, error: type[T2hxError], what: str, fix: str) -> tuple[Any, str]:
    """(data, text) of a YAML file; unreadable, non-UTF-8 or invalid YAML raise ``error``."""
    text = read_text(path, error, what, fix)
    try:
        return yaml.load(text, Loader=_StrictLoader), text
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or type(err).__name__
        raise error(f"not valid YAML ({where}{problem})", file=path,
                    fix="fix the YAML syntax") from None
    except (ValueError, RecursionError) as err:
        # PyYAML's own constructors raise these, e.g. the date 2020-13-45 or deep nesting.
        raise error(f"not valid YAML ({type(err).__name__}: {err})", file=path,
                    fix="quote the value or fix the YAML") from None
