"""FFVC cavity flow (seed 000 §4.2): a ``cube``^3 subdomain per rank (``--scale=weak``)."""

from t2hx.benchmarks.proxyapp import K, Skeleton, proxy_app

BENCHMARK = proxy_app(
    "ffvc", "FFVC cavity flow", "FFVC", "ffvc-mini", local_binary="ffvc_mini",
    skeleton=Skeleton(0.040, 100, (("halo", 128 * K), ("allreduce", 8))),
    work=lambda i, n: float(i["cube"]) ** 3,
    measures={"face": lambda i, n: float(i["cube"]) ** 2})
