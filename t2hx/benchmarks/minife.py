"""miniFE (seed 000 §4.2): weak scaling of an ``n_base``^3 grid per rank."""

from t2hx.benchmarks.proxyapp import K, Skeleton, face, proxy_app


def minife_n(inp: dict, ranks: int) -> int:
    """Weak scaling of seed 000 §4.2: global n = cbrt(n_base^3 * P)."""
    return round((inp["n_base"] ** 3 * ranks) ** (1 / 3))


BENCHMARK = proxy_app(
    "minife", "miniFE", "MiniFE", "minife", local_binary="miniFE.x", aliases=("mini-fe",),
    skeleton=Skeleton(0.010, 200, (("halo", 80 * K), ("allreduce", 8), ("allreduce", 8))),
    work=lambda i, n: minife_n(i, n) ** 3 / n,
    measures={"face": lambda i, n: face(minife_n(i, n) ** 3 / n)})
