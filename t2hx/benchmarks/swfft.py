"""SWFFT (seed 000 §4.2): ``reps`` forward/backward 3-D FFTs of a global grid of about
``grid_per_rank`` x cbrt(P) points per side."""

import math

from t2hx.benchmarks.proxyapp import M, Skeleton, proxy_app


def swfft_ng(inp: dict, ranks: int) -> int:
    """Global grid ~ grid_per_rank * cbrt(P), divisible by P (SWFFT's slab layout aborts in
    distribution_init otherwise)."""
    ng = inp["grid_per_rank"] * ranks ** (1 / 3)
    return max(1, round(ng / ranks)) * ranks


BENCHMARK = proxy_app(
    "swfft", "SWFFT", "SWFFT", "swfft", local_binary="TestDfft",
    skeleton=Skeleton(0.100, 16, (("alltoall_total", 256 * M), ("alltoall_total", 256 * M))),
    # An FFT's N log N: a rank's share of the grid times log2 of its side.
    work=lambda i, n: i["reps"] * swfft_ng(i, n) ** 3 * math.log2(swfft_ng(i, n)) / n,
    share=lambda i, n: swfft_ng(i, n) ** 3 / n,
    measures={"data": lambda i, n: i["reps"] * swfft_ng(i, n) ** 3 / n})
