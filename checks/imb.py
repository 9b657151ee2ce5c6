"""Intel MPI Benchmarks: the MPI-1 collectives (seed 000 §4.1; t_min [us] per message size),
IMB Multi-PingPong (MuPP) and EmDL (our SleepyAllreduce: Allreduce + 0.1 s usleep)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reframe as rfm                                              # noqa: E402
from reframe.core.builtins import parameter                       # noqa: E402

from lib.base import STUDY, T2hxCheck, study_parameters           # noqa: E402

IMB_SPEC = "intel-mpi-benchmarks"
FINALIZE = r"# All processes entering MPI_Finalize"


class _IMB(T2hxCheck):
    family = "imb"
    spack_spec = IMB_SPEC
    markers = [FINALIZE]
    sized = True

    def imb_args(self, name: str) -> list[str]:
        inp = self.input
        args = [name, "-npmin", str(self.num_tasks), "-msglog", str(inp.get("msglog", "0:22"))]
        if "iter_policy" in inp:
            args += ["-iter_policy", str(inp["iter_policy"])]
        if "time" in inp:
            args += ["-time", str(inp["time"])]
        return args

    def sim_options(self):
        return ["--msglog", str(self.input.get("msglog", "0:22"))]


@rfm.simple_test
class IMBCollective(_IMB):
    """One IMB MPI-1 collective per case (Barrier, Bcast, …, Alltoall)."""
    collective = parameter(STUDY.variants("imb") if "imb" in STUDY.benchmarks else
                           STUDY.variants("imb")[:1], type=str)
    combo, num_nodes, repetition = study_parameters("imb")
    metric = "t_min"
    unit = "us"

    def init_benchmark(self):
        self.benchmark = f"imb-{self.collective.lower()}"
        self.sim_name = self.collective.lower()
        self.metric_benchmark = self.benchmark
        self.sized = self.collective != "Barrier"

    @property
    def study_name(self) -> str:
        return "imb"

    def command(self):
        return "IMB-MPI1", self.imb_args(self.collective)


@rfm.simple_test
class IMBMultiPingPong(_IMB):
    """MuPP: every rank pair ping-pongs at once (IMB -multi 0 PingPong)."""
    benchmark = "mupp"
    combo, num_nodes, repetition = study_parameters("mupp")
    metric = "bandwidth"
    unit = "MB/s"
    sim_name = "mupp"

    def command(self):
        return "IMB-MPI1", ["-multi", "0"] + self.imb_args("PingPong")


@rfm.simple_test
class IMBEmDL(_IMB):
    """EmDL: IMB Allreduce alternating with a 0.1 s compute phase (patches/intel-mpi-benchmarks
    SleepyAllreduce), mimicking data-parallel deep learning."""
    benchmark = "emdl"
    combo, num_nodes, repetition = study_parameters("emdl")
    metric = "t_min"
    unit = "us"
    sim_name = "emdl"

    def command(self):
        return "IMB-MPI1", self.imb_args("SleepyAllreduce")
