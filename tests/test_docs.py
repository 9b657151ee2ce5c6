"""The documentation is self-contained: code and docs cite docs/ pages (or the seeds by title
and section), never design notes outside the repository, and every docs link resolves.

* No tracked source, doc, conf or script (log/ and paper/ outputs aside) names the external
  design notes or a path into the shared directory next to the repository.
* Every ``docs/<page>.md[#anchor]`` cited anywhere names an existing page and, with an
  anchor, a heading of that page (GitHub's heading slugs).
* Every relative link inside ``docs/*.md`` resolves, anchors included.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from t2hx import ROOT

DOCS = ROOT / "docs"
SUFFIXES = {".py", ".md", ".c", ".h", ".yaml", ".yml", ".toml", ".cfg", ".txt"}
SCRIPT_DIRS = ("run", ".ci")
SKIP_DIRS = ("log/", "paper/", ".venv/", "work/")
# Built from pieces so this file does not match itself.
FORBIDDEN = ("DES" + "IGN", "STY" + "LE.md", "PACK" + "AGES.md", "../" + "shared",
             "/".join(("", "work", "shared")))
CITATION = re.compile(r"docs/([A-Za-z0-9_./-]+?\.md)(?:#([A-Za-z0-9_-]+))?")
MD_LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def tracked_files() -> list[Path]:
    """Tracked files (git), or every file when this is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True,
                             check=True).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()]
    files = []
    for name in names:
        if name.startswith(SKIP_DIRS) or "/.venv/" in name:
            continue
        path = ROOT / name
        if path.suffix in SUFFIXES or path.name == "Makefile" or \
                name.split("/", 1)[0] in SCRIPT_DIRS:
            if path.is_file():
                files.append(path)
    return files


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed,
    spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)    # [text](link) -> text
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return frozenset(out)


def problem(page: Path, anchor: str | None) -> str | None:
    if not page.is_file():
        return f"no page {page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}"
    if anchor and anchor not in anchors(page):
        return f"no heading '#{anchor}' in {page.relative_to(ROOT)}"
    return None


def test_docs_pages_exist() -> None:
    for name in ("README.md", "architecture.md", "formats.md", "routing.md", "modelling.md"):
        assert (DOCS / name).is_file(), name


def test_no_citation_outside_the_repository() -> None:
    bad = []
    for path in tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for no, line in enumerate(text.splitlines(), 1):
            for word in FORBIDDEN:
                if word in line:
                    bad.append(f"{path.relative_to(ROOT)}:{no}: '{word}' "
                               "(cite docs/<page>.md#<heading> or a seed by title and section)")
    assert not bad, "\n".join(bad)


# The project's issue tracker is not part of what users get: code and docs say what a rule
# is and where it is documented, not which issue asked for it.
ISSUE_CITATION = re.compile(r"\b[Ii]ssues? #?\d+")


def test_no_citation_of_issue_numbers() -> None:
    bad = [f"{path.relative_to(ROOT)}:{no}: {line.strip()[:80]}"
           for path in tracked_files()
           for no, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                     .splitlines(), 1) if ISSUE_CITATION.search(line)]
    assert not bad, "say what the rule is, or cite docs/:\n" + "\n".join(bad)


