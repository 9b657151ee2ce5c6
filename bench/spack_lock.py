#!/usr/bin/env python3
"""Concretize spack-env/ with a real Spack; write spack-env/spack.lock or check it is fresh.

    python bench/spack_lock.py check   # exit 1 and list the differences when the lock is stale
    python bench/spack_lock.py write   # `spack -e spack-env concretize -f` (offline scope below)

Which Spack: $SPACK_ROOT/bin/spack, else `spack` on PATH, else the offline snapshot pair
(Spack core + the builtin package repository at the commit spack.yaml pins) in the
``shared/tools/spack/`` folder that sits beside the checkout on the project's CI and
development machines (:func:`snapshot_dir`). The snapshot is unpacked once into
``~/.cache/t2hx/spack/<tarball checksums>/`` with a venv holding clingo from PyPI (the
concretizer's solver); reruns reuse it.

Offline, the environment's ``builtin`` repository (a git URL pinned to a commit) is
pointed at the unpacked package snapshot through an extra configuration scope, after
checking that the snapshot is that commit; Debian 12's GCC 12.2.0 is declared there as the
compiler (external, /usr), so Spack does not write a detected one into spack.yaml.

Freshness compares what matters in the lock: for every node, name, version, namespace,
arch, parameters (variants, patches' sha256), the recipe's package_hash and its
dependency edges, hashed bottom-up into a location-independent DAG hash (the
``dev_path`` variant of the develop package, an absolute path of the checkout, is left
out). Timestamps and the Spack version are not compared.

    python bench/spack_lock.py --smoke DIR   # seconds: the comparison only, into DIR

``--smoke DIR`` reads the committed lock, hashes it and compares it with itself and with a
copy whose root recipe changed (which must be stale), and writes DIR/spack_lock.json; Spack
itself is left out (concretizing takes minutes, and unpacking the snapshot installs clingo
from PyPI), as the result says: tests/test_spack_lock.py runs it (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ENV = ROOT / "spack-env"
CACHE = Path.home() / ".cache" / "t2hx" / "spack"
CLINGO = "clingo==5.8.3"  # the concretizer's ASP solver, from PyPI
GCC = {"spec": "gcc@12.2.0 languages:='c,c++,fortran'", "prefix": "/usr",
       "extra_attributes": {"compilers": {"c": "/usr/bin/gcc", "cxx": "/usr/bin/g++",
                                          "fortran": "/usr/bin/gfortran"}}}
IGNORED_PARAMETERS = {"dev_path"}


class Unavailable(Exception):
    """No usable Spack here; the message says why."""


@dataclass
class Spack:
    command: list[str]
    env: dict[str, str]
    origin: str
    builtin: Path | None = None  # unpacked builtin repo (snapshot), None = Spack's own config
    builtin_commit: str | None = None
    notes: list[str] = field(default_factory=list)


def snapshot_dir(root: Path = ROOT) -> Path:
    return root.parent / "shared" / "tools" / "spack"


def _locked_cache(key: str):
    CACHE.mkdir(parents=True, exist_ok=True)
    handle = open(CACHE / f"{key}.lock", "w")
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _sha(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack_snapshot(snap: Path) -> tuple[Path, Path, str]:
    """(spack core dir, builtin repo dir, builtin commit) unpacked under the cache."""
    cores = sorted(snap.glob("spack-[0-9]*.tar.gz"))
    pkgs = sorted(snap.glob("spack-packages-*.tar.gz"))
    if len(cores) != 1 or len(pkgs) != 1:
        raise Unavailable(f"{snap}: expected one spack-<version>-*.tar.gz and one "
                          f"spack-packages-*.tar.gz, found {[p.name for p in cores + pkgs]}")
    key = hashlib.sha256((_sha(cores[0]) + _sha(pkgs[0])).encode()).hexdigest()[:16]
    dest = CACHE / key
    with _locked_cache(key):
        stamp = dest / "unpacked"
        if not stamp.exists():
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            for tarball in (cores[0], pkgs[0]):
                with tarfile.open(tarball) as tar:
                    tar.extractall(dest, filter="tar")
            stamp.write_text(f"{cores[0].name}\n{pkgs[0].name}\n")
        venv = dest / "venv"
        py = venv / "bin" / "python"
        if not (venv / "clingo-ok").exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            done = subprocess.run([str(py), "-m", "pip", "install", "-q", CLINGO],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise Unavailable(f"pip install {CLINGO} failed: {done.stderr[-500:]}")
            (venv / "clingo-ok").write_text(CLINGO + "\n")
    core = next(p for p in dest.iterdir() if p.is_dir() and p.name.startswith("spack-")
                and not p.name.startswith("spack-packages"))
    pkgdir = next(p for p in dest.iterdir() if p.name.startswith("spack-packages"))
    commit = _snapshot_commit(snap, pkgs[0].name)
    return core, pkgdir / "repos" / "spack_repo" / "builtin", commit


def _snapshot_commit(snap: Path, tar_name: str) -> str:
    """The full commit of the package snapshot, from the snapshot's README table."""
    readme = (snap / "README.md").read_text() if (snap / "README.md").exists() else ""
    for line in readme.splitlines():
        if tar_name in line:
            found = re.findall(r"\b[0-9a-f]{40}\b", line)
            if found:
                return found[0]
    short = re.search(r"-([0-9a-f]{7,40})\.tar\.gz$", tar_name)
    return short.group(1) if short else ""


