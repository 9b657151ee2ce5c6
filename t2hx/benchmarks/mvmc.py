"""mVMC-mini (seed 000 §4.2): variational Monte Carlo; every stochastic-reconfiguration step
samples NVMCSample configurations, split over the ranks."""

from t2hx.benchmarks.proxyapp import K, M, Skeleton, proxy_app
from t2hx.errors import WorkloadError

# mVMC-mini's decks: their zmodpara.def values the study can override with ``modpara``.
MVMC_DECKS = {"job_middle": {"NSROptItrStep": 20, "NVMCSample": 192}}


def mvmc_param(inp: dict, key: str) -> float:
    case = inp["case"]
    if case not in MVMC_DECKS:
        raise WorkloadError(f"unknown mVMC case '{case}'", field="benchmarks.mvmc.input.case",
                            fix=f"use one of: {', '.join(MVMC_DECKS)}")
    return float(inp.get("modpara", {}).get(key, MVMC_DECKS[case][key]))


BENCHMARK = proxy_app(
    "mvmc", "mVMC", "MVMC", "mvmc-mini", local_binary="vmc.out",
    skeleton=Skeleton(0.200, 20, (("allreduce", 4 * M), ("bcast", 64 * K))),
    work=lambda i, n: mvmc_param(i, "NSROptItrStep") * mvmc_param(i, "NVMCSample") / n,
    measures={"steps": lambda i, n: mvmc_param(i, "NSROptItrStep")})
