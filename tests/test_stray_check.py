"""The suite's end-of-run check (tests/conftest.py) counts only what this session's test
clusters left: a cluster of another test run on the machine is not ours (a CI run beside a
developer's run once failed on the developer's live namespaces)."""

from __future__ import annotations

import secrets
import subprocess

import pytest

from tests.cluster import NETNS_RECORD
from tests.conftest import stray_namespaces


@pytest.fixture
def namespaces():
    made: list[str] = []

    def add(name: str) -> str:
        subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
        made.append(name)
        return name

    yield add
    for name in made:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_only_the_sessions_own_namespaces_are_stray(tmp_path, namespaces):
    tag = secrets.token_hex(2)
    ours = namespaces(f"t2hx{tag}-cn001")
    theirs = namespaces(f"t2hx{tag}-cn002")       # another run's cluster, not listed here
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / NETNS_RECORD).write_text(f"{ours}\nt2hx{tag}-gone\n")
    stray = stray_namespaces(tmp_path)
    assert stray == [ours]
    assert theirs not in stray
