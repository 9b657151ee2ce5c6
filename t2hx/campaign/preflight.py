"""Whole-file checks before a campaign starts (issue: nothing silent): every plane of every
system it runs on builds, every benchmark input of the study is usable at every node count
it will run at, and the campaign fits in memory. A failure is one line naming the file and
field, raised before provenance is written or ReFrame starts; otherwise each of these would
surface case by case, hundreds of times, or not at all.
"""

from __future__ import annotations

from t2hx import ROOT, benchmarks
from t2hx.benchmarks.proxyapp import AppSpec
from t2hx.conf import System
from t2hx.errors import ConfError, T2hxError
from t2hx.fabric.build import check_planes
from t2hx.simrequest import PACKET_MODEL
from t2hx.study import Study

#: ReFrame holds every generated case in memory: about 25 KB each (the paper profile's 9,215
#: cases: 226 MB resident). 200,000 cases is ~5 GB, a fifth of a 24 GB machine and 20 times
#: the largest study here; more is a typo (a ladder or repetition count), not a campaign.
MAX_CASES = 200_000


def check(study: Study, systems: list[System], rf_system: str = "sim") -> None:
    """Every check, before ReFrame starts; ``rf_system`` is the ReFrame system the campaign
    runs on (``sim``, ``local``, or a real cluster's name)."""
    if rf_system.split(":")[0] not in ("sim", "local"):
        for system in systems:
            check_real(system)
    if rf_system.split(":")[0] == "sim":
        check_ranks_per_node(study)
    for system in systems:
        check_planes(system)
        if rf_system.split(":")[0] == "sim":
            check_host_interface(study, system)
    check_combos(study)
    check_variants(study)
    check_inputs(study)
    check_size(study, systems)


def check_ranks_per_node(study: Study) -> None:
    """Several ranks per node are simulated by the flow model (t2hx/flowsim/network.py:
    a host's ranks share its links, and its memory for their messages to each other). The
    packet engine gives every rank a host interface of its own and the capacity mix places
    one rank per node, so a study asking them for more is refused, not run at one rank per
    node without a word."""
    if study.capacity["apps"] and study.ranks_per_node > 1:
        raise ConfError(f"the study asks for {study.ranks_per_node} ranks per node, but the "
                        "simulated capacity mix places one rank per node", file=study.path,
                        field="ranks_per_node",
                        fix="run it on a real system, or set ranks_per_node: 1 to simulate it")
    for name, bench in study.benchmarks.items():
        rpn = max([study.ranks_per_node_of(name, n) for n in study.nodes(name)]
                  or [study.ranks_per_node_of(name)])
        if rpn > 1 and bench["model"] == PACKET_MODEL:
            raise ConfError(f"{name} asks for {rpn} ranks per node on the packet engine, "
                            "which gives every rank its own host interface", file=study.path,
                            field=f"benchmarks.{name}." + ("ranks" if bench.get("ranks")
                                                           else "ranks_per_node"),
                            fix="set ranks_per_node: 1 for it, or model: flow")


def check_variants(study: Study) -> None:
    """A benchmark's variants are those its binary has (the registry's ``variants``): a
    misspelt IMB collective would otherwise run as a case that fails to start."""
    for name, bench in study.catalog.items():
        known = benchmarks.BY_KEY[name].variants if name in benchmarks.BY_KEY else ()
        bad = [v for v in bench["variants"] if known and v not in known]
        if bad:
            raise ConfError(f"'{bad[0]}' is not a variant of {name}", file=study.path,
                            field=f"benchmarks.{name}.variants",
                            fix="use some of: " + ", ".join(known))


def check_host_interface(study: Study, system: System) -> None:
    """A study with packet-engine benchmarks needs each system's host interface stated
    (the packet engine would stop every such case with this line, one by one)."""
    packet = [b for b in study.benchmarks if study.model(b) == PACKET_MODEL]
    hca = (system.model.get("packet") or {}).get("hca") or {}
    if packet and not hca.get("interface"):
        raise ConfError(f"the study runs {', '.join(packet)} on the packet engine, which needs "
                        "the HCA's host interface", file=system.path, field="model.packet.hca",
                        fix="e.g. model: {packet: {hca: {interface: pcie, pcie_gen: 4, "
                        "lanes: 16}}}, or hca: {interface: link}")


def check_real(system: System) -> None:
    """What a real cluster's campaign needs on the machine that generates its job scripts,
    which ReFrame would otherwise report in its own words, or not at all: a launcher
    section, the modules system it names, and the Spack view its jobs run."""
    if not system.launcher:
        raise ConfError("no launcher: section: a real-cluster campaign needs to know how its "
                        "jobs start", file=system.path, field="launcher",
                        fix="add launcher: {kind: slurm, partition: <p>} or {kind: mpirun} "
                        "(docs/cluster.md#the-launcher-section), or simulate it with "
                        f"--system sim:{system.name}")
    check_modules_system(system)
    check_view(system)


def check_modules_system(system: System) -> None:
    """ReFrame's own probe of the modules system (the one its configuration runs)."""
    from reframe.core.exceptions import ReframeError
    from reframe.core.modules import ModulesSystem

    kind = system.launcher["modules_system"]
    try:
        ModulesSystem.create(kind)
    except ReframeError as err:
        reason = " ".join(str(err).split())
        raise ConfError(f"modules_system {kind}: not usable on this machine ({reason})",
                        file=system.path, field="launcher.modules_system",
                        fix=f"run t2hx on a node where {kind} works (a login node), or "
                        "modules_system: nomod with the modules' paths in launcher.env") from None


def check_view(system: System) -> None:
    """The Spack view every job runs its binaries from; without it a job would silently run
    whatever the nodes' PATH has (HPL as Debian's hpcc) unless the conf says so."""
    spec = system.launcher
    view = ROOT / spec["spack_view"]
    if spec["system_binaries"] or (view / "bin").is_dir():
        return
    raise ConfError(f"no Spack view {view} (no bin/ in it)", file=system.path,
                    field="launcher.spack_view",
                    fix="build it (spack -e spack-env install; spack-env/README.md), point "
                    "spack_view at it, or set launcher.system_binaries: true to run the "
                    "binaries on the nodes' PATH")


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
