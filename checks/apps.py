"""The nine proxy applications of seed 000 §4.2. Metric (Table 2): kernel runtime [s], the
agreed ``T2HX solver walltime: <s> s`` line our patches print around each solver
(t2hx.wire.WALLTIME_FORMAT); inputs and weak/strong scaling from conf/studies/<study>.yaml."""

import itertools
import shutil
from pathlib import Path

import reframe as rfm
from reframe.core.builtins import run_before

from t2hx.benchmarks.milc import milc_lattice
from t2hx.benchmarks.minife import minife_n
from t2hx.benchmarks.qball import qball_atoms, qball_cells
from t2hx.benchmarks.swfft import swfft_ng
from t2hx.checks.base import T2hxCheck, study_parameters
from t2hx.grids import grid3


@rfm.simple_test
class AMG(T2hxCheck):
    benchmark = "amg"
    combo, num_nodes, repetition = study_parameters("amg")

    @staticmethod
    def command(launch):
        p = grid3(launch.ranks)
        n = str(launch.input["cube"])
        return "amg", ["-problem", str(launch.input["problem"]), "-n", n, n, n,
                       "-P", *map(str, p)]


@rfm.simple_test
class CoMD(T2hxCheck):
    benchmark = "comd"
    combo, num_nodes, repetition = study_parameters("comd")

    @staticmethod
    def command(launch):
        i, j, k = grid3(launch.ranks)
        a = launch.input["atoms_per_dim_per_rank"]
        return "CoMD-mpi", ["-e", "-i", str(i), "-j", str(j), "-k", str(k),
                            "-x", str(a * i), "-y", str(a * j), "-z", str(a * k)]

    @run_before("run")
    def link_potentials(self):
        """CoMD -e reads its EAM potential from pots/ in the working directory; on `local`
        that is the Spack view's pots/ (the comd package installs it there)."""
        pots = Path(self.extras.get("spack_view") or "/nonexistent") / "pots"
        if self.mode == "local" and pots.is_dir():
            (Path(self.stagedir) / "pots").symlink_to(pots)


@rfm.simple_test
class MiniFE(T2hxCheck):
    benchmark = "minife"
    combo, num_nodes, repetition = study_parameters("minife")

    @staticmethod
    def command(launch):
        n = minife_n(launch.input, launch.ranks)
        return "miniFE.x", [f"nx={n}", f"ny={n}", f"nz={n}"]


@rfm.simple_test
class SWFFT(T2hxCheck):
    benchmark = "swfft"
    combo, num_nodes, repetition = study_parameters("swfft")

    @staticmethod
    def command(launch):
        ng = swfft_ng(launch.input, launch.ranks)
        return "TestDfft", [str(launch.input["reps"]), str(ng)]


@rfm.simple_test
class FFVC(T2hxCheck):
    benchmark = "ffvc"
    combo, num_nodes, repetition = study_parameters("ffvc")

    @staticmethod
    def command(launch):
        c = str(launch.input["cube"])
        # FFVC-mini takes the process grid as LxMxN only (no automatic division).
        grid = "x".join(map(str, grid3(launch.ranks)))
        return "ffvc_mini", ["--scale=weak", f"--size={c}", f"--division={grid}"]


@rfm.simple_test
class MVMC(T2hxCheck):
    benchmark = "mvmc"
    combo, num_nodes, repetition = study_parameters("mvmc")

    @staticmethod
    def command(launch):
        # mVMC-mini takes one argument, the multi-definition file of its input deck, which
        # names the deck's parameter directory relative to the working directory.
        return "vmc.out", ["multiDir.def"]

    @run_before("run")
    def stage_deck(self):
        """On `local`: the view's deck share/mvmc/<case>/ into the working directory, with
        the study's ``modpara`` values (e.g. fewer SR steps) written into its zmodpara.def."""
        if self.mode != "local":
            return
        deck = Path(self.extras["spack_view"]) / "share" / "mvmc" / self.input["case"]
        stage = Path(self.stagedir)
        # The deck carries a dangling link to the build tree's vmc.out: not an input.
        shutil.copytree(deck, stage, dirs_exist_ok=True, ignore_dangling_symlinks=True,
                        ignore=shutil.ignore_patterns("vmc.out", "job*.sh"))
        for path in stage.rglob("zmodpara.def"):
            path.write_text(set_modpara(path.read_text(), self.input.get("modpara", {})))