def find_spack(root: Path = ROOT) -> Spack:
    """$SPACK_ROOT, `spack` on PATH, or the shared snapshot; Unavailable otherwise."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("SPACK_")}
    home = CACHE / "home"  # Spack's user config/cache: kept out of ~/.spack
    base.update(SPACK_USER_CONFIG_PATH=str(home / "config"),
                SPACK_USER_CACHE_PATH=str(home / "cache"), SPACK_DISABLE_LOCAL_CONFIG="1")
    snap = snapshot_dir(root)
    builtin = commit = None
    if os.environ.get("SPACK_ROOT") or shutil.which("spack"):
        if os.environ.get("SPACK_ROOT"):
            exe = Path(os.environ["SPACK_ROOT"]) / "bin" / "spack"
            origin = f"SPACK_ROOT={os.environ['SPACK_ROOT']}"
        else:
            exe = Path(shutil.which("spack"))  # type: ignore[arg-type]
            origin = f"spack on PATH ({exe})"
        if "SPACK_PYTHON" in os.environ:
            base["SPACK_PYTHON"] = os.environ["SPACK_PYTHON"]
        if snap.is_dir():  # offline: still use the pinned package snapshot
            _, builtin, commit = _unpack_snapshot(snap)
        return Spack([str(exe)], base, origin, builtin, commit)
    if not snap.is_dir():
        raise Unavailable("no Spack: SPACK_ROOT unset, no `spack` on PATH and no snapshot "
                          f"in {snap}")
    core, builtin, commit = _unpack_snapshot(snap)
    venv_py = core.parent / "venv" / "bin" / "python"
    base["SPACK_PYTHON"] = str(venv_py)
    return Spack([str(core / "bin" / "spack")], base, f"snapshot {snap}", builtin, commit)


def spack_version(sp: Spack) -> str:
    return subprocess.run(sp.command + ["--version"], env=sp.env, capture_output=True,
                          text=True, check=True).stdout.strip()


def offline_scope(sp: Spack, env_dir: Path, scope: Path) -> None:
    """A configuration scope above the environment's: builtin -> the unpacked snapshot
    (checked to be the pinned commit), the other repos as spack.yaml lists them (in that
    order: the overlay must stay first), and Debian's GCC as the compiler."""
    doc = yaml.safe_load((env_dir / "spack.yaml").read_text())["spack"]
    scope.mkdir(parents=True, exist_ok=True)
    if sp.builtin is not None:
        repos = {}
        for name, entry in (doc.get("repos") or {}).items():
            if name == "builtin" and isinstance(entry, dict):
                pinned = str(entry.get("commit", ""))
                if sp.builtin_commit and not (pinned.startswith(sp.builtin_commit)
                                              or sp.builtin_commit.startswith(pinned)):
                    raise Unavailable(f"spack.yaml pins builtin at {pinned}, the package "
                                      f"snapshot is {sp.builtin_commit}: not comparable")
                repos[name] = str(sp.builtin)
            else:
                repos[name] = entry
        (scope / "repos.yaml").write_text(
            "repos::\n" + "".join(f"  {k}: {json.dumps(v)}\n" for k, v in repos.items()))
    (scope / "packages.yaml").write_text(yaml.safe_dump(
        {"packages": {"gcc": {"externals": [GCC]}}}, sort_keys=False))
    (scope / "config.yaml").write_text(yaml.safe_dump(
        {"config": {"misc_cache": str(scope.parent / "misc-cache")}}))


