"""The import graph of t2hx/ and checks/ follows the layers of docs/architecture.md: no module
imports a higher layer, and no modules import each other in a cycle. Imports are read with
``ast`` wherever they stand (module level, inside functions, under ``TYPE_CHECKING``), so a
late import cannot hide a dependency (t2hx/imports.py)."""

from __future__ import annotations

import re

from t2hx import ROOT
from t2hx.imports import graph, imports, modules

LAYERS_HEADING = "## Layers"
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|(.*)\|\s*$")


def layers() -> dict[str, int]:
    """Module prefix -> layer number, from the table under docs/architecture.md's heading."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index(LAYERS_HEADING):].split("\n## ", 1)[0]
    out: dict[str, int] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            for name in re.findall(r"`([\w.]+)`", m.group(3)):
                out[name] = int(m.group(1))
    return out


def layer_of(module: str, table: dict[str, int]) -> int | None:
    hits = [p for p in table if module == p or module.startswith(p + ".")]
    return table[max(hits, key=len)] if hits else None


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_the_layer_table_covers_every_module() -> None:
    table = layers()
    assert len(set(table.values())) >= 8
    loose = [m for m in modules() if layer_of(m, table) is None]
    assert loose == [], f"give these a layer in docs/architecture.md: {loose}"


def test_no_module_imports_a_higher_layer() -> None:
    table = layers()
    upward = [f"{m} (layer {layer_of(m, table)}) imports {t} (layer {layer_of(t, table)})"
              for m, targets in sorted(graph().items()) for t in sorted(targets)
              if (layer_of(t, table) or 0) > (layer_of(m, table) or 0)]
    assert upward == [], "\n".join(upward)


def test_no_import_cycles() -> None:
    """Among imports that run (an annotation-only import may name a module that imports
    this one: it is no dependency at run time, and the layer check still sees it)."""
    assert cycles(graph(types=False)) == []


def test_the_checker_sees_late_and_type_only_imports(tmp_path) -> None:
    """The graph finds imports inside functions and under TYPE_CHECKING, and cycles."""
    pkg = tmp_path / "t2hx"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from t2hx import b\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                              "    import t2hx.a\n")
    (pkg / "c.py").write_text("import t2hx.a\n\n\ndef g():\n    import t2hx.c\n"
                              "    from t2hx import d\n")
    (pkg / "d.py").write_text("def h():\n    import t2hx.c\n")
    known = {f"t2hx.{m}": pkg / f"{m}.py" for m in "abcd"} | {"t2hx": pkg / "__init__.py"}
    edges = {n: imports(n, p, known) for n, p in known.items()}
    assert edges["t2hx.a"] == {"t2hx.b"} and edges["t2hx.b"] == {"t2hx.a"}
    assert edges["t2hx.c"] == {"t2hx.a", "t2hx.d"}
    run = {n: imports(n, p, known, types=False) for n, p in known.items()}
    assert run["t2hx.b"] == set()
    assert cycles(run) == [["t2hx.c", "t2hx.d"]]
