"""ReFrame's deprecation warnings are worked out only when shown (t2hx/reframe_deprecations.py):
a test instance no longer walks the stack for a warning ReFrame itself suppresses, and every
warning that would show still does, with its message."""

from __future__ import annotations

import inspect
import warnings

import pytest

from reframe.core import warnings as rfm_warnings

from t2hx import reframe_deprecations as rd



@pytest.fixture
def installed(monkeypatch):
    """install() on this process, undone after the test."""
    import sys

    original = rfm_warnings.user_deprecation_warning
    original = getattr(original, "__wrapped__", original)
    for name, module in list(sys.modules.items()):
        if name.startswith("reframe") and hasattr(module, rd.NAME):
            monkeypatch.setattr(module, rd.NAME, getattr(module, rd.NAME))
    rd.install()
    return original


def no_stack_walk(monkeypatch):
    def walk(*args, **kwargs):
        raise AssertionError("inspect.stack() called for a suppressed warning")
    monkeypatch.setattr(inspect, "stack", walk)


def test_a_suppressed_warning_costs_no_stack_walk(installed, monkeypatch):
    no_stack_walk(monkeypatch)
    with rfm_warnings.suppress_deprecations():
        rfm_warnings.user_deprecation_warning("gone")


def test_a_shown_warning_is_still_shown():
    rd.install()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rfm_warnings.user_deprecation_warning("still here")
    assert [str(w.message) for w in seen] == ["still here"]
    assert seen[0].category is rfm_warnings.ReframeDeprecationWarning


def test_filters_with_conditions_leave_the_decision_to_reframe():
    cat = rfm_warnings.ReframeDeprecationWarning
    with warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.filterwarnings("ignore", message="only this", category=cat)
        assert not rd.ignored(cat)            # another message would show
        warnings.resetwarnings()
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        assert rd.ignored(cat)                # a base class's unconditional filter
        warnings.resetwarnings()
        warnings.simplefilter("default")
        assert not rd.ignored(cat)
        warnings.resetwarnings()
        assert not rd.ignored(cat)            # no filter: Python's default shows it


def test_install_reaches_the_modules_that_imported_it_by_name(installed):
    from reframe.core import fields, variables

    for module in (rfm_warnings, variables, fields):
        assert getattr(module, rd.NAME).__wrapped__ is installed
    rd.install()                              # idempotent: not wrapped twice
    assert rfm_warnings.user_deprecation_warning.__wrapped__ is installed


PROBE = """
import inspect, json, sys
import reframe as rfm
import reframe.core.config as config, reframe.core.runtime as rt
cfg = config.load_config("conf/reframe.py")     # the site configuration installs the fix
cfg.select_subconfig("sim"); rt.init_runtime(cfg)
from t2hx import reframe_deprecations as rd
walks = []
real = inspect.stack
inspect.stack = lambda *a, **k: walks.append(1) or real(*a, **k)

class Probe(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    executable = "true"

Probe()
patched = len(walks)
for name, module in list(sys.modules.items()):       # ReFrame's own function back
    fn = getattr(module, rd.NAME, None)
    if name.startswith("reframe") and hasattr(fn, "__wrapped__"):
        setattr(module, rd.NAME, fn.__wrapped__)
Probe()
print(json.dumps({"patched": patched, "original": len(walks) - patched}))
"""


def test_a_test_instance_injects_its_variables_without_a_stack_walk(tmp_path):
    """What loading the checks does for every case: ReFrame injects the deprecated
    ``variables`` alias inside suppress_deprecations(). With ReFrame's own function the
    instance walks the stack; with the site configuration's fix it does not."""
    import json
    import os
    import subprocess
    import sys

    from t2hx import ROOT

    env = {**os.environ, "T2HX_WORK_ROOT": str(tmp_path), "T2HX_LOG_ROOT": str(tmp_path)}
    probe = tmp_path / "probe.py"          # ReFrame reads a test class's source file
    probe.write_text(PROBE)
    out = subprocess.run([sys.executable, str(probe)], cwd=ROOT, env=env, text=True,
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    walks = json.loads(out.stdout.strip().splitlines()[-1])
    assert walks["patched"] == 0 and walks["original"] > 0, walks
