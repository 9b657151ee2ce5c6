"""Figures that README.md and docs/*.md quote from bench/results/, kept in step with them.

A quoted figure is marked in the Markdown (the markers do not render):

    took <!--bench reproduce.json wall_s {:.0f}-->581<!--/bench--> s wall

A scorecard's claims per mechanism are quoted as a block (one line per mechanism: its claims
and their verdicts), between ``<!--bench-claims FILE-->`` and ``<!--/bench-claims-->``.

i.e. the results file (a name in bench/results/, or a path from the repository root such as
``log/reference/scorecard.json``), a dotted key path into it (``cases.hit``, ``wall_s_per_combo.hx-parx-
clustered``; list items by index; a key with blanks, such as ``not run``, written with
underscores: ``counts.not_run``) and a Python format. ``python bench/quote.py`` rewrites
every marked figure from the current results; ``--check`` only reports the stale ones and
exits 1 (tests/test_docs.py runs the check, so a bench rerun cannot leave the docs behind).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MARK = re.compile(r"<!--bench (\S+) (\S+) (\{[^}]*\})-->(.*?)<!--/bench-->")
CLAIMS = re.compile(r"<!--bench-claims (\S+)-->\n(.*?)<!--/bench-claims-->", re.S)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def load(file: str) -> object:
    return json.loads(((ROOT if "/" in file else RESULTS) / file).read_text())


def claims_block(file: str) -> str:
    """Per mechanism of a scorecard contract: its claims with their verdicts."""
    by: dict[str, list[str]] = {}
    for c in load(file)["claims"]:
        by.setdefault(c["mechanism"] or "untagged", []).append(f"{c['id']} ({c['verdict']})")
    return "".join(f"- **{m}** ({len(ids)}): {', '.join(ids)}\n" for m, ids in by.items())


def value(file: str, path: str) -> object:
    data = load(file)
    for key in path.split("."):
        if isinstance(data, list):
            data = len(data) if key == "len" else data[int(key)]     # claims.len: how many
        else:
            data = data[key] if key in data else data[key.replace("_", " ")]
    return data


def quoted(text: str) -> list[tuple[str, str, str, str, str]]:
    """(file, key path, format, text as quoted, text from the results) of every marker."""
    out = []
    for m in MARK.finditer(text):
        file, path, fmt, shown = m.groups()
        out.append((file, path, fmt, shown, fmt.format(value(file, path))))
    return out


def refresh(text: str) -> str:
    text = MARK.sub(lambda m: (f"<!--bench {m[1]} {m[2]} {m[3]}-->"
                               f"{m[3].format(value(m[1], m[2]))}<!--/bench-->"), text)
    return CLAIMS.sub(lambda m: f"<!--bench-claims {m[1]}-->\n{claims_block(m[1])}"
                      "<!--/bench-claims-->", text)


def stale() -> list[str]:
    """One line per marked figure that differs from its results file."""
    lines = []
    for doc in documents():
        text = doc.read_text()
        for file, path, _fmt, shown, now in quoted(text):
            if shown != now:
                lines.append(f"{doc.relative_to(ROOT)}: {file} {path} is {now}, quoted {shown}")
        for m in CLAIMS.finditer(text):
            if m[2] != claims_block(m[1]):
                lines.append(f"{doc.relative_to(ROOT)}: the claims of {m[1]} per mechanism "
                             "differ from the quoted list")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale figures, exit 1")
    args = parser.parse_args()
    if args.check:
        lines = stale()
        print("\n".join(lines) or "every quoted figure matches bench/results/")
        return 1 if lines else 0
    for doc in documents():
        text = doc.read_text()
        new = refresh(text)
        if new != text:
            doc.write_text(new)
            print(f"updated {doc.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
