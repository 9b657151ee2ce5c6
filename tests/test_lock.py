"""The Python pins (#50): `pyproject.toml` declares every dependency and extra with an exact
version, and `requirements.lock` (hashed, from the `uv pip compile` command in its header) holds
each of them at that version, every entry with a hash, so `pip --require-hashes` (run/setup)
installs exactly what the declarations say."""

from __future__ import annotations

import re
import tomllib

from t2hx import ROOT

PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = list(project["dependencies"]) + [s for extra in project["optional-dependencies"].values()
                                             for s in extra]
    out = {}
    for spec in specs:
        m = PIN.match(spec)
        assert m, f"pyproject.toml: {spec!r} is not an exact pin (name==version)"
        out[canonical(m[1])] = m[2]
    return out


def locked() -> dict[str, tuple[str, int]]:
    """name → (version, number of hashes) of every entry of the lock."""
    out: dict[str, tuple[str, int]] = {}
    name = None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if m := PIN.match(line):
            name = canonical(m[1])
            out[name] = (m[2], 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            version, n = out[name]
            out[name] = (version, n + 1)
    return out


def test_every_declared_pin_is_locked_at_its_version_with_hashes() -> None:
    want, have = declared(), locked()
    assert {"numpy", "pandas", "reframe-hpc", "pytest", "ruff"} <= set(want)
    wrong = {n: (v, have.get(n, ("missing", 0))[0]) for n, v in want.items()
             if have.get(n, ("", 0))[0] != v}
    assert not wrong, f"regenerate requirements.lock (its header's command): {wrong}"
    assert all(n > 0 for _, n in have.values()), [k for k, (_, n) in have.items() if n == 0]


def test_the_lock_says_how_it_was_made() -> None:
    head = (ROOT / "requirements.lock").read_text().splitlines()[:3]
    assert any("uv pip compile pyproject.toml" in line and "--generate-hashes" in line
               for line in head)
