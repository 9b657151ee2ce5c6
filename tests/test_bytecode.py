"""run/setup writes the bytecode of t2hx and the checks (docs/reproduce.md#bytecode): a case's
Python processes read it instead of compiling the sources, also where PYTHONDONTWRITEBYTECODE
forbids them to write it. run/test runs run/setup first, so every module has its file."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

from t2hx import ROOT


def test_every_module_of_t2hx_and_the_checks_has_its_bytecode():
    sources = sorted(p for d in ("t2hx", "checks") for p in (ROOT / d).rglob("*.py"))
    missing = [str(p.relative_to(ROOT)) for p in sources
               if not os.path.exists(importlib.util.cache_from_source(str(p)))]
    assert sources and not missing, f"no bytecode (run run/setup): {missing[:10]}"


def test_a_process_that_may_not_write_bytecode_compiles_nothing():
    """With PYTHONDONTWRITEBYTECODE=1, importing the simulator compiles no t2hx source
    (importlib compiles through source_to_code only when no current bytecode exists)."""
    probe = ("import importlib._bootstrap_external as ext, json\n"
             "seen = []\n"
             "real = ext.SourceLoader.source_to_code\n"
             "def spy(self, data, path, *a, **k):\n"
             "    seen.append(str(path)); return real(self, data, path, *a, **k)\n"
             "ext.SourceLoader.source_to_code = spy\n"
             "import t2hx.cli, t2hx.simulation, t2hx.traffic\n"
             "print(json.dumps([p for p in seen if '/t2hx/' in p]))\n")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, text=True,
                         capture_output=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout
