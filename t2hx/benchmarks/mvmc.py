"""mVMC-mini (seed 000 §4.2): variational Monte Carlo, the code's own weak-scaling test
``job_middle``. Every ``NSplitSize`` consecutive ranks form a group that runs its own Markov
chain of ``NVMCSample`` samples per stochastic-reconfiguration (SR) step, so the samples grow
with the groups and a rank's work does not shrink with the rank count
(docs/modelling.md#application-models)."""

from t2hx.benchmarks.proxyapp import K, M, Skeleton, proxy_app
from t2hx.errors import WorkloadError

# mVMC-mini's decks: their zmodpara.def values (job_middle/Lx10Ly10_J1.0/zmodpara.def) that the
# work law reads; the study can override them with ``modpara``.
MVMC_DECKS = {"job_middle": {"NSROptItrStep": 20, "NVMCSample": 192, "NVMCWarmUp": 10,
                             "NSplitSize": 4}}


def mvmc_param(inp: dict, key: str) -> float:
    case = inp["case"]
    if case not in MVMC_DECKS:
        raise WorkloadError(f"unknown mVMC case '{case}'", field="benchmarks.mvmc.input.case",
                            fix=f"use one of: {', '.join(MVMC_DECKS)}")
    return float(inp.get("modpara", {}).get(key, MVMC_DECKS[case][key]))


def mvmc_group(inp: dict, ranks: int) -> int:
    """Ranks of the smallest sampling group, whose ranks carry the most work: vmcmain.c
    splits the ranks into groups of NSplitSize consecutive ones (``rank0/NSplitSize``), so
    the last group holds ``ranks mod NSplitSize`` when that is not 0 (the code warns of load
    imbalance); every SR step ends in an Allreduce over all ranks, which waits for it."""
    size = int(mvmc_param(inp, "NSplitSize"))
    return ranks % size or min(size, ranks)


def mvmc_chain(inp: dict) -> float:
    """Outer Markov-chain steps a group makes over a run (VMCMakeSample: warm-up plus
    NVMCSample on the first SR step, NVMCSample + 1 on each later one)."""
    steps, samples = mvmc_param(inp, "NSROptItrStep"), mvmc_param(inp, "NVMCSample")
    return mvmc_param(inp, "NVMCWarmUp") + samples + (steps - 1) * (samples + 1)


BENCHMARK = proxy_app(
    "mvmc", "mVMC", "MVMC", "mvmc-mini", local_binary="vmc.out",
    skeleton=Skeleton(0.200, 20, (("allreduce", 4 * M), ("bcast", 64 * K))),
    # A group's ranks split its chain's quantum-projection points and its samples
    # (SplitLoop over the group's communicator in VMCMakeSample and VMCMainCal).
    work=lambda i, n: mvmc_chain(i) / mvmc_group(i, n),
    # What the weak-scaling rule holds: the samples a rank evaluates per SR step.
    share=lambda i, n: mvmc_param(i, "NVMCSample") / mvmc_group(i, n),
    measures={"steps": lambda i, n: mvmc_param(i, "NSROptItrStep")})
