"""The filtering tool of seed 004 §3.2.1 as an operator runs it beside a plane's OpenSM: poll
Slurm's running jobs, keep those whose nodes hang off more than one leaf switch of the plane
(a job on one switch does not use the network), ignore job ids, and only when that set of
node lists changes write SAR's job file and make OpenSM re-route (``smhost.apply``: the
file written whole, SIGHUP, the new tables verified from OpenSM's own output).

A poll that cannot read the queue (slurmctld down, a timeout) changes nothing: an empty
answer read as "no jobs" would re-route the whole machine for nothing. A failed re-route is
tried again at the next poll. Each poll is one JSON line in the event log (docs/routing.md#sar-watch).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from t2hx.conf import System
from t2hx.errors import T2hxError
from t2hx.fabric.build import build_plane
from t2hx.history import hostlist
from t2hx.routing.sarjobs import JobKey, job_file_text, leaf_of, multi_switch

#: squeue's running jobs, one ``<jobid>|<nodelist>`` line each.
SQUEUE = ("squeue", "--noheader", "--states=RUNNING", "--format=%i|%N")


@dataclass
class Poll:
    t: float                       # Unix time of the poll
    running: int                   # running jobs squeue listed (-1: squeue failed)
    multi_switch: int              # of those, jobs on more than one leaf switch
    changed: bool                  # the multi-switch set differs from the routed one
    rerouted: bool                 # OpenSM re-routed and the tables were verified
    poll_s: float                  # squeue + filter
    route_s: float | None = None   # the re-route, when there was one
    error: str | None = None


def parse_squeue(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """(job id, nodes) per line of ``SQUEUE``'s output."""
    jobs = []
    for line in text.splitlines():
        if line.strip():
            job, _, nodes = line.strip().partition("|")
            jobs.append((job, tuple(hostlist.expand(nodes))))
    return jobs


class Watch:
    def __init__(self, system: System, plane: str, squeue: tuple[str, ...] = SQUEUE,
                 env: dict[str, str] | None = None) -> None:
        self.system, self.plane, self.squeue, self.env = system, plane, squeue, env
        self.leaf = leaf_of(build_plane(system, plane))
        self.routed: list[JobKey] | None = None     # None: nothing routed by us yet

    def _query(self) -> list[JobKey]:
        out = subprocess.run(list(self.squeue), capture_output=True, text=True, timeout=60,
                             env=self.env)
        if out.returncode:
            raise T2hxError(f"squeue failed ({out.stderr.strip()[:200] or out.returncode})",
                            fix="check slurmctld; nothing changes until squeue answers")
        # Nodes outside this plane (login or service nodes) cannot be routed for.
        return [tuple(h for h in nodes if h in self.leaf)
                for _, nodes in parse_squeue(out.stdout)]

    def poll(self, apply: Callable[[bytes], dict]) -> Poll:
        start = time.monotonic()
        try:
            running = self._query()
        except (T2hxError, ValueError, OSError, subprocess.TimeoutExpired) as err:
            line = err.line() if isinstance(err, T2hxError) else f"squeue: {err}"
            return Poll(time.time(), -1, -1, False, False, time.monotonic() - start,
                        error=line)
        jobs = multi_switch(running, self.leaf)
        poll = Poll(time.time(), len(running), len(jobs), jobs != self.routed, False,
                    time.monotonic() - start)
        if poll.changed:
            begin = time.monotonic()
            try:
                apply(job_file_text(jobs).encode())
            except T2hxError as err:
                poll.error = err.line()
            else:
                self.routed, poll.rerouted = jobs, True
            poll.route_s = time.monotonic() - begin
        return poll


def run(watch: Watch, apply: Callable[[bytes], dict], interval: float, polls: int | None,
        log: Path | None, say: Callable[[str], None]) -> int:
    """Poll every ``interval`` seconds until SIGTERM/SIGINT (or ``polls`` polls)."""
    stopping: list[int] = []
    old = {s: signal.signal(s, lambda signum, _f: stopping.append(signum))
           for s in (signal.SIGTERM, signal.SIGINT)}
    done = 0
    try:
        while not stopping and (polls is None or done < polls):
            poll = watch.poll(apply)
            done += 1
            if log is not None:
                with open(log, "a") as f:
                    f.write(json.dumps(asdict(poll)) + "\n")
            if poll.error:
                say(f"poll {done}: {poll.error}")
            elif poll.rerouted:
                say(f"poll {done}: {poll.multi_switch} multi-switch of {poll.running} running "
                    f"jobs: re-routed in {poll.route_s:.1f} s")
            next_at = time.monotonic() + interval
            while not stopping and (polls is None or done < polls) \
                    and time.monotonic() < next_at:
                time.sleep(min(0.2, max(0.0, next_at - time.monotonic())))
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return 0
