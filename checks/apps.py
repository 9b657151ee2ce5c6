"""The nine proxy applications of seed 000 §4.2. Metric (Table 2): kernel runtime [s], the
agreed ``T2HX solver walltime: <s> s`` line our patches print around each solver
(t2hx.post.records.WALLTIME_FORMAT); inputs and weak/strong scaling from conf/study.yaml."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reframe as rfm                                              # noqa: E402

from lib.base import T2hxCheck, study_parameters                  # noqa: E402

WALLTIME = r"^T2HX solver walltime: "


def grid3(ranks: int) -> tuple[int, int, int]:
    """A near-cubic px*py*pz = ranks decomposition (largest factors first)."""
    best = (ranks, 1, 1)
    for px in range(1, ranks + 1):
        if ranks % px:
            continue
        for py in range(1, ranks // px + 1):
            if (ranks // px) % py:
                continue
            pz = ranks // px // py
            cand = tuple(sorted((px, py, pz), reverse=True))
            if max(cand) - min(cand) < max(best) - min(best):
                best = cand
    return best


class _App(T2hxCheck):
    metric = "solver_walltime"
    unit = "s"
    markers = [WALLTIME]
    sim_markers = [WALLTIME]   # the flow model prints only the solver line for apps


@rfm.simple_test
class AMG(_App):
    benchmark = "amg"
    family = "amg"
    combo, num_nodes, repetition = study_parameters("amg")
    spack_spec = "amg2013"

    def command(self):
        p = grid3(self.num_tasks)
        n = str(self.input["cube"])
        return "amg", ["-problem", str(self.input["problem"]), "-n", n, n, n,
                       "-P", *map(str, p)]


@rfm.simple_test
class CoMD(_App):
    benchmark = "comd"
    family = "comd"
    combo, num_nodes, repetition = study_parameters("comd")
    spack_spec = "comd"

    def command(self):
        i, j, k = grid3(self.num_tasks)
        a = self.input["atoms_per_dim_per_rank"]
        return "CoMD-mpi", ["-e", "-i", str(i), "-j", str(j), "-k", str(k),
                            "-x", str(a * i), "-y", str(a * j), "-z", str(a * k)]


@rfm.simple_test
class MiniFE(_App):
    benchmark = "minife"
    family = "minife"
    combo, num_nodes, repetition = study_parameters("minife")
    spack_spec = "minife"

    def command(self):
        # Weak scaling of seed 000 §4.2: n = cbrt(n_b^3 * P).
        n = round((self.input["n_base"] ** 3 * self.num_tasks) ** (1 / 3))
        return "miniFE.x", [f"nx={n}", f"ny={n}", f"nz={n}"]


@rfm.simple_test
class SWFFT(_App):
    benchmark = "swfft"
    family = "swfft"
    combo, num_nodes, repetition = study_parameters("swfft")
    spack_spec = "swfft"

    def command(self):
        ng = round(self.input["grid_per_rank"] * self.num_tasks ** (1 / 3))
        return "TestDfft", [str(self.input["reps"]), str(ng)]


@rfm.simple_test
class FFVC(_App):
    benchmark = "ffvc"
    family = "ffvc"
    combo, num_nodes, repetition = study_parameters("ffvc")
    spack_spec = "ffvc-mini"
    output_file = "history_base.txt"

    def command(self):
        c = str(self.input["cube"])
        return "ffvc_mini", ["--scale=weak", f"--size={c}", "--division=auto"]


@rfm.simple_test
class MVMC(_App):
    benchmark = "mvmc"
    family = "mvmc"
    combo, num_nodes, repetition = study_parameters("mvmc")
    spack_spec = "mvmc-mini"

    def command(self):
        return "vmc.out", ["-e", f"{self.input['case']}/namelist.def"]


@rfm.simple_test
class NTChem(_App):
    benchmark = "ntchem"
    family = "ntchem"
    combo, num_nodes, repetition = study_parameters("ntchem")
    spack_spec = "ntchem-mini"

    def command(self):
        return "rimp2.exe", [self.input["case"]]


@rfm.simple_test
class MILC(_App):
    benchmark = "milc"
    family = "milc"
    combo, num_nodes, repetition = study_parameters("milc")
    spack_spec = "milc-trinity"
    markers = [WALLTIME, r"RUNNING COMPLETED"]

    def command(self):
        return "su3_rmd", [f"{self.input['case']}.in"]


@rfm.simple_test
class Qball(_App):
    benchmark = "qball"
    family = "qbox"
    sim_name = "qbox"
    combo, num_nodes, repetition = study_parameters("qball")
    spack_spec = "qball"

    def command(self):
        atoms = self.input["atoms_per_node"] * self.num_nodes
        return "qball", [f"gold_{atoms}.i"]