def copy_project(dest: Path, root: Path = ROOT) -> Path:
    """spack-env/, patches/ and parx/ side by side (the recipes and develop: use ../)."""
    shutil.copytree(root / "spack-env", dest / "spack-env",
                    ignore=shutil.ignore_patterns("view", "._view", ".spack-env",
                                                  "spack.lock"))
    shutil.copytree(root / "patches", dest / "patches")
    shutil.copytree(root / "parx", dest / "parx",
                    ignore=shutil.ignore_patterns("*.o", "*.so", "build", "build-*"))
    return dest / "spack-env"


def concretize(sp: Spack, env_dir: Path, work: Path) -> tuple[dict, float, str]:
    """`spack -e env_dir concretize -f` with the offline scope; (lock, seconds, log)."""
    scope = work / "scope"
    offline_scope(sp, env_dir, scope)
    if not Path(GCC["extra_attributes"]["compilers"]["c"]).exists():  # type: ignore[index]
        raise Unavailable("no /usr/bin/gcc (the lock is concretized with Debian 12's GCC 12.2.0)")
    start = time.monotonic()
    done = subprocess.run(sp.command + ["-C", str(scope), "-e", str(env_dir), "concretize",
                                        "-f"], env=sp.env, capture_output=True, text=True,
                          timeout=1200)
    seconds = time.monotonic() - start
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"spack concretize failed ({seconds:.0f} s):\n{log[-3000:]}")
    return json.loads((env_dir / "spack.lock").read_text()), seconds, log


def start_concretize(sp: Spack, env_dir: Path, work: Path) -> tuple[subprocess.Popen, float]:
    """The same as concretize(), started in the background (see finish_concretize)."""
    scope = work / "scope"
    offline_scope(sp, env_dir, scope)
    log = open(work / "concretize.log", "w")
    proc = subprocess.Popen(sp.command + ["-C", str(scope), "-e", str(env_dir), "concretize",
                                          "-f"], env=sp.env, stdout=log, stderr=log)
    return proc, time.monotonic()


def finish_concretize(proc: subprocess.Popen, started: float, env_dir: Path,
                      work: Path) -> tuple[dict, float]:
    rc = proc.wait(timeout=1200)
    seconds = time.monotonic() - started
    if rc != 0:
        raise RuntimeError(f"spack concretize failed ({seconds:.0f} s):\n"
                           f"{(work / 'concretize.log').read_text()[-3000:]}")
    return json.loads((env_dir / "spack.lock").read_text()), seconds


# --- what of a lock matters ---------------------------------------------------------

def portable(text: str, lock: dict, env_dir: Path = ENV) -> str:
    """The lock without this machine's paths: Spack records the develop package's checkout
    (``dev_path``) as an absolute path; the committed lock names it relative to spack-env/,
    as spack.yaml's ``develop:`` does. (Freshness ignores dev_path either way.)"""
    for spec in lock["concrete_specs"].values():
        dev = spec.get("parameters", {}).get("dev_path")
        if dev and Path(dev).is_absolute():
            rel = os.path.relpath(dev, env_dir)
            text = text.replace(json.dumps(dev), json.dumps(rel))
    return text


def canonical(lock: dict) -> dict:
    """{"roots": {root spec: canonical hash}, "nodes": {canonical hash: "name@version"}}:
    node content without Spack's own hashes and ignored parameters, dependencies by
    their canonical hashes (so a change anywhere below shows in every root above)."""
    specs = lock["concrete_specs"]
    memo: dict[str, str] = {}

    def visit(h: str, stack: tuple[str, ...] = ()) -> str:
        if h in memo:
            return memo[h]
        if h in stack:
            raise ValueError(f"dependency cycle at {h}")
        node = specs[h]
        body = {k: v for k, v in node.items()
                if k not in ("hash", "dependencies", "annotations", "build_spec")}
        body["parameters"] = {k: v for k, v in (node.get("parameters") or {}).items()
                              if k not in IGNORED_PARAMETERS}
        body["dependencies"] = sorted(
            (visit(d["hash"], stack + (h,)), d["name"], json.dumps(d.get("parameters"),
                                                                    sort_keys=True))
            for d in node.get("dependencies", []))
        memo[h] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:32]
        return memo[h]

    roots = {r["spec"]: visit(r["hash"]) for r in lock["roots"]}
    nodes = {visit(h): f"{n['name']}@{n['version']}" for h, n in specs.items()}
    return {"roots": roots, "nodes": nodes}


