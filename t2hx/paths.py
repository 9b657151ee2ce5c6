"""Where things live: every path root of t2hx in one place, each overridable from the
environment (tests and ``run/reproduce`` point them at temp or campaign directories).

| root             | default          | environment          |
|------------------|------------------|----------------------|
| conf systems     | conf/systems/    | ``T2HX_CONF_SYSTEMS`` |
| hostfiles        | hostfiles/       | ``T2HX_HOSTFILES``    |
| campaign logs    | log/             | ``T2HX_LOG_ROOT``     |
| work (routing cache, ReFrame stage) | work/ | ``T2HX_WORK_ROOT`` |
| communication profiles | conf/profiles/ | ``T2HX_PROFILES`` |
| Spack view of spack-env (the `local` system's binaries) | spack-env/view/ | ``T2HX_SPACK_VIEW`` |
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from t2hx import ROOT


def _root(env: str, default: Path) -> Path:
    return Path(os.environ.get(env) or default).resolve()


def conf_dir() -> Path:
    return _root("T2HX_CONF_SYSTEMS", ROOT / "conf" / "systems")


def hostfiles_root() -> Path:
    return _root("T2HX_HOSTFILES", ROOT / "hostfiles")


def log_root() -> Path:
    return _root("T2HX_LOG_ROOT", ROOT / "log")


def work_root() -> Path:
    return _root("T2HX_WORK_ROOT", ROOT / "work")


def profiles_root() -> Path:
    return _root("T2HX_PROFILES", ROOT / "conf" / "profiles")


def spack_view() -> Path:
    """The view of the Spack environment the `local` system runs (spack-env/README.md)."""
    return _root("T2HX_SPACK_VIEW", ROOT / "spack-env" / "view")


def cli() -> str:
    """The installed ``t2hx`` command of this interpreter's environment (no setup step per
    call); ``run/t2hx`` when this interpreter has none."""
    exe = Path(sys.executable).parent / "t2hx"
    return str(exe) if exe.is_file() else str(ROOT / "run" / "t2hx")
