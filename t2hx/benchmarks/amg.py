"""AMG2013 (seed 000 §4.2): ``-problem P -n cube^3`` per rank on a 3-D process grid."""

from t2hx.benchmarks.proxyapp import K, Skeleton, proxy_app

BENCHMARK = proxy_app(
    "amg", "AMG2013", "AMG", "amg2013", local_binary="amg", aliases=("amg2013",),
    skeleton=Skeleton(0.020, 50, (("halo", 64 * K), ("allreduce", 8), ("allreduce", 8))),
    work=lambda i, n: float(i["cube"]) ** 3,
    measures={"face": lambda i, n: float(i["cube"]) ** 2})
