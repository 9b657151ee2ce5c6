"""Static checks of the t2hx Spack environment (``spack-env/``) and ``patches/``.

Spack itself cannot be installed on CI, so this module checks what can be checked
without it: the YAML parses, every root spec is pinned, every package name is known
(recorded builtin snapshot or our overlay repo), recipes are valid Python with a
Spack build-system base and a pinned source, every patch a recipe names exists and
every patch file is named by a recipe and recorded as verified. Each problem is one
``T2hxError`` naming file, field and fix.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from t2hx.errors import T2hxError

OVERLAY = Path("repo/spack_repo/t2hx/packages")
BUILTIN_LIST = "builtin-packages.txt"
VERIFICATION = "patch-verification.json"
# Build-system base classes of spack_repo.builtin.build_systems a recipe may derive from.
BUILD_SYSTEMS = {"Package", "AutotoolsPackage", "MakefilePackage", "CMakePackage",
                 "MesonPackage", "PythonPackage", "BundlePackage", "CachedCMakePackage"}
SHA = re.compile(r"^[0-9a-f]{40}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
SPEC_NAME = re.compile(r"^\s*([a-z0-9][a-z0-9._-]*)")


@dataclass
class Recipe:
    """What the checks need from one overlay ``package.py``."""

    name: str                      # Spack package name (dashes)
    path: Path
    versions: set[str] = field(default_factory=set)
    depends: set[str] = field(default_factory=set)
    patches: list[Path] = field(default_factory=list)


@dataclass
class EnvReport:
    """Result of ``check_env``: the problems plus counts for the summary line."""

    root: Path | None = None  # paths in messages are shown relative to it
    problems: list[T2hxError] = field(default_factory=list)
    specs: int = 0
    recipes: int = 0
    patches: int = 0
    # Already reported, so dependent checks stay quiet (one line per problem):
    broken: set[str] = field(default_factory=set)        # recipes that did not parse
    missing_patches: set[Path] = field(default_factory=set)  # referenced, absent

    def add(self, file: Path | str, field_: str, message: str, fix: str) -> None:
        path = Path(file)
        if self.root and path.is_absolute():
            try:
                path = path.resolve().relative_to(self.root.resolve())
            except ValueError:
                pass
        self.problems.append(T2hxError(message, file=path, field=field_, fix=fix))


def load_yaml(path: Path, report: EnvReport) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        report.add(path, "file", "missing", "create it or remove the reference to it")
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "yaml"
        report.add(path, where, f"invalid YAML ({getattr(err, 'problem', err)})",
                   "fix the YAML syntax")
    return None


def load_builtin(path: Path, report: EnvReport) -> tuple[dict[str, set[str]], set[str]]:
    """Packages (name -> versions we verified) and virtual names of the builtin snapshot."""
    packages: dict[str, set[str]] = {}
    virtuals: set[str] = set()
    if not path.is_file():
        report.add(path, "file", "builtin package snapshot missing",
                   "record the builtin names the environment uses")
        return packages, virtuals
    for line in path.read_text(encoding="utf-8").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "package":
            packages[words[1]] = set(words[2:])
        elif len(words) >= 2 and words[0] == "virtual":
            virtuals.add(words[1])
    return packages, virtuals


def spec_name(spec: str) -> str | None:
    match = SPEC_NAME.match(spec)
    return match.group(1) if match else None


def pinned_version(spec: str) -> str | None:
    """The exact version (``@=v``) or commit (``commit=<sha>``) a spec pins, else None."""
    match = re.search(r"@=([^\s%^+~]+)", spec) or re.search(r"\bcommit=([0-9a-f]{40})\b", spec)
    return match.group(1) if match else None


# ---------------------------------------------------------------- recipes

def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level string constants (e.g. ``PATCHES = "../../patches"``)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            out[node.targets[0].id] = node.value.value
    return out


def _string(node: ast.AST, consts: dict[str, str]) -> str | None:
    """Evaluate a string literal, a constant name or an f-string of those."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            inner = value.value if isinstance(value, ast.FormattedValue) else value
            text = _string(inner, consts)
            if text is None:
                return None
            parts.append(text)
        return "".join(parts)
    return None


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def class_name(package: str) -> str:
    """Spack's class name for a package name: ``baidu-allreduce`` -> ``BaiduAllreduce``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", package))


def parse_recipe(path: Path, develop: set[str], report: EnvReport) -> Recipe | None:
    name = path.parent.name.replace("_", "-")
    rel = path
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, str(path))
    except SyntaxError as err:
        report.add(rel, f"line {err.lineno}", f"recipe is not valid Python ({err.msg})",
                   "fix the syntax error")
        report.broken.add(name)
        return None
    consts = _constants(tree)
    builtin_bases = _builtin_imports(tree)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef)
                and n.name == class_name(name)), None)
    if cls is None:
        report.add(rel, "class", f"no class {class_name(name)}",
                   f"define class {class_name(name)}(<Spack build system>) for package {name}")
        report.broken.add(name)
        return None
    recipe = Recipe(name=name, path=path)
    bases = {b.id for b in cls.bases if isinstance(b, ast.Name)}
    inherits_builtin = bool(bases & builtin_bases)
    if not (bases & BUILD_SYSTEMS or inherits_builtin):
        report.add(rel, f"class {cls.name}", "does not derive from a Spack build system",
                   "derive from e.g. MakefilePackage/AutotoolsPackage or the builtin recipe")
    has_source = inherits_builtin
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign):
            targets = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
            has_source |= bool(targets & {"url", "git"})
    for node in ast.walk(cls):
        if not isinstance(node, ast.Call):
            continue
        call = _call_name(node)
        if call == "version":
            _check_version(node, recipe, name in develop, rel, report)
        elif call == "depends_on" and node.args:
            dep = _string(node.args[0], consts)
            dep_name = spec_name(dep) if dep else None
            if dep_name:
                recipe.depends.add(dep_name)
        elif call == "patch" and node.args:
            _check_patch(node, consts, recipe, rel, report)
    if not has_source and name not in develop:
        report.add(rel, f"class {cls.name}", "no source: neither url nor git",
                   "add url = ... (with sha256 versions) or git = ... (with commit versions)")
    return recipe


def _builtin_imports(tree: ast.Module) -> set[str]:
    """Names imported from ``spack_repo.builtin.packages.<pkg>.package``."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "spack_repo.builtin.packages."):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _check_version(node: ast.Call, recipe: Recipe, developed: bool, rel: Path,
                   report: EnvReport) -> None:
    if not node.args or not isinstance(node.args[0], ast.Constant):
        report.add(rel, "version()", "version without a literal name", 'write version("x", ...)')
        return
    version = str(node.args[0].value)
    recipe.versions.add(version)
    kwargs = {k.arg: k.value for k in node.keywords if k.arg}
    sha256 = kwargs.get("sha256")
    commit = kwargs.get("commit")
    if isinstance(sha256, ast.Constant) and SHA256.match(str(sha256.value)):
        return
    if isinstance(commit, ast.Constant) and SHA.match(str(commit.value)):
        return
    if developed and not kwargs:
        return  # source comes from the develop: path in spack.yaml
    report.add(rel, f'version("{version}")', "not pinned to a sha256 or git commit",
               'add sha256="<64 hex>" or commit="<40 hex>"')


