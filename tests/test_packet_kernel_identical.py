"""The packet kernel (t2hx/flowsim/kernel/packetk.c) gives the results it gave before its
rewrite for speed, bit for bit and with the same counters, on recorded phases (eBB rounds,
an mpiGraph step, a rendezvous Gather program, several VLs under pressure, output buffers
and queues per output, concurrent jobs, reference cases: tests/data/packetk/README.md);
also when a batch of phases runs on state kept from phase to phase, on one or two threads,
and when the engine batches a workload's phases."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from t2hx.errors import WorkloadError
from t2hx.flowsim import packetk, patterns
from t2hx.flowsim.bulk import Phase
from t2hx.flowsim.packet import open_packet

DATA = Path(__file__).parent / "data" / "packetk"
CASES = sorted(DATA.glob("*.npz"))


def case(path: Path) -> tuple[packetk.Links, packetk.Messages, packetk.Arbitration, dict]:
    z = np.load(path)
    links = packetk.Links(*(z[k] for k in ("rate", "lat", "fwd", "hdr", "cap", "pair", "debt",
                                           "obuf", "xrate")))
    msgs = packetk.Messages(z["bytes"], z["route_off"], z["route"], z["vl"], z["dep"],
                            z["delay"], z["dep_off"])
    mtu, header, limit, oldest, per_output = (int(x) for x in z["arb"])
    arb = packetk.Arbitration(mtu, header, [tuple(e) for e in z["high"].tolist()],
                              [tuple(e) for e in z["low"].tolist()], limit, bool(oldest),
                              bool(per_output))
    want = {"first": z["first"], "end": z["end"],
            "counters": dict(zip(packetk.COUNTERS, z["counters"].tolist()))}
    return links, msgs, arb, want


def assert_same(first: np.ndarray, end: np.ndarray, counters: dict, want: dict) -> None:
    assert first.tobytes() == want["first"].tobytes()       # bit for bit
    assert end.tobytes() == want["end"].tobytes()
    assert counters == want["counters"]


def test_the_recorded_cases_are_there() -> None:
    assert len(CASES) >= 14
    assert {"ebb_224_round0", "gather_56_64KiB", "vls_56", "mpigraph_28_shift13"} <= {
        p.stem for p in CASES}


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_kernel_gives_the_recorded_results(path: Path) -> None:
    links, msgs, arb, want = case(path)
    assert_same(*packetk.simulate(links, msgs, arb), want)


def fabrics() -> list[list[Path]]:
    """The recorded cases grouped by fabric and arbitration (a kernel's state serves one)."""
    groups: dict[bytes, list[Path]] = {}
    for path in CASES:
        z = np.load(path)
        key = b"".join(z[k].tobytes() for k in ("rate", "lat", "fwd", "hdr", "cap", "pair",
                                                "debt", "obuf", "xrate", "arb", "high", "low"))
        groups.setdefault(key, []).append(path)
    return [paths for paths in groups.values() if len(paths) > 1]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_batch_on_kept_state_gives_each_phase_its_own_results(threads: int) -> None:
    """Phases of one fabric back to back (each leaves its links' state behind for the next
    to reset), twice over, in one call."""
    groups = fabrics()
    assert groups
    for paths in groups:
        cases = [case(p) for p in paths] * 2
        kernel = packetk.Kernel(cases[0][0], cases[0][2], threads)
        for (first, end, counters), (_, _, _, want) in zip(
                kernel.run([msgs for _, msgs, _, _ in cases]), cases):
            assert_same(first, end, counters, want)


def test_the_engine_batches_a_workloads_phases_as_it_ran_them_alone(mini_hyperx) -> None:
    """eBB's rounds in one kernel batch (PacketNetwork.run) time as each round alone
    (whole phases, so the counters compare too; tests/test_packet_groups.py compares the
    phases' groups with whole phases)."""
    together = open_packet(mini_hyperx)
    together.decompose = False
    e = patterns.ebb(together, 65536, 6, 20, 3)
    alone = open_packet(mini_hyperx)
    alone.decompose = False
    partner = patterns.bisections(mini_hyperx.ranks, 6, 3)
    for i in range(6):
        src = np.flatnonzero(partner[i] >= 0)
        t = alone.run([Phase.of(src, partner[i, src], 65536)], keep_rates=True).flow_time[0]
        assert e.round_times[i, src].tobytes() == (20 * t * 1e6).tobytes()
    assert together.stats["phases"] == alone.stats["phases"] == 6
    assert together.stats["events"] == alone.stats["events"]


def test_a_bad_thread_count_is_one_line(monkeypatch) -> None:
    monkeypatch.setenv(packetk.THREADS_ENV, "two")
    with pytest.raises(WorkloadError) as exc:
        packetk.threads()
    assert packetk.THREADS_ENV in exc.value.line() and "\n" not in exc.value.line()


def _built(tmp: Path, pgo: str) -> tuple[Path, str]:
    """The packet kernel built by the kernel Makefile from a copy of its sources (training
    driver included) with PGO=``pgo``; (library, make's output)."""
    src = Path(packetk.__file__).parent / "kernel"
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("*.so", "*.tmp"))
    done = subprocess.run(["make", "-s", "-C", str(tmp), "libpacketk.so", f"PGO={pgo}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return tmp / "libpacketk.so", done.stdout


def test_the_profile_guided_build_trains_and_changes_no_result(tmp_path: Path,
                                                               monkeypatch) -> None:
    """run/setup's build is profile-guided: its training run must work (else make falls
    back to a plain build, only slower), and it must not move a result by a bit."""
    guided, said = _built(tmp_path / "pgo", "1")
    assert "without profile guidance" not in said
    plain, said = _built(tmp_path / "plain", "0")
    assert "without profile guidance" in said
    for lib in (guided, plain):
        loaded = ctypes.CDLL(str(lib))
        loaded.t2hx_packet_new.restype = ctypes.c_void_p
        loaded.t2hx_packet_free.argtypes = [ctypes.c_void_p]
        loaded.t2hx_packet_free.restype = None
        monkeypatch.setattr(packetk, "_kernel", lambda lib=loaded: lib)
        for path in CASES:
            links, msgs, arb, want = case(path)
            assert_same(*packetk.simulate(links, msgs, arb), want)
