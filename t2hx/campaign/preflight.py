"""Whole-file checks before a campaign starts (issue: nothing silent): every plane of every
system it runs on builds, every benchmark input of the study is usable at every node count
it will run at, and the campaign fits in memory. A failure is one line naming the file and
field, raised before provenance is written or ReFrame starts; otherwise each of these would
surface case by case, hundreds of times, or not at all.
"""

from __future__ import annotations

from t2hx import benchmarks
from t2hx.benchmarks.proxyapp import AppSpec
from t2hx.conf import System
from t2hx.errors import ConfError, T2hxError
from t2hx.fabric.build import check_planes
from t2hx.study import Study

#: ReFrame holds every generated case in memory: about 25 KB each (the paper profile's 9,215
#: cases: 226 MB resident). 200,000 cases is ~5 GB, a fifth of a 24 GB machine and 20 times
#: the largest study here; more is a typo (a ladder or repetition count), not a campaign.
MAX_CASES = 200_000


def check(study: Study, systems: list[System]) -> None:
    for system in systems:
        check_planes(system)
    check_combos(study)
    check_inputs(study)
    check_size(study, systems)


def check_combos(study: Study) -> None:
    """Every combo runs on the systems the study was written for: a plane or engine those
    lack is a typo (``hyprex``), not a port. On another system a combo it cannot run is
    left out and said (t2hx.campaign.selection.say_left_out). A site whose conf directory
    lacks the study's own systems (a port) has nothing to check them against; a study naming
    a system no conf has is refused when it is selected (t2hx.campaign.selection)."""
    from t2hx.conf import load_system, system_path

    own = {name: load_system(path) for name in study.own_systems()
           if (path := system_path(name)).is_file()}
    listed = [("combos", study.combos), ("extra_combos", study.extra_combos)]
    for kind, combos in listed:
        for index, combo in enumerate(combos):
            targets = [own[combo.system]] if combo.system in own else \
                [] if combo.system else list(own.values())
            reasons = [why for s in targets if (why := study.left_out(s).get(combo.name))]
            if reasons and len(reasons) == len(targets):
                raise ConfError(f"combo '{combo.name}' cannot run on the study's own system "
                                f"{targets[0].name}: {reasons[0]}", file=study.path,
                                field=f"{kind}[{index}]",
                                fix="name a plane and an engine of that system's conf")


def check_size(study: Study, systems: list[System]) -> None:
    from t2hx.reframe_site import usable_nodes

    sizes = {s.name: usable_nodes(s) for s in systems} if systems else {"any system": None}
    for where, nodes in sizes.items():
        cases = study.all_cases(nodes)
        if cases > MAX_CASES:
            raise ConfError(f"{cases:,} cases on {where}, "
                            f"more than a campaign holds ({MAX_CASES:,}: ReFrame keeps every "
                            "case in memory, ~25 KB each)", file=study.path,
                            field="repetitions", fix="fewer repetitions or ladder rungs, or "
                            "a profile (T2HX_STUDY_PROFILE)")


def check_inputs(study: Study) -> None:
    """Each benchmark's input at each node count it runs at: the model's input rules for
    codes the model runs, the ``t2hx simulate`` options (checked by their argparse types,
    t2hx.benchmarks.base.option) for the network benchmarks."""
    capacity = [study.capacity_benchmark(app) for app in study.capacity["apps"] or {}]
    for name in dict.fromkeys([*study.benchmarks, *capacity]):
        bench = benchmarks.get(name, field=f"benchmarks.{name}")
        for nodes in _node_counts(study, name):
            inp = study.input(name, nodes)
            try:
                if bench.app is not None:
                    _check_app(bench.app, inp, nodes)
                bench.sim_options(inp)
            except T2hxError as err:
                field = err.field or "input"
                if not field.startswith("benchmarks."):
                    field = f"benchmarks.{name}.{field}"
                raise ConfError(f"at {nodes} nodes: {err.message}", file=study.path,
                                field=field, fix=err.fix) from None


def _node_counts(study: Study, name: str) -> list[int]:
    extra = [n for c in study.extra_combos if c.only for n in c.only.get(name, [])]
    capacity = [n for app, n in study.capacity["apps"].items()
                if study.capacity_benchmark(app) == name] if study.capacity["apps"] else []
    return sorted({*study.nodes(name), *extra, *capacity})


def _check_app(app: AppSpec, inp: dict, nodes: int) -> None:
    app.work(inp, nodes)
    for measure, _ in app.measure_rules:
        app.measure(measure, inp, nodes)
