"""The flow model and the packet engine side by side (t2hx.post.flow_vs_packet): companion runs
replace the packet rows of their own cases only, the table takes the best repetition at the
largest size, and a claim is listed when (and only when) its verdict changes."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pandas as pd

from t2hx import ROOT
from t2hx.post import flow_vs_packet
from t2hx.post.ingest import COLUMNS
from t2hx.post.scorecard.text import Verdict
from t2hx.study import load_study


def rows(engine_values: dict[tuple[str, int, int], float], bench: str = "ebb",
         unit: str = "MiB/s", msg_size: float | None = 1048576) -> pd.DataFrame:
    out = []
    for (combo, nodes, rep), value in engine_values.items():
        row = dict.fromkeys(COLUMNS)
        row.update(campaign="c", system="t2hx", topology=combo.split("-")[0], routing="r",
                   placement="linear", combo=combo, benchmark=bench, metric="bandwidth",
                   unit=unit, nodes=nodes, msg_size=msg_size, repetition=rep, value=value,
                   simulated=True)
        out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


def test_companion_rows_replace_only_their_cases() -> None:
    packet = pd.concat([rows({("ft", 7, 0): 100.0, ("ft", 7, 1): 90.0, ("hx", 7, 0): 50.0}),
                        rows({("ft", 7, 0): 1.0}, bench="hpl", unit="s", msg_size=None)])
    flow = rows({("ft", 7, 0): 200.0, ("ft", 7, 1): 180.0, ("hx", 7, 0): 40.0})
    swapped = flow_vs_packet.on_flow(packet, flow)
    assert len(swapped) == len(packet)
    ebb = swapped[swapped["benchmark"] == "ebb"].sort_values(["combo", "repetition"])
    assert ebb["value"].tolist() == [200.0, 180.0, 40.0]
    assert swapped[swapped["benchmark"] == "hpl"]["value"].tolist() == [1.0]
    side = flow_vs_packet.side_by_side(packet, flow)
    assert side[["combo", "flow", "packet"]].values.tolist() == [["ft", 200.0, 100.0],
                                                               ["hx", 40.0, 50.0]]
    assert side["packet_vs_flow"].round(3).tolist() == [0.5, 1.25]


def test_only_changed_verdicts_are_listed() -> None:
    packet = rows({("ft", 7, 0): 100.0, ("hx", 7, 0): 50.0})
    flow = rows({("ft", 7, 0): 100.0, ("hx", 7, 0): 150.0})

    def score(frame: pd.DataFrame) -> list[Verdict]:
        ft, hx = (frame[frame["combo"] == c]["value"].max() for c in ("ft", "hx"))
        return [Verdict("hx-wins", "Fig 5", "HX beats FT", "+", f"{hx / ft - 1:+.0%}",
                        "agrees" if hx > ft else "contradicts"),
                Verdict("ft-positive", "Fig 5", "FT moves data", "+", f"{ft:g}", "agrees")]

    cmp = flow_vs_packet.compare(packet, flow, score)
    assert cmp.scored == 2 and cmp.cases == 2
    assert cmp.changes.values.tolist() == [["hx-wins", "Fig 5", "+", "+50%", "agrees",
                                            "-50%", "contradicts"]]
    same = flow_vs_packet.compare(packet, packet.copy(), score)
    assert same.changes.empty


def test_a_packet_benchmark_runs_with_its_flow_companion(tmp_path) -> None:
    """A study with mpiGraph on the packet engine: each case also runs on the flow model,
    both are kept, the sim header names each engine, and the report sets them side by
    side with the verdicts they change."""
    text = (ROOT / "conf" / "studies" / "hyperx-vs-fattree-sc19.yaml").read_text()
    text = re.sub(r"(?m)^    model: \w+.*\n", "", text)         # the study's own choices
    study = tmp_path / "study.yaml"
    study.write_text(text.replace("  mpigraph:\n    title: mpiGraph\n",
                                  "  mpigraph:\n    title: mpiGraph\n    model: packet\n", 1))
    assert load_study(study).model("mpigraph") == "packet"
    env = {k: v for k, v in os.environ.items() if not k.startswith("T2HX_")}
    env.update(T2HX_LOG_ROOT=str(tmp_path / "log"), T2HX_WORK_ROOT=str(ROOT / "work"),
               T2HX_STUDY=str(study))
    run = subprocess.run([str(ROOT / "run" / "t2hx"), "campaign", "run", "--system", "sim",
                          "--profile", "quick", "--campaign", "pk", "--", "-n", "MpiGraph",
                          "-P", "repetition=0", "-P", "num_nodes=7",
                          "-P", "combo=ft-ftree-linear,hx-dfsssp-linear"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    log = tmp_path / "log" / "pk"
    main = sorted((log / "runs").rglob("t2hx-run.json"))
    companion = sorted((log / "companion" / "flow").rglob("t2hx-run.json"))
    assert len(main) == len(companion) == 2
    assert {json.loads(p.read_text())["sim"]["model"] for p in main} == {"packet"}
    assert {json.loads(p.read_text())["sim"]["model"] for p in companion} == {"maxmin"}
    report = (log / "paper" / "report.md").read_text()
    assert "## Network engines: flow model and packet engine side by side" in report
    section = report.split("## Network engines", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^\| mpigraph \|", section, re.M)) == 2, section
    assert re.search(r"### Verdicts the engine changes \(\d+ of \d+ claims\)", section)
    data = json.loads((log / "paper" / "data" / "engines.json").read_text())
    assert data["companion_rows"] == 8 and len(data["side_by_side"]) == 2
    assert data["verdicts_changed"] == len(data["changes"])