def set_modpara(text: str, values: dict) -> str:
    """zmodpara.def with ``values`` (key -> value) replacing its ``<key> <value>`` lines."""
    lines = text.splitlines()
    for key, value in values.items():
        hits = [i for i, line in enumerate(lines) if line.split()[:1] == [key]]
        if not hits:
            raise KeyError(f"zmodpara.def has no {key} line (fix: correct local.input.mvmc."
                           "modpara in conf/studies/<study>.yaml)")
        for i in hits:
            lines[i] = f"{key:<14} {value}"
    return "\n".join(lines) + "\n"


@rfm.simple_test
class NTChem(T2hxCheck):
    benchmark = "ntchem"
    combo, num_nodes, repetition = study_parameters("ntchem")

    @staticmethod
    def command(launch):
        # rimp2.exe takes no arguments: it reads its namelist from INPUT and the deck's
        # <name>.{Geom,Basis,Basis_RIC,MO,OrbEne,SCF_Info,TotEne} from the working directory.
        return "rimp2.exe", []

    @run_before("run")
    def stage_deck(self):
        """On `local`: the view's upstream test deck share/ntchem/tests/<case>/ (ntchem-mini
        installs it), its <name>.inp as INPUT; the site stages taxol itself."""
        deck = Path(self.extras.get("spack_view") or "/nonexistent") / "share" / "ntchem" \
            / "tests" / self.input["case"]
        if self.mode == "local" and deck.is_dir():
            stage_ntchem_deck(deck, Path(self.stagedir))


NTCHEM_DECK = ("Geom", "Basis", "Basis_RIC", "MO", "OrbEne", "SCF_Info", "TotEne")


def stage_ntchem_deck(deck: Path, stage: Path) -> None:
    """Links to a deck's files and a copy of its .inp as INPUT (what the deck's own job
    scripts stage before they start rimp2.exe)."""
    inp = sorted(deck.glob("*.inp"))
    if len(inp) != 1:
        raise FileNotFoundError(f"{deck}: {len(inp)} *.inp files (fix: point "
                                "T2HX_SPACK_VIEW at a view with a complete NTChem test deck)")
    name = inp[0].stem
    missing = [ext for ext in NTCHEM_DECK if not (deck / f"{name}.{ext}").is_file()]
    if missing:
        raise FileNotFoundError(f"{deck}: no {name}.{missing[0]} (fix: use a case with a "
                                "complete deck, e.g. local.input.ntchem.case: c6h6)")
    for ext in NTCHEM_DECK:
        (stage / f"{name}.{ext}").symlink_to(deck / f"{name}.{ext}")
    shutil.copyfile(inp[0], stage / "INPUT")


@rfm.simple_test
class MILC(T2hxCheck):
    benchmark = "milc"
    combo, num_nodes, repetition = study_parameters("milc")

    @staticmethod
    def command(launch):
        return "su3_rhmd_hisq", [f"{launch.input['case']}.in"]

    @staticmethod
    def input_files(launch):
        """With ``deck: generated`` (the `local` study input): a deck of ours, a fresh (unit)
        gauge field on milc_lattice; with ``deck: site`` the site provides <case>.in."""
        inp = launch.input
        if inp.get("deck") != "generated":
            return {}
        return {f"{inp['case']}.in": milc_deck(milc_lattice(inp, launch.ranks),
                                               int(inp["trajecs"]), int(inp["steps"]))}

    @run_before("run")
    def link_rationals(self):
        """On `local`: the view's rational-function file (the milc recipe installs it into
        share/milc) next to the deck, which names it."""
        path = Path(self.extras.get("spack_view") or "/nonexistent") / "share" / "milc" \
            / MILC_RATIONALS
        if self.mode == "local" and path.is_file():
            (Path(self.stagedir) / MILC_RATIONALS).symlink_to(path)


