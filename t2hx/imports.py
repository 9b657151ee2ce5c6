"""The import graph of the repository's Python (t2hx/ and checks/), read with ``ast`` wherever
an import stands (module level, inside functions, under ``TYPE_CHECKING``), so a late import
cannot hide a dependency. tests/test_layers.py checks it against the layer table of
docs/architecture.md; the run cache (t2hx/flowsim/runcache.py) keys simulated results on the
sources the simulator reaches through it."""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

from t2hx import ROOT
from t2hx.atomic import atomic_write

PACKAGES = ("t2hx", "checks")
CHECK_SIBLINGS = {p.stem for p in (ROOT / "checks").glob("*.py")} | {"lib"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of PACKAGES by name, in path order. Walked with os.scandir and string
    operations: the run cache asks on every simulated case (pathlib's globbing and
    relative_to were a tenth of a cache hit's CPU time)."""
    out: dict[str, Path] = {}
    for pkg in PACKAGES:
        found: list[tuple[str, str]] = []
        _walk(str(ROOT / pkg), pkg, found)
        for path, name in sorted(found, key=lambda f: f[0].split(os.sep)):  # as Paths sort
            out[name] = Path(path)
    return out


def _walk(folder: str, dotted: str, found: list[tuple[str, str]]) -> None:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                _walk(entry.path, f"{dotted}.{entry.name}", found)
            elif entry.name.endswith(".py"):
                stem = entry.name[:-3]
                found.append((entry.path, dotted if stem == "__init__" else f"{dotted}.{stem}"))


def type_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (annotations, never executed)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _targets(name: str, path: Path, known: dict[str, Path], types: bool) -> set[str]:
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    tree = ast.parse(path.read_text())
    skip = set() if types else type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")[:len(name.split(".")) - node.level + is_package]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from pkg import mod`` depends on mod; on pkg only for names that are not
            # modules of it.
            subs = {f"{module}.{a.name}" for a in node.names}
            targets.update(subs & set(known) or {module})
            targets.update(subs - set(known))
    return targets


def imports(name: str, path: Path, known: dict[str, Path], types: bool = True) -> set[str]:
    """The known modules ``name`` imports (an imported name counts as its module);
    ``types=False`` leaves out imports made for annotations only."""
    out = set()
    for target in _targets(name, path, known, types):
        if name.startswith("checks.") and target.split(".")[0] in CHECK_SIBLINGS:
            target = f"checks.{target}"          # checks/ puts itself on sys.path
        parts = target.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts and ".".join(parts) != name:
            out.add(".".join(parts))
    return out


def graph(types: bool = True) -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known, types) for name, path in known.items()}


def closure(roots: list[str], cache: Path | None = None) -> list[Path]:
    """The source files of ``roots`` and of every module they reach, sorted. With ``cache``
    (a folder), the answer is kept per state of the tree (paths, sizes and mtimes), so a
    process that asks again pays a stat per file instead of parsing them all."""
    known = modules()
    stats = [(str(p), os.stat(p)) for p in known.values()]
    stamp = hashlib.sha256(json.dumps(
        [roots] + [[p, st.st_size, st.st_mtime_ns] for p, st in stats]).encode()).hexdigest()
    cached = cache / f"imports-{stamp[:32]}.json" if cache else None
    if cached and cached.is_file():
        return [ROOT / p for p in json.loads(cached.read_text())]
    seen, todo = set(roots), list(roots)
    while todo:
        name = todo.pop()
        deps = imports(name, known[name], known)
        # importing a module runs its packages' __init__ first
        deps |= {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)} & set(known)
        for dep in deps:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    files = sorted(known[n] for n in seen)
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, json.dumps([str(p.relative_to(ROOT)) for p in files]))
    return files
