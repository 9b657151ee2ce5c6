"""Intel MPI Benchmarks: the MPI-1 collectives (seed 000 §4.1; t_min [us] per message size),
IMB Multi-PingPong (MuPP) and EmDL (our SleepyAllreduce: Allreduce + 0.1 s usleep)."""



import reframe as rfm
from reframe.core.builtins import parameter

from t2hx import benchmarks
from t2hx.checks.base import STUDY, Launch, T2hxCheck, study_parameters


def imb_args(launch: Launch, name: str) -> list[str]:
    inp = launch.input
    args = [name, "-npmin", str(launch.ranks), "-msglog", str(inp.get("msglog", "0:22"))]
    if "iter_policy" in inp:
        args += ["-iter_policy", str(inp["iter_policy"])]
    if "iter" in inp:              # repetitions per size (EmDL sleeps 0.1 s in each)
        args += ["-iter", str(inp["iter"])]
    if "time" in inp:
        args += ["-time", str(inp["time"])]
    return args


@rfm.simple_test
class IMBCollective(T2hxCheck):
    """One IMB MPI-1 collective per case (Barrier, Bcast, …, Alltoall)."""
    # A study without IMB collectives: one placeholder case no system accepts (set_case).
    collective = parameter(STUDY.variants("imb") if "imb" in STUDY.benchmarks else
                           list(benchmarks.get("imb").variants[:1]), type=str)
    combo, num_nodes, repetition = study_parameters("imb")

    def init_benchmark(self):
        self.benchmark = benchmarks.get("imb").name(self.collective)   # imb-bcast

    @staticmethod
    def command(launch):
        return "IMB-MPI1", imb_args(launch, launch.variant)


@rfm.simple_test
class IMBMultiPingPong(T2hxCheck):
    """MuPP: every rank pair ping-pongs at once (IMB -multi 0 PingPong)."""
    benchmark = "mupp"
    combo, num_nodes, repetition = study_parameters("mupp")

    @staticmethod
    def command(launch):
        return "IMB-MPI1", ["-multi", "0"] + imb_args(launch, "PingPong")


@rfm.simple_test
class IMBEmDL(T2hxCheck):
    """EmDL: IMB Allreduce alternating with a 0.1 s compute phase (patches/intel-mpi-benchmarks
    SleepyAllreduce), mimicking data-parallel deep learning."""
    benchmark = "emdl"
    combo, num_nodes, repetition = study_parameters("emdl")

    @staticmethod
    def command(launch):
        return "IMB-MPI1", imb_args(launch, "SleepyAllreduce")
