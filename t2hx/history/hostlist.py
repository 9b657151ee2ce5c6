"""Slurm host lists (``node[001-003,7],gpu1``, ``r[01-02]n[01-02]``) to names and back, as
``scontrol show hostnames`` and ``scontrol show hostlist`` do. A name with several bracket
groups expands through ClusterShell's ``NodeSet`` (a ReFrame dependency), in Slurm's order
(the leftmost group outermost); one-group lists keep the order they are written in."""

from __future__ import annotations

import re

_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in {text!r}")
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"unbalanced '[' in {text!r}")
    parts.append(text[start:])
    return parts


def _numbers(ranges: str, whole: str) -> list[str]:
    out = []
    for item in ranges.split(","):
        m = _RANGE.fullmatch(item)
        if not m:
            raise ValueError(f"range {item!r} in {whole!r} is not N or N-M")
        first, last = m.group(1), m.group(2) or m.group(1)
        lo, hi, width = int(first), int(last), len(first)
        if hi < lo:
            raise ValueError(f"range {item!r} in {whole!r} runs backwards")
        out += [str(n).zfill(width) for n in range(lo, hi + 1)]
    return out


def _nested(part: str, whole: str) -> list[str]:
    """``r[01-02]n[01-02]`` → r01n01, r01n02, r02n01, r02n02 (ValueError if malformed)."""
    from ClusterShell.NodeSet import NodeSet, NodeSetParseError

    if not re.fullmatch(r"(?:[^\[\],]+\[[0-9,-]+\])+[^\[\],]*", part):
        raise ValueError(f"{part!r} in {whole!r} is not a host pattern")
    try:
        return list(NodeSet(part))
    except NodeSetParseError as err:
        raise ValueError(f"{part!r} in {whole!r}: {err}") from None


def expand(hostlist: str) -> list[str]:
    """``a[1-3],b`` → ``['a1', 'a2', 'a3', 'b']`` (ValueError on a malformed list)."""
    names: list[str] = []
    for part in _split_top(hostlist.strip()):
        if not part:
            raise ValueError(f"empty name in host list {hostlist!r}")
        m = re.fullmatch(r"([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)", part)
        if m:
            names += [m.group(1) + n + m.group(3) for n in _numbers(m.group(2), hostlist)]
        elif "[" in part or "]" in part:
            names += _nested(part, hostlist)
        else:
            names.append(part)
    return names


def compress(names: list[str]) -> str:
    """The shortest one-bracket host list of ``names`` (order kept within a prefix)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m:
            groups.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
        else:
            plain.append(name)
    parts = plain[:]
    for (prefix, width), nums in groups.items():
        nums = sorted(set(nums))
        runs, lo = [], nums[0]
        for i, a in enumerate(nums):
            if i + 1 == len(nums) or nums[i + 1] != a + 1:
                runs.append(f"{lo:0{width}d}" + ("" if a == lo else f"-{a:0{width}d}"))
                lo = nums[i + 1] if i + 1 < len(nums) else a
        parts.append(f"{prefix}{runs[0]}" if len(runs) == 1 and "-" not in runs[0]
                     else f"{prefix}[{','.join(runs)}]")
    return ",".join(parts)
