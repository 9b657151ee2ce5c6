#!/usr/bin/env python3
"""Record what a real `spack install` of spack-env built on this machine, and check the
Spack-built OpenSM with the Spack-built t2hx-parx plugin routes the mini HyperX.

    python bench/spack_verify.py --env DIR [--spack CMD] [--scope DIR ...]
        [--concretize-s S] [--not-verified NAME=WHY ...] [--out spack-env/verification.json]

DIR is the Spack environment that was installed (spack-env itself, or a copy with a site's
externals, e.g. externals-debian.yaml). For every root of DIR's spack.lock this asks Spack
(`spack find`) whether it is installed, reads its install time from the prefix's
.spack/install_times.json, and writes verification.json: spack_version, concretize_s,
installed [{name, version, hash, seconds, prefix}], not_verified [{name, why}], and the
routing check. A root neither installed nor explained with --not-verified is an error.

``--smoke DIR``: without an installed environment, the routing check with this machine's
OpenSM (/usr) and the repository's plugin build (parx/libparx.so), the committed lock's roots
read, the record in DIR/spack_verify.json saying what was left out (tests/test_bench_smoke.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The engine Spack's plugin build is checked with.
ENGINE = "parx"
from t2hx.atomic import atomic_write  # noqa: E402


def spack(cmd: list[str], scopes: list[str], env_dir: str, *args: str) -> str:
    full = cmd + [a for s in scopes for a in ("-C", s)] + ["-e", env_dir, *args]
    return subprocess.run(full, capture_output=True, text=True, check=True).stdout


def lock_roots(env_dir: str) -> dict[str, dict]:
    lock = json.loads((Path(env_dir) / "spack.lock").read_text())
    roots = {}
    for root in lock["roots"]:
        node = lock["concrete_specs"][root["hash"]]
        roots[node["name"]] = {"name": node["name"], "version": node["version"],
                               "hash": root["hash"], "external": "external" in node}
    return roots


def installed_roots(cmd: list[str], scopes: list[str], env_dir: str) -> dict[str, dict]:
    roots = lock_roots(env_dir)
    fmt = "{name}|{version}|{hash}|{prefix}"
    out = spack(cmd, scopes, env_dir, "find", "--format", fmt)
    prefixes = {}
    for line in out.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 4:
            prefixes[parts[2]] = parts[3]
    for rec in roots.values():
        rec["prefix"] = prefixes.get(rec["hash"])
    return roots


def products(prefix: str) -> list[str]:
    """Executables in bin/ and sbin/, shared libraries in lib/, relative to the prefix."""
    out = []
    for sub in ("bin", "sbin", "lib"):
        d = Path(prefix) / sub
        if d.is_dir():
            for f in sorted(d.iterdir()):
                if f.is_file() and (os.access(f, os.X_OK) and sub != "lib"
                                    or sub == "lib" and f.suffix == ".so"):
                    out.append(f"{sub}/{f.name}")
    return out


def install_seconds(prefix: str) -> float | None:
    times = Path(prefix) / ".spack" / "install_times.json"
    if not times.exists():
        return None
    total = json.loads(times.read_text())["total"]
    return round(float(total["seconds"] if isinstance(total, dict) else total), 1)


def route_mini_hyperx(opensm_prefix: str, parx_prefix: str) -> dict:
    """The Spack-built opensm (first on PATH) loads the Spack-built libparx.so and routes
    the mini HyperX with the parx engine, no fallback."""
    from t2hx.conf import load_system
    from t2hx.fabric.build import build_plane
    from t2hx.routing import parx
    from t2hx.routing.opensm import PLUGIN_NAME, route

    fab = build_plane(load_system(ROOT / "conf" / "systems" / "mini.yaml"), "hyperx")
    kw = parx.routing_args(fab, ENGINE)
    kw["extra_conf"]["event_plugin_name"] = PLUGIN_NAME
    lib = Path(parx_prefix) / "lib"
    env = {"PATH": f"{Path(opensm_prefix) / 'sbin'}:{os.environ['PATH']}",
           "LD_LIBRARY_PATH": str(lib)}
    resolved = shutil.which("opensm", path=env["PATH"])
    if resolved != str(Path(opensm_prefix) / "sbin" / "opensm"):
        raise SystemExit(f"opensm on PATH is {resolved}, not the Spack-built one")
    runpath = subprocess.run(["readelf", "-d", str(lib / "libparx.so")], capture_output=True,
                             text=True, check=True).stdout
    linked = str(Path(opensm_prefix) / "lib") in runpath
    with tempfile.TemporaryDirectory() as tmp:
        result = route(fab, Path(tmp) / "route", ENGINE, timeout=180, env=env, **kw)
        log = (result.out_dir / "opensm.log").read_text(errors="replace")
    loaded = [line.split("-> ", 1)[-1].strip() for line in log.splitlines()
              if "parx:" in line or "parx tables" in line or "-> OpenSM " in line]
    return {"opensm": str(Path(opensm_prefix) / "sbin" / "opensm"),
            "opensm_on_path": resolved,
            "plugin": str(lib / "libparx.so"),
            "plugin_runpath_has_spack_opensm_lib": linked,
            "system": "conf/systems/mini.yaml", "plane": "hyperx", "engine": ENGINE,
            "engine_used": result.summary.get("engine_used"),
            "fallback": result.summary.get("fallback"),
            "routing_s": round(float(result.summary.get("seconds", 0.0)), 2),
            "opensm_log": loaded[:4],
            "ok": (result.summary.get("engine_used") == ENGINE
                   and not result.summary.get("fallback") and linked)}


def tree_relative(doc, tree: str | None):
    """Paths inside this machine's Spack install tree as ``<install-tree>/...``: the record
    names what was built where in the tree, not where the tree sat on this machine."""
    if isinstance(doc, dict):
        return {k: tree_relative(v, tree) for k, v in doc.items()}
    if isinstance(doc, list):
        return [tree_relative(v, tree) for v in doc]
    if tree and isinstance(doc, str) and doc.startswith(tree + "/"):
        return "<install-tree>/" + doc[len(tree) + 1:]
    return doc


def smoke(folder: Path) -> int:
    """The routing check on this machine's OpenSM with the repository's plugin build."""
    plugin = ROOT / "parx" / "libparx.so"
    if not plugin.is_file():
        raise SystemExit(f"{plugin} missing (fix: run/setup builds it)")
    prefix = folder / "parx-prefix"
    (prefix / "lib").mkdir(parents=True, exist_ok=True)
    (prefix / "lib" / "libparx.so").unlink(missing_ok=True)
    (prefix / "lib" / "libparx.so").symlink_to(plugin)
    routing = route_mini_hyperx("/usr", str(prefix))
    doc = {"smoke": True, "lock_roots": sorted(lock_roots(str(ROOT / "spack-env"))),
           "opensm_parx_routing": routing,
           "smoke_left_out": {"installed": "no installed Spack environment here: `spack "
                              "find` and the install records are read only by a real run "
                              "after `spack install` (spack-env/README.md)"}}
    atomic_write(folder / "spack_verify.json", json.dumps(doc, indent=2) + "\n")
    ok = routing["engine_used"] == ENGINE and not routing["fallback"]
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", type=Path, metavar="DIR",
                    help="the routing check only, with /usr's OpenSM; result in DIR")
    ap.add_argument("--env", help="the installed environment (required)")
    ap.add_argument("--spack", default="spack", help="the spack command (shell words)")
    ap.add_argument("--scope", action="append", default=[], help="extra -C scope")
    ap.add_argument("--concretize-s", type=float,
                    help="wall time of `spack -e spack-env concretize -f` (the committed lock; "
                    "required)")
    ap.add_argument("--install-concretize-s", type=float)
    ap.add_argument("--not-verified", action="append", default=[], metavar="NAME=WHY")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--measure", action="append", default=[], metavar="KEY=SECONDS",
                    help="another measured time to record, e.g. concretize_quiet_s=64.2")
    ap.add_argument("--out", default=str(ROOT / "spack-env" / "verification.json"))
    args = ap.parse_args(argv)
    if args.smoke:
        return smoke(args.smoke)
    if args.env is None or args.concretize_s is None:
        ap.error("--env and --concretize-s are required (or --smoke DIR)")
    cmd = shlex.split(args.spack)
    version = subprocess.run(cmd + ["--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    roots = installed_roots(cmd, args.scope, args.env)
    why = dict(item.split("=", 1) for item in args.not_verified)
    installed, not_verified, errors = [], [], []
    for name, rec in sorted(roots.items()):
        if rec["external"]:
            not_verified.append({"name": name, "why": why.get(
                name, f"external (site option): {rec['version']} from the system, not built")})
        elif rec["prefix"]:
            files = products(rec["prefix"])
            if not files:
                errors.append(f"{name}: installed prefix {rec['prefix']} has no executables "
                              "or shared libraries (a build that failed quietly?)")
            installed.append({"name": name, "version": rec["version"], "hash": rec["hash"],
                              "seconds": install_seconds(rec["prefix"]),
                              "prefix": rec["prefix"], "products": files})
        elif name in why:
            not_verified.append({"name": name, "why": why[name]})
        else:
            errors.append(f"{name}: neither installed nor explained (--not-verified)")
    for name, text in why.items():
        if name not in roots:
            not_verified.append({"name": name, "why": text})
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    prefix = {r["name"]: r["prefix"] for r in installed}
    routing = None
    if "opensm" in prefix and "t2hx-parx" in prefix:
        routing = route_mini_hyperx(prefix["opensm"], prefix["t2hx-parx"])
    doc = {
        "spack_version": version,
        "spack_packages_commit": None,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores",
        "concretize_s": args.concretize_s,
        "install_concretize_s": args.install_concretize_s,
        **{k: float(v) for k, v in (m.split("=", 1) for m in args.measure)},
        "installed": installed,
        "not_verified": not_verified,
        "opensm_parx_routing": routing,
        "notes": args.note,
    }
    import yaml  # noqa: E402

    pinned = yaml.safe_load((ROOT / "spack-env" / "spack.yaml").read_text())["spack"]
    doc["spack_packages_commit"] = pinned["repos"]["builtin"]["commit"]
    tree = os.path.commonpath([r["prefix"] for r in installed]) if installed else None
    doc = tree_relative(doc, tree)
    tmp = Path(args.out).with_name(Path(args.out).name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(installed)} installed, {len(not_verified)} not verified; "
          f"routing {'ok' if routing and routing['ok'] else routing}")
    return 0 if (routing is None or routing["ok"]) else 1


if __name__ == "__main__":
    sys.exit(main())
