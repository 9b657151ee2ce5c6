"""Fig 8 on a busy system (docs/history.md#fig-8-on-a-busy-system): the production system's
other jobs from the trace (t2hx/history/background.py), routed beside the benchmark's own by
SAR through `t2hx campaign reroute --background`."""

from __future__ import annotations

from pathlib import Path

import pytest

from t2hx import ROOT
from t2hx.cli import main
from t2hx.conf import load_system, system_path
from t2hx.errors import ConfError, T2hxError
from t2hx.routing import demand as dm
from t2hx.routing.reroute import merged
from t2hx.study import load_study

COMMITTED = ROOT / "conf" / "traces" / "backgrounds" / "sc16-taurus-day30-1200.txt"
SAR_STUDY = ROOT / "conf" / "studies" / "scheduling-aware-routing-sc16.yaml"
MINI = load_system(system_path("mini"))


def test_the_committed_background_is_what_the_command_writes(tmp_path: Path, capsys) -> None:
    out = tmp_path / "bg.txt"
    assert main(["-q", "history", "background", "conf/traces/LLNL-Atlas-2006-2.1-cln.swf.gz",
                 "--system", "sc16-taurus", "--plane", "ib", "--day", "30", "--at", "43200",
                 "--placement", "least-recent", "--exclude",
                 "hostfiles/sc16-taurus/spread/28.txt", "--out", str(out)]) == 0
    assert out.read_bytes() == COMMITTED.read_bytes()
    jobs = dm.read_jobs(out)
    bench = set(dm.read_hostfile(ROOT / "hostfiles" / "sc16-taurus" / "spread" / "28.txt"))
    assert sorted(len(h) for h in jobs.values()) == [240, 256, 489]
    assert not bench & {h for hosts in jobs.values() for h in hosts}
    assert "3 multi-switch jobs" in capsys.readouterr().out


def test_a_node_in_the_background_and_the_benchmark_is_refused() -> None:
    with pytest.raises(T2hxError) as err:
        merged({"job0": ["a", "b"]}, {"bg-1": ["c", "b"]}, "bg.txt")
    assert err.value.field == "background" and "node b" in err.value.line()
    with pytest.raises(T2hxError, match="used twice"):
        merged({"job0": ["a"]}, {"job0": ["c"]}, "bg.txt")
    assert merged({"job0": ["a"]}, {"bg-1": ["c", "d"]}, "x") == {"job0": ["a"],
                                                                   "bg-1": ["c", "d"]}


@pytest.mark.parametrize("old, new, says", [
    ("routing: sar,    placement: spread,\n     background:",
     "routing: dfsssp, placement: spread,\n     background:", "reads no job file"),
    ("backgrounds/sc16-taurus-day30-1200.txt}", "backgrounds/nosuch.txt}", "no job file"),
])
def test_the_study_refuses_a_background_sar_cannot_use(tmp_path: Path, old: str, new: str,
                                                       says: str) -> None:
    text = SAR_STUDY.read_text()
    assert old in text
    path = tmp_path / "scheduling-aware-routing-sc16.yaml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfError) as err:
        load_study(path, "quick")
    assert err.value.field.endswith(".background") and says in err.value.line()


def test_the_busy_fig8_combo_routes_beside_its_background() -> None:
    study = load_study(SAR_STUDY, "quick")
    busy, alone = study.combo("taurus-sar-spread"), study.combo("taurus-sar-spread-alone")
    assert busy.background and not alone.background and busy.placement == alone.placement


def test_campaign_reroute_routes_sar_for_the_job_and_its_background(tmp_path: Path) -> None:
    """On mini's fat-tree with the real OpenSM: the job file SAR reads holds both."""
    hosts = MINI.hostnames()
    hostfile, background = tmp_path / "job.txt", tmp_path / "bg.txt"
    hostfile.write_text("".join(f"{h}\n" for h in hosts[:8]))
    background.write_text(dm.render_jobs({"bg-7": hosts[20:36]}))
    out = tmp_path / "routing"
    assert main(["-q", "campaign", "reroute", "--system", str(MINI.path), "--plane", "fattree",
                 "--routing", "sar", "--hostfile", str(hostfile), "--benchmark", "imb",
                 "--background", str(background), "--out", str(out)]) == 0
    jobs = dm.read_jobs(out / "jobs.txt")
    assert jobs == {"job0": hosts[:8], "bg-7": hosts[20:36]}
    assert "sar: job file" in (out / "opensm.log").read_text()
    shared = tmp_path / "shared.txt"
    shared.write_text(dm.render_jobs({"bg-8": hosts[4:12]}))
    assert main(["-q", "campaign", "reroute", "--system", str(MINI.path), "--plane", "fattree",
                 "--routing", "sar", "--hostfile", str(hostfile), "--benchmark", "imb",
                 "--background", str(shared), "--out", str(tmp_path / "r2")]) == 2
