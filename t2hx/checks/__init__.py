"""What every ReFrame check file of ``checks/`` shares: the case, its launch and records
(``base.py``), skipping recorded cases (``resume.py``) and keeping a whole-study case's raw
files (``keep.py``). The check files import these as ``t2hx.checks.*``: the t2hx ReFrame
(``.venv/bin/reframe``, run/setup installs t2hx into its environment) and any ReFrame given
``-C conf/reframe.py`` (which puts the checkout first on its path) find them without path
edits in the check files.

The checks run t2hx's Python code, which needs the packages of requirements.lock: a site's
own ReFrame without them stops here with one line naming the ReFrame to use, instead of
skipping every check file with a warning and finding none."""

import sys

from t2hx import ROOT

try:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
except ImportError as _err:
    raise SystemExit(f"checks/: this ReFrame's Python ({sys.executable}) cannot import "
                     f"{_err.name or _err} (fix: run t2hx's ReFrame, "
                     f"{ROOT / '.venv' / 'bin' / 'reframe'}, "
                     "which run/setup installs)") from None
