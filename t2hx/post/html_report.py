"""The report as one HTML page people can find their way around: a table of contents of its
sections, an anchor on every heading, verdicts coloured as the scorecard names them, and
long tables folded (``<details>``) so the page opens on its structure, not 3,000 rows.

The blocks are report.py's (``("h", level, text)``, ``("p", text)``, ``("img", alt, src,
links)``, ``("table", frame)``); the markdown report keeps them flat."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pandas as pd

from t2hx.post.scorecard.text import VERDICT_COLOURS, VERDICTS

def slug(text: str) -> str:
    """An anchor name: lower case, words joined by dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


#: Tables longer than this open folded, with their row count in the summary line.
FOLD_ROWS = 25
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:auto;line-height:1.4}"
         "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;"
         "padding:2px 6px}th{background:#f0f0f0}img{max-width:100%}"
         "nav.toc{border:1px solid #ddd;padding:.5em 1em;margin:1em 0}"
         "nav.toc ul{margin:.2em 0;padding-left:1.4em}summary{cursor:pointer;color:#225}"
         + "".join(f"td.v-{slug(v)}{{background:{c}}}" for v, c in VERDICT_COLOURS.items()))


def anchors(blocks: list[tuple]) -> list[str | None]:
    """One unique anchor per heading block (None for the others), in page order."""
    seen: dict[str, int] = {}
    out: list[str | None] = []
    for block in blocks:
        if block[0] != "h":
            out.append(None)
            continue
        base = slug(block[2])
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def toc(blocks: list[tuple], names: list[str | None]) -> str:
    """The sections (level 2) and their subsections (level 3) as nested links."""
    e = html.escape
    items: list[str] = []
    open_sub = False
    for block, name in zip(blocks, names):
        if block[0] != "h" or block[1] not in (2, 3):
            continue
        link = f'<a href="#{name}">{e(block[2])}</a>'
        if block[1] == 2:
            if open_sub:
                items.append("</ul></li>")
                open_sub = False
            elif items:
                items.append("</li>")
            items.append(f"<li>{link}")
        else:
            if not open_sub:
                items.append("<ul>")
                open_sub = True
            items.append(f"<li>{link}</li>")
    if not items:
        return ""
    items.append("</ul></li>" if open_sub else "</li>")
    return '<nav class="toc"><b>Contents</b><ul>' + "".join(items) + "</ul></nav>"


def verdict_class(text: str) -> str:
    """The cell's class when its text starts with a verdict ("contradicts", "agrees (…)")."""
    for v in sorted(VERDICTS + ("identical",), key=len, reverse=True):
        if text == v or text.startswith(v + " ") or text.startswith(v + " ("):
            return f' class="v-{slug(v)}"'
    return ""


def table(df: pd.DataFrame, cell: Callable[[Any, str], str]) -> str:
    e = html.escape
    rows = ["<table><tr>" + "".join(f"<th>{e(str(c))}</th>" for c in df.columns) + "</tr>"]
    for row in df.itertuples(index=False):
        texts = [cell(v, str(c)) for v, c in zip(row, df.columns)]
        rows.append("<tr>" + "".join(f"<td{verdict_class(t)}>{e(t)}</td>" for t in texts)
                    + "</tr>")
    rows.append("</table>")
    body = "\n".join(rows)
    if len(df) <= FOLD_ROWS:
        return body
    return f"<details><summary>{len(df)} rows</summary>\n{body}\n</details>"


def to_html(blocks: list[tuple], title: str, cell: Callable[[Any, str], str]) -> str:
    e = html.escape
    names = anchors(blocks)
    out = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8">', f"<title>{e(title)}</title>",
           f"<style>{STYLE}</style></head><body>"]
    contents = toc(blocks, names)
    placed = False
    for block, name in zip(blocks, names):
        kind = block[0]
        if kind == "h":
            if block[1] == 2 and not placed and contents:
                out.append(contents)            # after the title and its opening lines
                placed = True
            out.append(f'<h{block[1]} id="{name}"><a href="#{name}" '
                       f'style="color:inherit;text-decoration:none">{e(block[2])}</a>'
                       f"</h{block[1]}>")
        elif kind == "p":
            out.append(f"<p>{e(block[1])}</p>")
        elif kind == "img":
            _, alt, src, links = block
            out.append(f'<p><img src="{e(src)}" alt="{e(alt)}"></p><p>'
                       + " · ".join(f'<a href="{e(p)}">{e(n)}</a>' for n, p in links) + "</p>")
        elif kind == "table":
            out.append(table(block[1], cell))
    out.append("</body></html>")
    return "\n".join(out) + "\n"
