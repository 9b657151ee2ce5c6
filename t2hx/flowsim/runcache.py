"""Simulate a deterministic case once: the cache of ``t2hx simulate``'s typed results.

The flow model gives the same numbers for the same inputs, so the repetitions of a
simulated case need not recompute them: the first run that gets here simulates and stores
its noiseless result (the benchmark's typed numbers and the output header, as JSON), the
others reuse it, apply their own noise and print it, and say so in the
``# t2hx-simulated:`` line (``cache=hit repeat_of=<repetition that simulated it>``,
docs/formats.md#simulated-output).

The key is a sha256 over everything the result depends on: the benchmark and its options,
the system conf, plane, routing engine, LMC, the hostfile, routing dumps / routing input
(demand or job file) by content, our OpenSM plugin library for its engines, the network engine, and the
model's code version (the sources of t2hx.fabric, t2hx.routing, t2hx.flowsim, the benchmark
modules and the simulator, less the packet engine's own files for a flow-model case; a site's
benchmark module by its own content). Any change gives a new key, so a stale result is never
reused.
The request's seed is part of the key only for the benchmarks that draw from it (their
workload is ``seeded``); for the others it does not change the result.

Entries live in ``<work>/simulate/<key[:2]>/<key>.json``, written atomically; concurrent
jobs of one case serialise on a lock file beside the entry, so one simulates while the
others wait and reuse. A job killed mid-simulation leaves no entry.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from pathlib import Path
from typing import Any
from collections.abc import Callable

from t2hx import ROOT
from t2hx.atomic import atomic_write
from t2hx.imports import closure, modules
from t2hx.paths import work_root
from t2hx.routing_engines import RoutingInput, routing_engine

# The simulator's entry point and the benchmark modules (loaded by name, t2hx/benchmarks/):
# every module they reach by import is model code. The compiled kernels are C, and the app
# models and calibrations are data, so they are listed besides.
ENTRY = "t2hx.simulation"
BENCHMARKS = "t2hx.benchmarks."
CODE_GLOBS = ("t2hx/flowsim/kernel/*.c", "conf/appmodels.yaml")
MODEL_DATA = "conf/calibration"     # the app models' calibrations (*.json) are model too
PLUGIN = ROOT / "parx" / "libparx.so"
ROUTING_DUMPS = ("guid2lid", "opensm-lfts.dump")


def file_digest(path: str | Path | None) -> str | None:
    if not path:
        return None
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


#: Model code only the packet model runs (its engine, kernel, host interface, SL/VL tables):
#: a flow-model case never imports it (tests/test_model_versions.py), so the flow model's
#: code version leaves it out, and a change to the packet engine re-simulates packet cases
#: and stales the logs that ran some, not the others (t2hx/post/freshness.py).
PACKET_ONLY = ("t2hx/flowsim/packet.py", "t2hx/flowsim/packetk.py",
               "t2hx/flowsim/components.py", "t2hx/flowsim/hostif.py",
               "t2hx/routing/pathsl.py", "t2hx/routing/slvl.py", "t2hx/flowsim/kernel/packetk.c")
FLOW = "flow"           # t2hx.simrequest.FLOW_MODEL (not imported: it is no model code)


def model_sources(model: str | None = None) -> list[Path]:
    """Every file a simulated result depends on as model code or model data; for
    ``model="flow"`` the flow model's (all but PACKET_ONLY), else the packet model's (all)."""
    roots = [ENTRY] + [m for m in modules() if m.startswith(BENCHMARKS)]
    files = set(closure(roots, work_root() / "imports"))
    files |= {p for g in CODE_GLOBS for p in ROOT.glob(g)}
    files |= set((ROOT / MODEL_DATA).glob("*.json"))
    if model == FLOW:
        files -= {ROOT / p for p in PACKET_ONLY}
    return sorted(files)


#: The code versions a long-lived process fixed when it loaded the model (t2hx/simserver.py),
#: by model ("flow", or "all" for the packet model): its cases run the code it loaded, so
#: their keys name that code, whatever the files say now.
PINNED: dict[str, str] | None = None


def code_version(model: str | None = None) -> str:
    """sha256 over the model's sources (:func:`model_sources`): a code change invalidates
    every entry of the models it is part of."""
    which = FLOW if model == FLOW else "all"
    if PINNED is not None:
        return PINNED[which]
    h = hashlib.sha256()
    for path in model_sources(model):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def case_inputs(*, benchmark: str, seeded: bool, system_file: Path, plane: str,
                engine: str, lmc: int | None, hostfile: str, routing_dir: str | None,
                routing_input: RoutingInput | None, options: dict[str, Any],
                seed: int, network_model: str) -> dict[str, Any]:
    """Everything a simulated result depends on, except the model's code version."""
    routing = None
    if routing_dir:
        routing = {name: file_digest(Path(routing_dir) / name) for name in ROUTING_DUMPS}
    return {"benchmark": benchmark, "system": system_digest(system_file), "plane": plane,
            "engine": engine, "lmc": lmc, "hostfile": file_digest(hostfile),
            "routing": routing,
            "routing_input": routing_input and {"kind": routing_input.kind,
                                                "file": file_digest(routing_input.path)},
            "plugin": file_digest(PLUGIN) if routing_engine(engine).ours else None,
            "options": options, "seed": seed if seeded else None,
            "network_model": network_model}


# Conf sections that say how jobs are launched or scheduled, not what is simulated: a
# campaign on Slurm and one on this machine share their cases (and noise draws).
NOT_SIMULATED = ("description", "launcher", "simulate")


def system_digest(path: Path) -> str | None:
    """The conf's content minus NOT_SIMULATED (parsed, so comments do not count either)."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return file_digest(path)     # open_network reports the file's error
    if not isinstance(data, dict):
        return file_digest(path)
    try:
        return digest(_simulated_part(data))
    except (TypeError, ValueError):   # keys YAML allows and JSON does not
        return file_digest(path)


# Per plane, how the real cluster's OpenSM is reached: not simulated either.
NOT_SIMULATED_OPENSM = ("host", "dump_dir", "sm")


def _simulated_part(data: dict) -> dict:
    out = {k: v for k, v in data.items() if k not in NOT_SIMULATED}
    planes = out.get("planes")
    if isinstance(planes, dict):
        out["planes"] = {
            name: ({**p, "opensm": {k: v for k, v in p["opensm"].items()
                                    if k not in NOT_SIMULATED_OPENSM}}
                   if isinstance(p, dict) and isinstance(p.get("opensm"), dict) else p)
            for name, p in planes.items()}
    return out


def digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class RunCache:
    def __init__(self, work: str | Path):
        self.root = Path(work) / "simulate"

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get_or_make(self, key: str, repetition: int,
                    make: Callable[[], Any]) -> tuple[Any, int | None]:
        """(the case's JSON value, repetition it was simulated for if reused, else None)."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.parent / f".{path.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            entry = self._read(path)
            if entry is not None:
                return entry["value"], entry["repetition"]
            value = make()
            atomic_write(path, json.dumps({"repetition": repetition, "value": value}) + "\n")
            return value, None

    @staticmethod
    def _read(path: Path) -> dict | None:
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):     # absent, or unreadable: simulate again
            return None
        if isinstance(entry, dict) and "value" in entry and \
                isinstance(entry.get("repetition"), int):
            return entry
        return None