def test_every_docs_citation_resolves() -> None:
    bad = []
    for path in tracked_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for no, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                why = problem(DOCS / m.group(1), m.group(2))
                if why:
                    bad.append(f"{path.relative_to(ROOT)}:{no}: {m.group(0)}: {why}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_links_inside_docs_resolve(page: Path) -> None:
    bad = []
    fenced = False
    for no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        for target in MD_LINK.findall(line):
            if re.match(r"[a-z]+:", target):              # http:, https:, mailto:
                continue
            where, _, anchor = target.partition("#")
            dest = (page.parent / where).resolve() if where else page
            if not dest.is_relative_to(ROOT):
                bad.append(f"{page.name}:{no}: {target} points outside the repository")
            elif dest.suffix == ".md" or not where:
                why = problem(dest, anchor or None)
                if why:
                    bad.append(f"{page.name}:{no}: {target}: {why}")
            elif not dest.exists():
                bad.append(f"{page.name}:{no}: {target}: no such file")
    assert not bad, "\n".join(bad)


def test_architecture_names_every_package() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    packages = [p.parent.name for p in (ROOT / "t2hx").glob("*/__init__.py")]
    assert packages
    missing = [p for p in packages if f"t2hx/{p}/" not in text]
    assert not missing, f"docs/architecture.md does not describe t2hx/{missing}"
    assert "t2hx/benchmarks/" in text         # the benchmark registry: one module each


def test_slug_rules() -> None:
    assert slug("Table 1") == "table-1"
    assert slug("Rules R1 to R4") == "rules-r1-to-r4"
    assert slug("LMC and LID policy") == "lmc-and-lid-policy"
    assert slug("`t2hx.routing` & friends") == "t2hxrouting--friends"


def test_quoted_bench_figures_match_bench_results() -> None:
    """Every figure README.md and docs/ quote from bench/results/ (bench/quote.py markers)
    equals the results file: a bench rerun cannot leave the docs behind."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("quote", ROOT / "bench" / "quote.py")
    quote = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(quote)
    assert sum(len(quote.quoted(d.read_text())) for d in quote.documents()) >= 10
    assert quote.stale() == [], "run: python bench/quote.py"


# Packages whose modules are one per X (a subcommand, a parser family, a benchmark): the
# page names the package and the rule, not every member.
COLLECTIONS = ("t2hx/commands", "t2hx/post/parsers", "t2hx/benchmarks")


def test_architecture_names_every_module() -> None:
    """docs/architecture.md matches the tree: every module of t2hx/ and checks/ is named
    there (as `name.py`, or its package for one-per-X collections)."""
    text = (DOCS / "architecture.md").read_text()
    missing = []
    for path in sorted([*(ROOT / "t2hx").rglob("*.py"), *(ROOT / "checks").rglob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py" or rel.startswith(COLLECTIONS) or "/kernel/" in rel:
            continue
        if not re.search(rf"(?<!\w){re.escape(path.name)}", text) and \
                f"`{path.stem}`" not in text:
            missing.append(rel)
    assert missing == [], "add to docs/architecture.md: " + ", ".join(missing)


# ---- docs → code: what the pages name exists ------------------------------------------------
PAGES = [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]
NAMED_PATH = re.compile(r"(?<![\w./=-])((?:t2hx|checks|bench|run|parx|tests|conf|spack-env|patches|"
                        r"hostfiles)/[A-Za-z0-9_./-]*[A-Za-z0-9_])")
NAMED_MODULE = re.compile(r"(?<![\w./=-])(t2hx(?:\.[A-Za-z_]\w*)+)")
FILE_SUFFIXES = ("py", "md", "yaml", "json", "txt", "c", "so")
# Paths the pages name as what a command writes, not as files of the checkout.
WRITTEN = ("spack-env/view",        # spack-env/README.md: the environment's view
           "hostfiles/port512", "hostfiles/mysite")    # `t2hx hostfiles` of a new port
NAMED_COMMAND = re.compile(r"`(?:run/)?t2hx (?:-q )?([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")


def named(pattern: re.Pattern[str]) -> Iterator[tuple[str, re.Match[str]]]:
    for page in PAGES:
        for no, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for m in pattern.finditer(line):
                yield f"{page.relative_to(ROOT)}:{no}", m


def test_every_path_the_docs_name_exists() -> None:
    bad = []
    for where, m in named(NAMED_PATH):
        path, after = m.group(1), m.string[m.end():m.end() + 2]
        # a pattern (`sc17-*.yaml`, `<name>.py`, `NAME.yaml`) names a family, not a file
        if after[:1] in ("<", "*", "{") or after == "-*" or "NAME" in path or "..." in path:
            continue
        if not (ROOT / path).exists() and not path.startswith(WRITTEN):
            bad.append(f"{where}: {path}")
    assert not bad, "the docs name files that do not exist:\n" + "\n".join(bad)


def _module_and_rest(parts: list[str]) -> tuple[str, list[str]]:
    """The longest prefix of ``parts`` that is a module of the checkout, and the rest."""
    for k in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:k])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return ".".join(parts[:k]), parts[k:]
    return "", parts


def test_every_module_the_docs_name_exists() -> None:
    import importlib

    bad = []
    for where, m in named(NAMED_MODULE):
        parts = m.group(1).split(".")
        if parts[-1] in FILE_SUFFIXES:      # `t2hx.yaml`: a file name
            continue
        module, rest = _module_and_rest(parts)
        obj = importlib.import_module(module) if module else None
        for name in rest:
            obj = getattr(obj, name, None)
        if obj is None:
            bad.append(f"{where}: {m.group(1)}")
    assert not bad, "the docs name modules or attributes that do not exist:\n" + "\n".join(bad)


def test_every_command_the_docs_name_exists() -> None:
    import argparse

    from t2hx.cli import build_parser

    def verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return {name: child for a in parser._actions
                if isinstance(a, argparse._SubParsersAction) for name, child in a.choices.items()}

    commands, bad, seen = verbs(build_parser()), [], 0
    for where, m in named(NAMED_COMMAND):
        command, verb = m.group(1), m.group(2)
        seen += 1
        if command not in commands:
            bad.append(f"{where}: t2hx {command}")
        elif verb and verbs(commands[command]) and verb not in verbs(commands[command]):
            bad.append(f"{where}: t2hx {command} {verb}")
    assert seen > 50, "the pattern no longer finds the docs' commands"
    assert not bad, "the docs name commands that do not exist:\n" + "\n".join(bad)
