"""The OpenSM arguments of any routing engine on a plane: what ``t2hx.routing.opensm.route``
gets for a stock engine (the plane's LMC and opensm.conf options) or one of our plugin
engines (their LMC, LID policy, QoS and input file, :func:`t2hx.routing.parx.routing_args`)."""

from __future__ import annotations

from t2hx.errors import ConfError
from t2hx.fabric.graph import Fabric
from t2hx.routing.parx import routing_args
from t2hx.routing_engines import RoutingInput, input_options, routing_engine


def route_args(fabric: Fabric, engine: str, opensm: dict, source: object,
               lmc: int | None = None, routing_input: RoutingInput | None = None) -> dict:
    """``route()`` arguments for any engine of a plane: our plugin engines bring their LMC,
    LID policy and options over the plane's OpenSM options (``lmc`` does not apply to
    them); stock engines take the plane's options and its LMC unless ``lmc`` overrides it."""
    if routing_engine(engine).ours:
        args = routing_args(fabric, engine, routing_input, source=source)
        args["extra_conf"] = {**opensm["options"], **args["extra_conf"]}
        return args
    if routing_input:
        readers = " or ".join(f"{e} ({kind})" for kind, (e, _) in input_options().items())
        raise ConfError(f"{engine} reads no {routing_input.kind} file", file=source,
                        field="routing", fix=f"route with {readers}")
    return {"lmc": opensm["lmc"] if lmc is None else lmc, "extra_conf": opensm["options"]}