def differences(committed: dict, fresh: dict) -> list[str]:
    """Human-readable differences between two locks; empty when the committed is fresh."""
    a, b = canonical(committed), canonical(fresh)
    out = []
    for spec in sorted(set(a["roots"]) | set(b["roots"])):
        if spec not in b["roots"]:
            out.append(f"root {spec}: in the committed lock, no longer in spack.yaml")
        elif spec not in a["roots"]:
            out.append(f"root {spec}: in spack.yaml, missing from the committed lock")
        elif a["roots"][spec] != b["roots"][spec]:
            out.append(f"root {spec}: concretizes differently now")
    for h in sorted(set(a["nodes"]) - set(b["nodes"]), key=lambda h: a["nodes"][h]):
        out.append(f"node {a['nodes'][h]}: stale (only in the committed lock)")
    for h in sorted(set(b["nodes"]) - set(a["nodes"]), key=lambda h: b["nodes"][h]):
        out.append(f"node {b['nodes'][h]}: new (not in the committed lock)")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", nargs="?", choices=["check", "write"])
    parser.add_argument("--smoke", type=Path, metavar="DIR",
                        help="the lock comparison only, no Spack; result in DIR")
    args = parser.parse_args(argv)
    if args.smoke:
        return smoke(args.smoke)
    if args.action is None:
        parser.error("give check or write (or --smoke DIR)")
    try:
        sp = find_spack()
    except Unavailable as exc:
        print(f"spack_lock: {exc}", file=sys.stderr)
        return 2
    version = spack_version(sp)
    print(f"spack_lock: Spack {version} from {sp.origin}", file=sys.stderr)
    if args.action == "write":
        with tempfile.TemporaryDirectory() as tmp:
            lock, seconds, _ = concretize(sp, ENV, Path(tmp))
        text = portable((ENV / "spack.lock").read_text(), lock)
        tmp_lock = ENV / ".spack.lock.tmp"
        tmp_lock.write_text(text)
        os.replace(tmp_lock, ENV / "spack.lock")
        shutil.rmtree(ENV / ".spack-env", ignore_errors=True)
        if (ENV / "view").is_symlink():
            (ENV / "view").unlink()
        shutil.rmtree(ENV / "._view", ignore_errors=True)
        print(f"spack_lock: wrote {ENV / 'spack.lock'} ({len(lock['roots'])} roots, "
              f"{len(lock['concrete_specs'])} specs) in {seconds:.1f} s")
        return 0
    committed = json.loads((ENV / "spack.lock").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = copy_project(Path(tmp) / "project")
        fresh, seconds, _ = concretize(sp, env_dir, Path(tmp))
    diff = differences(committed, fresh)
    for line in diff:
        print(f"spack-env/spack.lock: {line}")
    print(f"spack_lock: concretized in {seconds:.1f} s; lock "
          f"{'STALE: rerun `python bench/spack_lock.py write`' if diff else 'fresh'}",
          file=sys.stderr)
    return 1 if diff else 0


def smoke(folder: Path) -> int:
    committed = json.loads((ENV / "spack.lock").read_text())
    changed = json.loads(json.dumps(committed))
    root = changed["concrete_specs"][changed["roots"][0]["hash"]]
    root["package_hash"] = "changed-" + str(root.get("package_hash"))
    same, stale = differences(committed, committed), differences(committed, changed)
    doc = {"smoke": True, "roots": len(committed["roots"]),
           "nodes": len(canonical(committed)["nodes"]),
           "self_differences": same, "changed_recipe_differences": stale,
           "smoke_left_out": {"concretize": "Spack's concretizer (minutes; the offline "
                              "snapshot installs clingo from PyPI): tests/test_spack_lock.py"}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spack_lock.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0 if not same and stale else 1


if __name__ == "__main__":
    sys.exit(main())
