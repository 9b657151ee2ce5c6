"""The HTML report's navigation (#50): every contents link reaches a heading, anchors are
unique, verdict cells carry their verdict's colour, long tables open folded. Parsed with the
standard library's HTML parser, as a browser would build its tree."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd

from t2hx.post.html_report import FOLD_ROWS, to_html


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.links: list[str] = []
        self.nav_links: list[str] = []
        self.cells: list[tuple[str, str]] = []       # (class, text) of every td
        self.details = 0
        self._in_nav = self._in_td = False
        self._td_class = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag == "nav":
            self._in_nav = True
        if tag == "a" and (a.get("href") or "").startswith("#"):
            (self.nav_links if self._in_nav else self.links).append((a["href"] or "")[1:])
        if tag == "td":
            self._in_td, self._td_class = True, a.get("class") or ""
            self.cells.append((self._td_class, ""))
        if tag == "details":
            self.details += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav = False
        if tag == "td":
            self._in_td = False

    def handle_data(self, data: str) -> None:
        if self._in_td:
            cls, text = self.cells[-1]
            self.cells[-1] = (cls, text + data)


def page(blocks: list[tuple]) -> Page:
    p = Page()
    p.feed(to_html(blocks, "t", lambda v, c: str(v)))
    return p


def test_contents_reach_every_section_and_anchors_are_unique() -> None:
    blocks = [("h", 1, "Report"), ("p", "intro"), ("h", 2, "Scorecard"), ("h", 3, "Claims"),
              ("h", 2, "Figures"), ("h", 3, "Claims"), ("h", 2, "Provenance & runs")]
    p = page(blocks)
    assert len(p.ids) == len(set(p.ids)) == 6
    assert p.nav_links == [i for i in p.ids if i != "report"]     # every section, in order
    assert "claims" in p.ids and "claims-2" in p.ids and "provenance-runs" in p.ids
    assert set(p.links) <= set(p.ids)                              # heading self-links too


def test_verdict_cells_are_coloured_and_long_tables_fold() -> None:
    verdicts = pd.DataFrame({"claim": ["a", "b", "c", "d"],
                             "verdict": ["agrees", "contradicts", "same direction (2×)",
                                         "agreeable"]})
    long = pd.DataFrame({"n": range(FOLD_ROWS + 1)})
    p = page([("h", 2, "S"), ("table", verdicts), ("table", long),
              ("table", long.head(FOLD_ROWS))])
    classes = {text: cls for cls, text in p.cells}
    assert classes["agrees"] == "v-agrees" and classes["contradicts"] == "v-contradicts"
    assert classes["same direction (2×)"] == "v-same-direction"
    assert classes["agreeable"] == "" and classes["a"] == ""        # not a verdict
    assert p.details == 1                                            # only the long one


def test_a_page_without_sections_has_no_contents() -> None:
    assert "<nav" not in to_html([("h", 1, "T"), ("p", "x")], "t", lambda v, c: str(v))