# The rational approximations in MILC_RATIONALS were made for these flavours and masses
# (its header says so): a deck must use exactly them, so only the lattice and the MD length
# are ours. Gauge coupling and tadpole factor: those of MILC's HISQ test deck.
MILC_RATIONALS = "rationals.sample.su3_rhmc_hisq"
MILC_ACTION = {"n_pseudo": "4", "beta": "7.4", "n_dyn_masses": "2", "dyn_mass": ".0018 .018",
               "dyn_flavors": "2 1", "u0": "0.890"}
MILC_CG = ("cgresid_md_fa_gr .000005 1e-6 1e-6", "max_multicg_md_fa_gr 2500 2500 2500",
           "cgprec_md_fa_gr 2 2 2")


def milc_deck(lattice: tuple[int, ...], trajecs: int, steps: int) -> str:
    """An su3_rhmd_hisq input set: ``trajecs`` trajectories of ``steps`` MD steps from a
    fresh gauge field, no measurements, nothing saved."""
    lines = ["prompt 0", *(f"n{a} {d}" for a, d in zip("xyzt", lattice)), "iseed 5682304"]
    lines += [f"n_pseudo {MILC_ACTION['n_pseudo']}", f"load_rhmc_params {MILC_RATIONALS}"]
    lines += [f"{k} {v}" for k, v in MILC_ACTION.items() if k != "n_pseudo"]
    lines += ["warms 0", f"trajecs {trajecs}", f"traj_between_meas {trajecs}",
              "microcanonical_time_step .02", f"steps_per_trajectory {steps}"]
    lines += [line for _ in range(int(MILC_ACTION["n_pseudo"])) for line in MILC_CG]
    lines += ["prec_ff 1", "number_of_pbp_masses 0", "fresh", "forget"]
    return "\n".join(lines) + "\n"


@rfm.simple_test
class Qball(T2hxCheck):
    benchmark = "qball"
    combo, num_nodes, repetition = study_parameters("qball")

    @staticmethod
    def command(launch):
        return "qball", [f"gold_{qball_atoms(launch.input, launch.nodes)}.i"]

    @staticmethod
    def input_files(launch):
        """With ``ecut`` in the input (the `local` study input): a generated gold deck, the
        first atoms of an fcc gold crystal in a cubic cell; without it the site provides
        gold_<atoms>.i (seed 000's deck)."""
        inp = launch.input
        if "ecut" not in inp:
            return {}
        atoms = inp["atoms_per_node"] * launch.nodes
        return {f"gold_{atoms}.i": gold_deck(atoms, inp["ecut"], inp["steps"],
                                             inp["pseudopotential"])}

    @run_before("run")
    def link_pseudopotentials(self):
        """On `local`: the view's qball pseudopotentials as pseudo/ in the working directory."""
        pseudo = Path(self.extras.get("spack_view") or "/nonexistent") / "share" / "qball"
        if self.mode == "local" and pseudo.is_dir():
            (Path(self.stagedir) / "pseudo").symlink_to(pseudo / "pseudopotentials")


FCC_BOHR = 7.71     # gold's fcc lattice constant, 4.08 Angstrom
FCC_BASIS = ((0, 0, 0), (0, 0.5, 0.5), (0.5, 0, 0.5), (0.5, 0.5, 0))


def gold_deck(atoms: int, ecut: float, steps: str, pseudopotential: str) -> str:
    """A qb@ll command file: ``atoms`` gold atoms on fcc sites in the smallest cubic cell of
    whole unit cells holding them, plane-wave cutoff ``ecut`` [Ry], then ``run <steps>``."""
    cells = round(qball_cells({"atoms_per_node": atoms}, 1) ** (1 / 3))
    sites = [tuple((c + b) * FCC_BOHR for c, b in zip(cell, basis))
             for cell in itertools.product(range(cells), repeat=3) for basis in FCC_BASIS]
    side = cells * FCC_BOHR
    lines = [f"set cell {side} 0 0 0 {side} 0 0 0 {side}", f"species gold {pseudopotential}"]
    lines += [f"atom Au{i + 1} gold {x:.4f} {y:.4f} {z:.4f}"
              for i, (x, y, z) in enumerate(sites[:atoms])]
    lines += [f"set ecut {ecut}", "set wf_dyn PSD", "randomize_wf", f"run {steps}"]
    return "\n".join(lines) + "\n"
