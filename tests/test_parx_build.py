"""parx/ builds against the OpenSM 3.3.23 upstream tarball's headers (not only Debian's), and
the plugin built that way is loaded by the stock opensm and routes. Downloads and builds are
cached under ~/.cache/t2hx; a missing tarball that cannot be fetched is a failure."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from t2hx import ROOT, parx
from t2hx.fabric.build import build_plane
from t2hx.fabric.opensm import route

CACHE = Path.home() / ".cache" / "t2hx"
VERSION = "3.3.23"
# What Debian's configure decided for opensm 3.3.23 (its installed osm_config.h): these
# macros shape OpenSM's structs, so the tarball headers must be configured the same way.
DEFINES = {"DUAL_SIDED_RMPP": "1", "ENABLE_OSM_PERF_MGR": "1", "OSM_VENDOR_INTF_OPENIB": "1",
           "VENDOR_RMPP_SUPPORT": "1", "HAVE_LIBPTHREAD": "1"}


def source_tarball(package: str, pattern: str) -> Path:
    """The .orig tarball in the cache, fetched with `apt-get source --download-only` (which
    reports an error for the missing Debian part; only the tarball matters)."""
    src = CACHE / "src"
    src.mkdir(parents=True, exist_ok=True)
    found = sorted(src.glob(pattern))
    if not found:
        subprocess.run(["apt-get", "source", "--download-only", package], cwd=src,
                       capture_output=True, text=True, timeout=600)
        found = sorted(src.glob(pattern))
    if not found:
        pytest.fail(f"{pattern} is neither in {src} nor fetchable with 'apt-get source "
                    f"--download-only {package}' (needs a deb-src line for bookworm)")
    return found[-1]


def tarball_include() -> Path:
    root = CACHE / f"opensm-{VERSION}"
    inc = root / "include"
    if not (inc / "opensm" / "osm_config.h").exists():
        tarball = source_tarball("opensm", f"opensm_{VERSION}.orig.tar.*")
        tmp = CACHE / f"opensm-{VERSION}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(tarball) as tar:
            members = [m for m in tar.getmembers() if "/include/" in m.name]
            tar.extractall(tmp, members=members, filter="data")
        top = next(tmp.iterdir())
        conf_in = (top / "include/opensm/osm_config.h.in").read_text()
        for name, value in DEFINES.items():
            conf_in = re.sub(rf"^#undef {name}$", f"#define {name} {value}", conf_in, flags=re.M)
        (top / "include/opensm/osm_config.h").write_text(conf_in)
        ver_in = (top / "include/opensm/osm_version.h.in").read_text()
        (top / "include/opensm/osm_version.h").write_text(ver_in.replace("@VERSION@", VERSION))
        shutil.rmtree(root, ignore_errors=True)
        top.rename(root)
        shutil.rmtree(tmp, ignore_errors=True)
    return inc


def test_plugin_builds_against_the_upstream_tarball_and_routes(mini, tmp_path) -> None:
    inc = tarball_include()
    build = CACHE / f"parx-build-{VERSION}"
    subprocess.run(["make", "-s", "-C", str(ROOT / "parx"), f"OPENSM_INCLUDE={inc}",
                    f"BUILD={build}", str(build / "libparx.so")], check=True)
    lib = build / "libparx.so"
    assert b"OpenSM " + VERSION.encode() in lib.read_bytes()
    fab = build_plane(mini, "hyperx")
    kw = parx.routing_args(fab, "parx")
    kw["extra_conf"]["event_plugin_name"] = "parx"
    run = route(fab, tmp_path, "parx", timeout=120, env={"LD_LIBRARY_PATH": str(build)}, **kw)
    assert run.summary["engine_used"] == "parx" and not run.summary["fallback"]


def test_make_is_quiet_and_idempotent() -> None:
    first = subprocess.run(["make", "-s", "-C", str(ROOT / "parx")], capture_output=True,
                           text=True, check=True)
    assert first.stdout == "" and first.stderr == ""
    # -q: exit status 0 only if every target is up to date (nothing would be rebuilt)
    assert subprocess.run(["make", "-q", "-C", str(ROOT / "parx")]).returncode == 0


def test_make_install_honours_destdir(tmp_path) -> None:
    subprocess.run(["make", "-s", "-C", str(ROOT / "parx"), "install", "PREFIX=/usr",
                    f"DESTDIR={tmp_path}"], check=True)
    assert (tmp_path / "usr" / "lib" / "libparx.so").stat().st_size > 0
