"""The MPI stacks of the endpoint model (t2hx.conf.MPI_STACKS, docs/modelling.md#mpi-stacks):
their numbers come from the committed raw runs in log/mpi-stacks/, the bfo PARX patch carries
Table 1 verbatim, and a system conf's stack choice reaches the network's LogGP constants."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from t2hx.conf import MODEL, MPI_STACKS, PARX_MESSAGE_NS, load_system
from t2hx.errors import ConfError
from t2hx.flowsim.network import LogGP
from t2hx.schema import validate

ROOT = Path(__file__).resolve().parents[1]

PATCH = ROOT / "patches" / "openmpi" / "1.10.7-bfo-parx-lid-selection.patch"


def _bench():
    spec = importlib.util.spec_from_file_location("t2hx_bench_mpi_stacks",
                                                  ROOT / "bench" / "mpi_stacks.py")
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["t2hx_bench_mpi_stacks"] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


bench = _bench()


def test_conf_stacks_are_recomputed_from_the_raw_runs() -> None:
    runs = bench.parse(*bench.sessions())
    assert not [r for r in runs if r["rc"] != 0], "a committed run failed"
    assert bench.stack_model(runs) == MPI_STACKS


def test_bench_result_is_derived_from_the_same_runs() -> None:
    result = json.loads((ROOT / "bench" / "results" / "mpi_stacks.json").read_text())
    runs = bench.parse(*bench.sessions())
    assert result["model"] == bench.stack_model(runs)
    assert result["runs"] == len(runs)
    assert result["raw"] == [str(p.relative_to(ROOT)) for p in bench.sessions()]
    # every configuration ran on both transports at every rank count
    seen = {(r["config"], r["transport"], r["ranks"]) for r in runs}
    assert seen >= {(c, t, n) for c in bench.CONFIGS for t in bench.TRANSPORTS
                    for n in bench.RANKS}


def test_the_reference_stack_costs_nothing_extra() -> None:
    # a stack minus itself: the derivation cannot hide an offset in the reference
    assert bench.stack_model(bench.parse(*bench.sessions()))[bench.REFERENCE] == \
        {"message_ns": 0.0, "gap_ns": 0.0}


def test_stack_model_follows_the_latency_difference(tmp_path: Path) -> None:
    # shift one stack's small-message latency by 50 ns and its rate: the model moves with it
    runs = bench.parse(*bench.sessions())
    before = bench.stack_model(runs)["ompi-1.10.7-bfo-parx"]
    for rec in runs:
        if rec["config"] == "ompi-1.10.7-bfo-parx" and rec["transport"] == "shm":
            for key in list(rec["values"]):
                if key.startswith("latency_us."):
                    rec["values"][key] += 0.05
            if "rate_per_s" in rec["values"]:
                rec["values"]["rate_per_s"] = 1e9 / (1e9 / rec["values"]["rate_per_s"] + 20)
    after = bench.stack_model(runs)["ompi-1.10.7-bfo-parx"]
    assert after["message_ns"] == pytest.approx(before["message_ns"] + 50, abs=0.11)
    assert after["gap_ns"] == pytest.approx(before["gap_ns"] + 20, abs=0.11)


def _added_file(path: str) -> str:
    text = PATCH.read_text()
    m = re.search(rf"^\+\+\+ b/{re.escape(path)}\t.*?\n(.*?)(?=^diff |\Z)", text, re.M | re.S)
    assert m, f"{path} is not added by the patch"
    return "".join(line[1:] + "\n" for line in m.group(1).splitlines() if line.startswith("+"))


def test_bfo_patch_carries_table1_verbatim() -> None:
    for name in ("table1.c", "table1.h"):
        assert _added_file(f"ompi/mca/pml/bfo/parx/{name}") == (ROOT / "parx" / name).read_text()
    # the PARX pick sits on bfo's send start, send ranges and RDMA, as in the 4.1 ob1 patch
    text = PATCH.read_text()
    for where in ("pml_bfo_sendreq.h", "pml_bfo_sendreq.c", "pml_bfo_rdma.c"):
        section = text.split(f"+++ b/ompi/mca/pml/bfo/{where}", 1)[1].split("\ndiff ", 1)[0]
        assert "mca_pml_bfo_parx_btl(" in section, where


def test_seed_000_system_runs_the_papers_stacks() -> None:
    system = load_system(ROOT / "conf" / "systems" / "t2hx.yaml")
    assert system.model["mpi"] == {"stack": "ompi-1.10.7-ob1",
                                   "parx_stack": "ompi-1.10.7-bfo-parx"}
    plain, parx = LogGP.from_conf(system.model), LogGP.from_conf(system.model, "parx")
    ob1, bfo = MPI_STACKS["ompi-1.10.7-ob1"], MPI_STACKS["ompi-1.10.7-bfo-parx"]
    assert plain.send_extra == pytest.approx(ob1["message_ns"] * 1e-9)
    assert parx.send_extra == pytest.approx((bfo["message_ns"] + PARX_MESSAGE_NS) * 1e-9)
    assert parx.gap - plain.gap == pytest.approx((bfo["gap_ns"] - ob1["gap_ns"]) * 1e-9)


def test_a_conf_without_a_stack_keeps_the_old_costs() -> None:
    model = validate({}, MODEL, "x.yaml")
    assert LogGP.from_conf(model).send_extra == 0.0
    assert LogGP.from_conf(model, "parx").send_extra == pytest.approx(PARX_MESSAGE_NS * 1e-9)
    assert LogGP.from_conf(model).gap == pytest.approx(model["gap_us"] * 1e-6)


def test_unknown_stack_is_a_conf_error() -> None:
    with pytest.raises(ConfError, match="model.mpi.stack"):
        validate({"mpi": {"stack": "mpich-4"}}, MODEL, "x.yaml", "model")