def _check_patch(node: ast.Call, consts: dict[str, str], recipe: Recipe, rel: Path,
                 report: EnvReport) -> None:
    target = _string(node.args[0], consts)
    if target is None:
        report.add(rel, "patch()", "patch path is not a literal or constant string",
                   "use a string or an f-string of module constants")
        return
    if "://" in target:
        if not any(k.arg == "sha256" for k in node.keywords):
            report.add(rel, f"patch({target})", "URL patch without sha256", "add sha256=")
        return
    resolved = (recipe.path.parent / target).resolve()
    if not resolved.is_file():
        report.add(rel, f"patch({target})", f"patch file {resolved} does not exist",
                   "create the patch or fix the path")
        report.missing_patches.add(resolved)
        return
    recipe.patches.append(resolved)


def parse_recipes(env_dir: Path, develop: set[str], report: EnvReport) -> dict[str, Recipe]:
    recipes: dict[str, Recipe] = {}
    overlay = env_dir / OVERLAY
    for path in sorted(overlay.glob("*/package.py")):
        recipe = parse_recipe(path, develop, report)
        if recipe:
            recipes[recipe.name] = recipe
    report.recipes = len(recipes)
    return recipes


# ---------------------------------------------------------------- environment

def _includes(env_dir: Path, spack: dict[str, Any], manifest: Path,
              report: EnvReport) -> list[tuple[Path, dict[str, Any]]]:
    """The included config files (plus the documented externals example)."""
    files: list[Path] = []
    for entry in spack.get("include") or []:
        path = env_dir / str(entry.get("path") if isinstance(entry, dict) else entry)
        if not path.is_file():
            report.add(manifest, f"include: {entry}", "included file does not exist",
                       "create it or remove the include entry")
            continue
        files.append(path)
    example = env_dir / "externals-debian.yaml"
    if example.is_file() and example not in files:
        files.append(example)
    out = []
    for path in files:
        data = load_yaml(path, report)
        if isinstance(data, dict):
            out.append((path, data))
    return out


