"""Progress output on stderr for anything longer than a few seconds; silenced by --quiet."""

from __future__ import annotations

import os
import sys
import time


class Progress:
    """``with Progress("routing", total=5, quiet=q) as p: p.step("dfsssp")``."""

    def __init__(self, label: str, total: int | None = None, quiet: bool | None = None) -> None:
        self.label = label
        self.total = total
        self.count = 0
        self.quiet = bool(os.environ.get("T2HX_QUIET")) if quiet is None else quiet
        self.start = time.monotonic()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.say(f"done in {time.monotonic() - self.start:.1f} s")

    def step(self, what: str = "") -> None:
        self.count += 1
        of = f"/{self.total}" if self.total else ""
        self.say(f"[{self.count}{of}] {what}")

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"{self.label}: {text}", file=sys.stderr, flush=True)
