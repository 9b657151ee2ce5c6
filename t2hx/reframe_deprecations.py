"""ReFrame's deprecation warnings, worked out only when one would be shown.

ReFrame 4.10's ``reframe.core.warnings.user_deprecation_warning`` walks ``inspect.stack()``
(every frame, reading the source line of each) before ``warnings.warn`` consults the
filters. ReFrame calls it for the deprecated ``variables`` alias of ``env_vars`` each time it
injects a test's variables, inside its own ``suppress_deprecations()``
(reframe/core/variables.py ``VarSpace.inject``): every test instance pays for a stack walk
whose warning is then dropped. Loading the checks of a campaign instantiates every case of
the study (the paper profile: over 9,000, twice per run: t2hx/campaign/schedule.py), and
the walk was about half of that loading (py-spy on a campaign, docs/reproduce.md#check-loading).

:func:`install` makes the function return at once when the warnings filters would ignore
the warning anyway (the first filter for its category has no message, module or line
condition and says ``ignore``), and leaves every other call to ReFrame: what is shown does not
change (tests/test_reframe_deprecations.py).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

NAME = "user_deprecation_warning"


def ignored(category: type[Warning]) -> bool:
    """Whether the warnings filters drop every warning of ``category``, whatever its message
    and place: False when a filter that may match has a condition this cannot check."""
    for action, message, cat, module, lineno in warnings.filters:
        if not issubclass(category, cat):
            continue
        if message is not None or module is not None or lineno:
            return False
        return action == "ignore"
    return False


def quieter(original: Callable[..., None], category: type[Warning]) -> Callable[..., None]:
    def user_deprecation_warning(message: str, from_version: str = "0.0.0") -> None:
        if ignored(category):
            return
        original(message, from_version)

    user_deprecation_warning.__wrapped__ = original      # type: ignore[attr-defined]
    return user_deprecation_warning


def install() -> None:
    """Replaces ReFrame's function, in its module and wherever it was imported by name
    (idempotent)."""
    from reframe.core import warnings as rfm_warnings

    original = getattr(rfm_warnings, NAME)
    if hasattr(original, "__wrapped__"):
        return
    patched = quieter(original, rfm_warnings.ReframeDeprecationWarning)
    for name, module in list(sys.modules.items()):
        if name.startswith("reframe") and getattr(module, NAME, None) is original:
            setattr(module, NAME, patched)
