"""ReFrame's log files when the disk is full: one line per file, not a traceback per record.

ReFrame writes its own log, the perflogs and its report through Python's ``logging``. When a
write fails (``ENOSPC``, a file system gone read-only) ``logging`` prints a traceback with the
whole record for every later record, and ReFrame's exit hook adds one more when closing the
file. :func:`report_write_errors` (called by conf/reframe.py, so only in ReFrame's process)
makes each failing file say so once, as t2hx's one-line error. The cases themselves fail
through their own one-line errors, and the campaign's next run repairs the perflogs
(t2hx.campaign.guard) and resumes.
"""

from __future__ import annotations

import logging
import sys

_said: set[tuple[str, str]] = set()


def _say(handler: logging.Handler, err: BaseException | None) -> None:
    target = getattr(handler, "baseFilename", None) or type(handler).__name__
    what = f"{type(err).__name__}: {err}" if err else "unknown error"
    if (target, what) in _said:
        return
    _said.add((target, what))
    print(f"t2hx: error: {target}: cannot write ({what}) (fix: free space or restore write "
          "access, then run the campaign again: it resumes)", file=sys.stderr)


def _handle_error(self: logging.Handler, record: logging.LogRecord) -> None:
    _say(self, sys.exc_info()[1])


_file_close = logging.FileHandler.close


def _close(self: logging.FileHandler) -> None:
    try:
        _file_close(self)
    except OSError as err:          # the last flush of a file on a full disk
        _say(self, err)


def report_write_errors() -> None:
    # Patched on the classes: ReFrame creates its handlers itself (only in its process).
    logging.Handler.handleError = _handle_error          # type: ignore[method-assign]
    logging.FileHandler.close = _close                   # type: ignore[method-assign, assignment]
