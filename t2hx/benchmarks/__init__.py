"""The benchmark registry: one module per benchmark, the only place its identity lives.

Every module of this package that defines ``BENCHMARK`` (a
:class:`~t2hx.benchmarks.base.Benchmark`) is one benchmark: its study key
(``conf/studies/<study>.yaml`` ``benchmarks:``/``capacity.apps:``), its ReFrame check
(``checks/``), its parser binding (t2hx/post/parsers/), its Spack spec and local binary,
its input rules, and the workload the simulator runs (typed numbers, their upstream text,
their noise rule, the capacity job). Modules without ``BENCHMARK`` are shared machinery:
``base`` (the declarations), ``results`` (typed results as JSON), ``imbtext`` (IMB's
format), ``proxyapp`` (the proxy-app pattern). ``t2hx simulate``, the capacity model, post's
parser dispatch and the checks all look names up here.

A site adds a benchmark without editing t2hx: the packages named in
``$T2HX_BENCHMARK_PACKAGES`` (importable names, comma-separated) are searched the same way,
after this one (docs/architecture.md, "Adding a benchmark is one module").

Names: a key, an alias, or for benchmarks with variants (IMB's collectives) ``<key>-<variant>``
or the bare variant (``imb-bcast``, ``bcast``). Importing the registry imports nothing heavy
(no numpy, no flow model), so checks and the CLI read it cheaply.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from dataclasses import replace
from types import ModuleType

from t2hx.benchmarks.base import GROUPS, Benchmark
from t2hx.benchmarks.proxyapp import AppSpec
from t2hx.errors import WorkloadError

PACKAGES_ENV = "T2HX_BENCHMARK_PACKAGES"


def packages() -> list[str]:
    """This package, then the site's (``$T2HX_BENCHMARK_PACKAGES``)."""
    extra = os.environ.get(PACKAGES_ENV, "")
    return list(dict.fromkeys([__name__, *(p.strip() for p in extra.split(",") if p.strip())]))


def _package(name: str) -> ModuleType:
    try:
        module = importlib.import_module(name)
    except ImportError as err:
        raise WorkloadError(f"cannot import benchmark package '{name}' ({err})",
                            field=PACKAGES_ENV,
                            fix="name importable packages (on PYTHONPATH), comma-separated"
                            ) from None
    if not hasattr(module, "__path__"):
        raise WorkloadError(f"'{name}' is a module, not a package of benchmark modules",
                            field=PACKAGES_ENV, fix="name the package that holds them")
    return module


def _declared(module: ModuleType) -> Benchmark | None:
    bench = getattr(module, "BENCHMARK", None)
    if bench is None:
        return None
    if not isinstance(bench, Benchmark):
        raise WorkloadError(f"BENCHMARK is a {type(bench).__name__}, not a Benchmark",
                            file=module.__file__, field="BENCHMARK",
                            fix="declare it with t2hx.benchmarks.base.Benchmark (or proxy_app)")
    if bench.group not in GROUPS:
        raise WorkloadError(f"group '{bench.group}'", file=module.__file__, field="group",
                            fix="use one of: " + ", ".join(GROUPS))
    return replace(bench, module=module.__name__)


def discover() -> tuple[Benchmark, ...]:
    """Every package's benchmark modules, network first, then apps, then x500 (module name
    order within a group)."""
    found = []
    for name in packages():
        package = _package(name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            bench = _declared(importlib.import_module(f"{name}.{info.name}"))
            if bench is not None:
                found.append(bench)
    return tuple(sorted(found, key=lambda b: GROUPS.index(b.group)))


def _index(registry: tuple[Benchmark, ...]) -> dict[str, tuple[Benchmark, str | None]]:
    names: dict[str, tuple[Benchmark, str | None]] = {}

    def add(name: str, bench: Benchmark, variant: str | None) -> None:
        if name in names and names[name][0] is not bench:
            raise WorkloadError(f"benchmark name '{name}' is bound twice "
                                f"({names[name][0].module}, {bench.module})",
                                field="key/aliases/variants",
                                fix="rename the key or alias in one of the two modules")
        names[name] = (bench, variant)

    for b in registry:
        for name in (b.key, *b.aliases):
            add(name, b, None)
        for v in b.variants:
            add(b.name(v), b, v)
            add(v.lower(), b, v)
    return names


REGISTRY: tuple[Benchmark, ...] = discover()
NAMES = _index(REGISTRY)
BY_KEY = {b.key: b for b in REGISTRY}
IMB_COLLECTIVES: tuple[str, ...] = BY_KEY["imb"].variants


def find(name: str) -> tuple[Benchmark, str | None] | None:
    """(entry, variant) for a key, alias, ``<key>-<variant>`` or bare variant; else None."""
    return NAMES.get(name.strip().lower())


def resolve(name: str, field: str = "benchmark") -> tuple[Benchmark, str | None]:
    """Like :func:`find`, but an unknown name is one line naming ``field`` and the keys."""
    hit = find(name)
    if hit is None:
        raise WorkloadError(f"unknown benchmark '{name}'", field=field,
                            fix="use one of: " + ", ".join(BY_KEY))
    return hit


def get(name: str, field: str = "benchmark") -> Benchmark:
    return resolve(name, field)[0]


def app(name: str, field: str = "benchmark") -> AppSpec:
    """The code the flow model runs for a proxy app or x500 name (``qb@ll`` -> qball)."""
    hit = find(name)
    if hit is None or hit[0].app is None:
        raise WorkloadError(f"unknown application '{name}'", field=field,
                            fix="use one of: " + ", ".join(b.key for b in REGISTRY if b.app))
    return hit[0].app
