"""ReFrame site configuration, generated at import time from conf/systems/*.yaml.

Nothing here is hand-kept: systems, partitions, HCA pinning, launchers and the perflog
handler all come from t2hx.reframe_site (read its docstring). Use it as
``reframe -C conf/reframe.py -c checks ...``; select the campaign with $T2HX_CAMPAIGN.
"""

import sys
from pathlib import Path

_root = Path(__file__).resolve().parent.parent
if str(_root) not in sys.path:
    sys.path.insert(0, str(_root))

from t2hx.logwrites import report_write_errors  # noqa: E402
from t2hx.reframe_site import site_configuration  # noqa: E402

report_write_errors()       # a full disk: one line per log file, not a traceback per record
site_configuration = site_configuration()