def check_specs(manifest: Path, specs: list[Any], known: dict[str, set[str]],
                recipes: dict[str, Recipe], develop: set[str], report: EnvReport) -> None:
    for spec in specs:
        if not isinstance(spec, str):
            report.add(manifest, "specs", f"spec {spec!r} is not a string", "write 'name@=version'")
            continue
        name = spec_name(spec)
        if name is None:
            report.add(manifest, f"specs: {spec}", "cannot read the package name",
                       "start the spec with the package name")
            continue
        version = pinned_version(spec)
        if version is None:
            report.add(manifest, f"specs: {spec}", "spec is not pinned",
                       f"write {name}@=<version> (or commit=<40-hex sha>)")
        if name in recipes:
            versions = recipes[name].versions | known.get(name, set())
        elif name in known:
            versions = known[name]
        else:
            report.add(manifest, f"specs: {spec}", f"unknown package {name}",
                       f"add a recipe under spack-env/{OVERLAY}/{name.replace('-', '_')}/ "
                       f"or record it in spack-env/{BUILTIN_LIST}")
            continue
        if (version and versions and version not in versions and name not in develop
                and not SHA.match(version)):
            report.add(manifest, f"specs: {spec}", f"version {version} is not declared for {name}",
                       f"pin one of {', '.join(sorted(versions))} or add the version to the recipe")
    report.specs = len(specs)


def check_packages_config(path: Path, packages: dict[str, Any], known: set[str],
                          virtuals: set[str], report: EnvReport) -> None:
    for name, conf in packages.items():
        if name != "all" and name not in known and name not in virtuals:
            report.add(path, f"packages: {name}", f"unknown package {name}",
                       f"add a recipe or record it in spack-env/{BUILTIN_LIST}")
        if not isinstance(conf, dict):
            continue
        for req in conf.get("require") or []:
            req = req.get("spec", "") if isinstance(req, dict) else str(req)
            if name in virtuals:
                provider = spec_name(req)
                if provider not in known:
                    report.add(path, f"packages: {name}: require", f"unknown provider {provider}",
                               f"record {provider} in spack-env/{BUILTIN_LIST}")
            elif "@=" not in req:
                report.add(path, f"packages: {name}: require", f"requirement '{req}' is not pinned",
                           'write "@=<version> ..."')
        for ext in conf.get("externals") or []:
            spec = str(ext.get("spec", "")) if isinstance(ext, dict) else ""
            if spec_name(spec) != name or "@" not in spec:
                report.add(path, f"packages: {name}: externals", f"external spec '{spec}' "
                           "must name the package and its version", f"write {name}@<version>")
            if not isinstance(ext, dict) or not ext.get("prefix"):
                report.add(path, f"packages: {name}: externals", "external without prefix",
                           "add prefix: <install prefix>")


