"""The report in a real browser (#50): headless Chromium (Debian's chromium-headless-shell,
installed by run/setup) opens a replayed report.html; its table of contents reaches every
section, the scorecard section shows the scorecard picture, and every picture the page
references decodes in the browser."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

from t2hx.post.replay import replay
from t2hx.post.synth import write_campaign

BROWSER = "chromium-headless-shell"
PNG = b"\x89PNG\r\n\x1a\n"


def browser(*args: str) -> str:
    exe = shutil.which(BROWSER)
    assert exe, f"{BROWSER} not found: run/setup installs it (debian-packages.txt)"
    # --no-sandbox: the suite runs as root in CI, where Chromium's sandbox refuses to start
    out = subprocess.run([exe, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


class Dom(HTMLParser):
    """The page as the browser serialised it: ids, contents links, and per level-2 section
    the images it shows."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.toc: list[str] = []
        self.images: dict[str, list[str]] = {}
        self.title = ""
        self._nav = self._h2 = self._title = False
        self._section = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        self._nav = self._nav or (tag == "nav" and a.get("class") == "toc")
        if tag == "a" and self._nav:
            self.toc.append((a.get("href") or "").lstrip("#"))
        if tag == "h2":
            self._h2, self._section = True, ""
        if tag == "img":
            self.images.setdefault(self._section, []).append(a.get("src") or "")
        self._title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._nav = self._nav and tag != "nav"
        self._h2 = self._h2 and tag != "h2"
        self._title = False

    def handle_data(self, data: str) -> None:
        if self._h2:
            self._section += data
        if self._title:
            self.title += data


def dom(page: Path, *args: str) -> Dom:
    d = Dom()
    d.feed(browser(*args, "--dump-dom", page.as_uri()))
    return d


def test_report_opens_in_chromium_with_contents_and_scorecard_picture(tmp_path: Path) -> None:
    log = tmp_path / "quick"
    write_campaign(log, rows=600, reps=2, nodes=(4, 8), sizes=(8, 1024))
    (log / "provenance.json").write_text(json.dumps({"git_hash": "0123abc"}))
    out = replay(log, tmp_path / "report", quiet=True).out
    page = dom(out / "report.html")
    assert len(page.toc) >= 8 and set(page.toc) <= page.ids, set(page.toc) - page.ids
    scorecard = next(s for s in page.images if s.startswith("Scorecard"))
    assert page.images[scorecard] == ["figures/scorecard.png"]
    # every picture the page shows decodes in the browser: a probe page beside the report
    # loads each src the report uses and writes how many loaded into its title
    srcs = sorted({s for imgs in page.images.values() for s in imgs})
    assert len(srcs) > 5
    probe = out / "probe.html"
    probe.write_text("<!DOCTYPE html><html><head><title>waiting</title><script>"
                     "let ok = 0, bad = 0; function seen(img) { img.naturalWidth > 0 ? ok++ : "
                     "bad++; document.title = ok + ' loaded, ' + bad + ' failed'; }</script>"
                     "</head><body>" + "".join(
                         f'<img src="{s}" onload="seen(this)" onerror="seen(this)">'
                         for s in srcs) + "</body></html>")
    assert dom(probe, "--virtual-time-budget=10000").title == f"{len(srcs)} loaded, 0 failed"
    shot = tmp_path / "shot.png"
    browser("--window-size=1200,1600", f"--screenshot={shot}", (out / "report.html").as_uri())
    head = shot.read_bytes()[:24]
    assert head.startswith(PNG) and int.from_bytes(head[16:20], "big") == 1200
