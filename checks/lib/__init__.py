"""What every check module shares (base.py). Each check module puts checks/ on sys.path by
appending, never inserting: ReFrame loads a check file with its folder appended to sys.path
and then pops that position, which an insert at 0 would shift onto another entry.

The checks run t2hx's Python code, which needs the packages of requirements.lock: a site's
own ReFrame without them stops here with one line naming the ReFrame to use, instead of
skipping every check file with a warning and finding none."""

import sys
from pathlib import Path

try:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
except ImportError as _err:
    raise SystemExit(f"checks/: this ReFrame's Python ({sys.executable}) cannot import "
                     f"{_err.name or _err} (fix: run t2hx's ReFrame, "
                     f"{Path(__file__).resolve().parents[2] / '.venv' / 'bin' / 'reframe'}, "
                     "which run/setup installs)") from None