def check_develop(manifest: Path, env_dir: Path, develop: dict[str, Any],
                  recipes: dict[str, Recipe], report: EnvReport) -> None:
    for name, conf in develop.items():
        conf = conf or {}
        if name not in recipes:
            report.add(manifest, f"develop: {name}", "develop entry without an overlay recipe",
                       f"add spack-env/{OVERLAY}/{name.replace('-', '_')}/package.py")
        if "@=" not in str(conf.get("spec", "")):
            report.add(manifest, f"develop: {name}: spec", "develop spec is not pinned",
                       f"write spec: {name}@=<version>")
        path = env_dir / str(conf.get("path", ""))
        if not conf.get("path") or not path.is_dir():
            report.add(manifest, f"develop: {name}: path", f"source directory {path} missing",
                       "point path: at the package's source directory")


def check_patch_files(root: Path, recipes: dict[str, Recipe], env_dir: Path,
                      report: EnvReport) -> None:
    """Every file in patches/ is applied by a recipe and recorded as verified."""
    referenced = {p for r in recipes.values() for p in r.patches}
    files = sorted(p.resolve() for p in (root / "patches").rglob("*") if p.is_file())
    report.patches = len(files)
    patches_dir = (root / "patches").resolve()
    for path in files:
        owner = path.relative_to(patches_dir).parts[0]
        if path not in referenced and owner not in report.broken:
            report.add(path.relative_to(root.resolve()), "patch", "not referenced by any recipe",
                       "apply it with patch(...) in a recipe or delete it")
    verification = env_dir / VERIFICATION
    try:
        entries = json.loads(verification.read_text(encoding="utf-8"))["patches"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        report.add(verification, "patches", f"unreadable verification record ({err})",
                   "write {\"patches\": [{\"patch\": ..., \"commit\": ..., \"result\": ...}]}")
        return
    recorded = {}
    for entry in entries:
        if not isinstance(entry, dict) or not {"patch", "package", "upstream", "result",
                                                "date"} <= entry.keys():
            report.add(verification, "patches", f"incomplete entry {entry!r}",
                       "give patch, package, upstream, result and date")
            continue
        recorded[(root / entry["patch"]).resolve()] = entry
        if (not (root / entry["patch"]).is_file()
                and (root / entry["patch"]).resolve() not in report.missing_patches):
            report.add(verification, f"patches: {entry['patch']}", "recorded patch does not exist",
                       "remove the entry or restore the patch")
    for path in files:
        rel = path.relative_to(root.resolve())
        if path not in referenced:
            continue  # reported above (or its recipe is broken)
        if path not in recorded:
            report.add(verification, f"patches: {rel}", "patch not recorded as verified",
                       "apply it to the pinned upstream tree and record the result")
        elif not str(recorded[path]["result"]).startswith("applies"):
            report.add(verification, f"patches: {rel}",
                       f"recorded result is '{recorded[path]['result']}'",
                       "fix the patch until it applies to the pinned upstream tree")


def check_env(env_dir: Path) -> EnvReport:
    """Run every static check on the environment in ``env_dir`` (patches/ beside it)."""
    env_dir = Path(env_dir)
    root = env_dir.parent
    report = EnvReport(root=root)
    manifest = env_dir / "spack.yaml"
    data = load_yaml(manifest, report)
    if data is None:
        return report
    spack = data.get("spack") if isinstance(data, dict) else None
    if not isinstance(spack, dict):
        report.add(manifest, "spack", "top-level 'spack:' mapping missing",
                   "start the file with spack:")
        return report
    develop = spack.get("develop") or {}
    recipes = parse_recipes(env_dir, set(develop), report)
    builtin, virtuals = load_builtin(env_dir / BUILTIN_LIST, report)
    known = set(builtin) | set(recipes) | report.broken
    specs = spack.get("specs") or []
    if not specs:
        report.add(manifest, "specs", "no specs", "list the packages of the study")
    check_specs(manifest, specs, builtin, recipes, set(develop), report)
    check_develop(manifest, env_dir, develop, recipes, report)
    for path, conf in _includes(env_dir, spack, manifest, report):
        check_packages_config(path, conf.get("packages") or {}, known, virtuals, report)
    check_packages_config(manifest, spack.get("packages") or {}, known, virtuals, report)
    for recipe in recipes.values():
        for dep in sorted(recipe.depends - known - virtuals):
            report.add(recipe.path, f'depends_on("{dep}")', f"unknown package {dep}",
                       f"add a recipe or record it in spack-env/{BUILTIN_LIST}")
    check_patch_files(root, recipes, env_dir, report)
    return report
