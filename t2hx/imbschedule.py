"""IMB-MPI1's repetition control (``IMB_settings.h``, ``IMB_init_buffers_iter``,
``helper_time_check``): how many repetitions a size gets and where the time limit stops a
sweep. The simulator's IMB runs (t2hx/flowsim/imbjobs.py, the capacity mix) and the IMB
benchmark modules (t2hx/benchmarks/imbtext.py, which re-exports it) share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from t2hx.errors import WorkloadError

if TYPE_CHECKING:
    from t2hx.simrequest import BenchmarkOptions

# IMB_settings.h: repetitions per size, bytes moved per size, seconds per size, warm-up share.
MSGSPERSAMPLE = 1000
OVERALL_VOL = 40 * 1024 * 1024
SECS_PER_SAMPLE = 10.0
WARMUP_PERCENT = 10
#: IMB_init.c ``string_to_iter_policy``.
POLICIES = ("dynamic", "off", "multiple_np", "auto")
DEFAULT_POLICY = "dynamic"


def msglog_bounds(text: str) -> tuple[int, int]:
    try:
        lo, hi = (int(x) for x in text.split(":"))
    except ValueError:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="write LO:HI, "
                            "e.g. 0:22") from None
    if not 0 <= lo <= hi <= 31:
        raise WorkloadError(f"bad -msglog {text!r}", field="msglog", fix="0 <= LO <= HI <= 31")
    return lo, hi


@dataclass(frozen=True)
class Schedule:
    """How many repetitions IMB-MPI1 runs per size, and where its time limit stops a sweep
    (``IMB_init_buffers_iter``, ``helper_time_check``, ``OriginalBenchmark::run``)."""
    msgspersample: int = MSGSPERSAMPLE
    overall_vol: int = OVERALL_VOL
    policy: str = DEFAULT_POLICY
    secs: float = SECS_PER_SAMPLE

    @classmethod
    def of(cls, opts: BenchmarkOptions) -> Schedule:
        counts = [int(x) for x in opts.imb_iter.split(",")] if opts.imb_iter else []
        return cls(counts[0] if counts else MSGSPERSAMPLE,
                   counts[1] * 1024 * 1024 if len(counts) > 1 else OVERALL_VOL,
                   opts.iter_policy, opts.imb_time)

    def sweep(self, sizes: list[int], timed: list[float], untimed: float, ranks: int,
              bounds: tuple[int, int], rooted: bool = False) -> tuple[list[int], int | None]:
        """(repetitions of every size that runs, the size the time limit stopped at or None).

        ``timed``: seconds of one repetition as the benchmark times it (IMB's estimate reads
        that); ``untimed``: seconds each repetition adds outside the timing (EmDL's sleep).
        Per size IMB runs its estimate (dynamic: one repetition, then up to one second's
        worth; else the whole count), a warm-up of a tenth, then the count; the limit is
        ``max(HI - LO - 1, 1) · -time`` seconds since the first size, checked after each
        size's estimate."""
        policy = ("multiple_np" if rooted else "dynamic") if self.policy == "auto" \
            else self.policy
        limit = max(bounds[1] - bounds[0] - 1, 1) * self.secs
        reps: list[int] = []
        elapsed, previous = 0.0, self.msgspersample
        for size, t in zip(sizes, timed):
            if policy == "dynamic":
                n, probe = self._dynamic(size, t, previous)
            else:
                n = self.msgspersample if policy == "off" else \
                    self._multiple_np(size, ranks, 1 << bounds[1])
                probe = n
            elapsed += probe * (t + untimed)
            if elapsed >= limit:
                return reps, size
            warm_up = n // WARMUP_PERCENT or (1 if n > 1 else 0)
            elapsed += (warm_up + n) * (t + untimed)
            reps.append(n)
            previous = n
        return reps, None

    def _dynamic(self, size: int, t: float, previous: int) -> tuple[int, int]:
        """(count, repetitions the estimate ran): at most ``-iter``, 40 MiB and ``-time`` s
        per size from the timed repetition, never more than the size before."""
        selected = self.msgspersample if size <= 0 else \
            max(1, min(self.overall_vol // size, self.msgspersample))
        rep_test = MSGSPERSAMPLE if t < 1.0 / MSGSPERSAMPLE else \
            int(1.0 / t + 0.5) if t < 1.0 else 1
        probe = min(selected, rep_test)
        val = 1 + self.secs / t if t > 1e-8 else float("inf")
        t_sample = int(val) if val <= 0x7FFFFFFF else selected
        return min(selected, previous, t_sample), 1 + (probe if probe > 1 else 0)

    def _multiple_np(self, size: int, ranks: int, max_size: int) -> int:
        """A multiple of the ranks, falling with the size (``-iter_policy multiple_np``)."""
        tmp = int(self.msgspersample * max_size / (ranks * max(size, 4) + max_size) + 0.5)
        return max(tmp - tmp % ranks, ranks)
