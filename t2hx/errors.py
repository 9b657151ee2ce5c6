"""One exception type for every user-facing error: one line naming file, field and fix."""

from __future__ import annotations


class T2hxError(Exception):
    """A user error. ``str()`` is the single line the CLI prints."""

    def __init__(self, message: str, *, file: object = None, field: str | None = None,
                 fix: str | None = None) -> None:
        self.file = None if file is None else str(file)
        self.field = field
        self.fix = fix
        self.message = message
        super().__init__(self.line())

    def line(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f": {self.field}" if self.field else "") + ": "
        elif self.field:
            where = f"{self.field}: "
        fix = f" (fix: {self.fix})" if self.fix else ""
        # Any line break (\r, \v, \u2028, ... from a value quoted out of a bad file) too.
        return " ".join(f"{where}{self.message}{fix}".splitlines())


class ConfError(T2hxError):
    """A configuration file is invalid."""


class RoutingError(T2hxError):
    """OpenSM/ibsim failed, timed out, or produced unusable tables."""


class WorkloadError(T2hxError):
    """A simulated workload request cannot be served."""
