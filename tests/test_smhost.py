"""The SM host's verification of OpenSM's own dumps (``t2hx sm apply``): OpenSM rewrites its LFT
dump in place, so a dump read while it is being written must not fail a job's routing step,
and a dump that really leaves HCA LIDs unrouted must. The dumps are real OpenSM output (the
mini fat-tree routed by ftree under ibsim)."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from t2hx.fabric.build import build_plane
from t2hx.routing import smhost
from t2hx.routing.smhost import Paths, Request, Unrouted, settled, verify_settled


def sm_paths(routed_dir: Path, tmp: Path) -> Paths:
    """An SM host's layout holding a copy of a real routing's dumps."""
    (tmp / "dumps").mkdir()
    (tmp / "cache").mkdir()
    shutil.copyfile(routed_dir / "guid2lid", tmp / "cache" / "guid2lid")
    return Paths(tmp / "opensm.conf", routed_dir / "opensm.log", tmp / "dumps", tmp / "cache")


def write_slowly(path: Path, text: str, pieces: int, pause: float) -> None:
    """As OpenSM does: truncate, then write the dump in pieces."""
    step = len(text) // pieces + 1
    with open(path, "w") as fh:
        for start in range(0, len(text), step):
            fh.write(text[start:start + step])
            fh.flush()
            time.sleep(pause)


def test_settled_waits_until_the_dump_is_written_whole(tmp_path) -> None:
    path = tmp_path / "opensm-lfts.dump"
    text = "".join(f"Unicast lids [0x0-0x{i:x}] of switch Lid {i}\n" for i in range(400))
    writer = threading.Thread(target=write_slowly, args=(path, text, 8, 0.15))
    writer.start()
    time.sleep(0.05)
    settled(path, time.monotonic() + 30)
    assert not writer.is_alive() and path.read_text() == text
    time.sleep(0.4)
    begun = time.monotonic()
    settled(path, time.monotonic() + 30, quiet_for=0.3)   # unchanged for long enough: no wait
    assert time.monotonic() - begun < 0.2


def test_a_dump_read_mid_write_is_verified_once_whole(mini, routed, tmp_path) -> None:
    r = routed(mini, "fattree", "ftree")
    paths = sm_paths(r.run.out_dir, tmp_path)
    full = (r.run.out_dir / "opensm-lfts.dump").read_text()
    lfts = paths.dumps / "opensm-lfts.dump"
    lfts.write_text(full[: len(full) // 2])
    fabric = build_plane(mini, "fattree")
    req = Request("fattree", "ftree", 0)
    with pytest.raises(Unrouted):
        smhost.verify(fabric, paths, req, "ftree", mini.path)
    # OpenSM's next sweep rewrites the dump whole a moment later, slowly.
    writer = threading.Timer(0.8, write_slowly, args=(lfts, full, 6, 0.2))
    writer.start()
    result = verify_settled(fabric, paths, req, "ftree", mini.path, time.monotonic() + 60)
    writer.join()
    assert result["verified"] and result["hca_ports"] == len(fabric.hcas())


def test_a_dump_that_stays_unrouted_fails_with_one_line(mini, routed, tmp_path,
                                                        monkeypatch) -> None:
    r = routed(mini, "fattree", "ftree")
    paths = sm_paths(r.run.out_dir, tmp_path)
    full = (r.run.out_dir / "opensm-lfts.dump").read_text()
    (paths.dumps / "opensm-lfts.dump").write_text(full[: len(full) // 2])
    monkeypatch.setattr(smhost, "RESWEEP", 1.0)
    begun = time.monotonic()
    with pytest.raises(Unrouted, match=r"switch entries towards HCA LIDs are unrouted") as err:
        verify_settled(build_plane(mini, "fattree"), paths, Request("fattree", "ftree", 0),
                       "ftree", mini.path, time.monotonic() + 60)
    assert 1.0 <= time.monotonic() - begun < 30
    assert "\n" not in str(err.value) and "opensm-lfts.dump" in str(err.value)
