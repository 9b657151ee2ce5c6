"""The `t2hx-parx` Spack package builds from Debian's OpenSM source tarball the way its recipes
say: OpenSM 3.3.23 from `opensm_3.3.23.orig.tar.gz` as spack-env's `opensm` recipe builds it
(autogen.sh, configure --with-umad-prefix, make install), then parx/ with the make variables of
the `t2hx_parx` recipe's build_targets/install_targets against that prefix. The OpenSM built
that way runs the installed plugin and routes. Downloads and builds are cached under
~/.cache/t2hx per tarball checksum; a missing tarball that cannot be fetched is a failure."""

from __future__ import annotations

import ast
import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

import pytest

from t2hx import ROOT
from t2hx.routing import parx
from t2hx.fabric.build import build_plane
from t2hx.routing.opensm import route

CACHE = Path.home() / ".cache" / "t2hx"
VERSION = "3.3.23"
RECIPE = ROOT / "spack-env" / "repo" / "spack_repo" / "t2hx" / "packages" / "t2hx_parx" / "package.py"
JOBS = f"-j{os.cpu_count() or 1}"


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


def checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


@contextmanager
def locked(name: str) -> Iterator[None]:
    """Serialise builds of one cache entry across test workers and concurrent runs."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def run(cmd: list[str], cwd: Path, what: str) -> str:
    """Run a build step; on failure the test fails with the step's last output lines."""
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-40:])
        pytest.fail(f"{what} failed ({' '.join(cmd)} in {cwd}):\n{tail}")
    return done.stdout + done.stderr


def unpack(tarball: Path, dest: Path) -> None:
    """Extract a source tarball with its top directory stripped into a fresh ``dest``."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(tarball) as tar:
        members = []
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) == 2 and parts[1]:
                m.name = parts[1]
                members.append(m)
        tar.extractall(dest, members=members, filter="data")


def opensm_prefix() -> Path:
    """OpenSM installed from the orig tarball by the steps of spack-env's `opensm` recipe
    (force_autoreconf through ./autogen.sh, configure --with-umad-prefix=<rdma-core>, make,
    make install); Debian's rdma-core (libibumad-dev) lives in /usr."""
    tarball = source_tarball("opensm", f"opensm_{VERSION}.orig.tar.*")
    root = CACHE / f"opensm-{VERSION}-{checksum(tarball)}"
    prefix, stamp = root / "prefix", root / "installed"
    with locked(root.name):
        if not stamp.exists():
            src = root / "src"
            unpack(tarball, src)
            shutil.rmtree(prefix, ignore_errors=True)
            run(["./autogen.sh"], src, "OpenSM autogen.sh")
            run(["./configure", f"--prefix={prefix}", "--with-umad-prefix=/usr"], src,
                "OpenSM configure")
            run(["make", JOBS], src, "OpenSM make")
            run(["make", "install"], src, "OpenSM make install")
            stamp.write_text(f"{tarball.name}\n")
    return prefix


def recipe_targets(prop: str, names: dict[str, str]) -> list[str]:
    """The make arguments a property of the t2hx_parx recipe returns, its f-string fields
    filled from ``names`` (``osm.lib`` -> ...): the test builds exactly what Spack would."""
    cls = next(n for n in ast.parse(RECIPE.read_text()).body if isinstance(n, ast.ClassDef))
    funcs = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}

    def value(node: ast.AST) -> list[str] | str:
        if isinstance(node, ast.List):
            return [value(e) for e in node.elts]  # type: ignore[misc]
        if isinstance(node, ast.Constant):
            return str(node.value)
        if isinstance(node, ast.JoinedStr):
            return "".join(value(v) for v in node.values)  # type: ignore[misc]
        if isinstance(node, ast.FormattedValue):
            key = ast.unparse(node.value)
            assert key in names, f"{RECIPE}: {prop} uses {{{key}}}, unknown to this test"
            return names[key]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return value(node.left) + value(node.right)  # type: ignore[operator]
        if isinstance(node, ast.Attribute) and ast.unparse(node) == "self.build_targets":
            return recipe_targets("build_targets", names)
        raise AssertionError(f"{RECIPE}: {prop}: cannot follow {ast.unparse(node)}")

    ret = next(n for n in ast.walk(funcs[prop]) if isinstance(n, ast.Return))
    out = value(ret.value)  # type: ignore[arg-type]
    assert isinstance(out, list)
    return out


def test_plugin_package_builds_from_the_debian_tarball_and_routes(mini, tmp_path) -> None:
    osm = opensm_prefix()
    names = {"osm.include.infiniband": str(osm / "include" / "infiniband"),
             "osm.lib": str(osm / "lib"), "self.prefix": str(tmp_path / "install")}
    build_targets = recipe_targets("build_targets", names)
    install_targets = recipe_targets("install_targets", names)
    assert f"OPENSM_INCLUDE={osm / 'include' / 'infiniband'}" in build_targets
    # BUILD keeps objects out of parx/ (shared with the other tests); otherwise these are
    # the recipe's `make <build_targets>` and `make <install_targets>`.
    build = CACHE / f"parx-build-{osm.parent.name}"
    make = ["make", "-s", "-C", str(ROOT / "parx"), f"BUILD={build}"]
    run(make + build_targets, ROOT, "make (recipe build_targets)")
    run(make + install_targets, ROOT, "make (recipe install_targets)")
    lib = tmp_path / "install" / "lib" / "libparx.so"
    assert b"OpenSM " + VERSION.encode() in lib.read_bytes()
    dynamic = run(["readelf", "-d", str(lib)], tmp_path, "readelf")
    assert "libopensm.so" in dynamic and str(osm / "lib") in dynamic, dynamic
    fab = build_plane(mini, "hyperx")
    kw = parx.routing_args(fab, "parx")
    kw["extra_conf"]["event_plugin_name"] = "parx"
    # the OpenSM built above (first on PATH) loads the installed plugin
    env = {"PATH": f"{osm / 'sbin'}:{os.environ['PATH']}", "LD_LIBRARY_PATH": str(lib.parent)}
    assert shutil.which("opensm", path=env["PATH"]) == str(osm / "sbin" / "opensm")
    result = route(fab, tmp_path / "route", "parx", timeout=120, env=env, **kw)
    assert result.summary["engine_used"] == "parx" and not result.summary["fallback"]


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
