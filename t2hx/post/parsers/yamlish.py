"""The indentation-structured ``key: value`` YAML that miniFE and CoMD write.

Their files are not always valid YAML (duplicate keys such as CoMD's repeated ``Timer:``,
unquoted colons), so they are read as an outline: each line's key path is the chain of
less-indented keys above it. Returns ``[(path_tuple, value_str)]`` in file order.
"""

from __future__ import annotations


def outline(text: str) -> list[tuple[tuple[str, ...], str]]:
    stack: list[tuple[int, str]] = []
    out: list[tuple[tuple[str, ...], str]] = []
    for raw in text.splitlines():
        if not raw.strip() or ":" not in raw:
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        key, _, value = raw.strip().partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = tuple(k for _, k in stack) + (key.strip(),)
        out.append((path, value.strip()))
        stack.append((indent, key.strip()))
    return out


def lookup(items: list[tuple[tuple[str, ...], str]], *path: str) -> str | None:
    """The first value at exactly this key path."""
    for p, v in items:
        if p == path:
            return v
    return None
