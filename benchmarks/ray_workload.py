"""The Ray engine against the local engine: throughput, per-row overhead, and the crossover size.

Usage::

    .venv/bin/python benchmarks/ray_workload.py                      # 1,000,000 rows + 200 samples
    .venv/bin/python benchmarks/ray_workload.py --rows 20000 --typecheck 40 --sizes 1000 5000

Needs ``openevals-suite[ray]``. Two workloads, each run by both engines on the same data:

* deterministic metrics: ``--rows`` rows of retrieval results scored by ``exact_match``,
  ``levenshtein_distance``, ``recall:k=5`` and ``ndcg:k=5`` (pure, microseconds per call);
* type-checking: ``--typecheck`` generated Python samples checked by mypy (per row locally: one
  mypy process per sample; on Ray: the evaluator's ``batch`` form, one mypy process per batch).

Ray runs on a local Ray started once with ``--workers`` CPUs (its start-up is timed separately:
joining a running cluster does not pay it). For the metrics workload the run is repeated at each
``--sizes`` to fit ``time = fixed + rows * per_row`` for both engines; the crossover is the size
where the two lines meet (below it the local engine is faster). Results are checked equal.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's openevals

from openevals.evaluation import RayEngine, evaluate

METRICS = ["exact_match", "levenshtein_distance", "recall:k=5", "ndcg:k=5"]


def metric_rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"q{i}",
            "inputs": {"query": f"query {i}"},
            "outputs": [f"d{(i * 7 + j) % 50}" for j in range(8)],
            "reference_outputs": [f"d{(i + j) % 50}" for j in range(3)],
        }
        for i in range(n)
    ]


def code_rows(n: int) -> list[dict[str, Any]]:
    bodies = (
        "def f{i}(x: int) -> int:\n    return x + {i}\n",
        "def f{i}(x: int) -> str:\n    return x * {i}\n",
        "values{i}: list[int] = [1, 2, '{i}']\n",
        "class C{i}:\n    def m(self) -> int:\n        return {i}\n",
    )
    return [{"id": f"c{i}", "inputs": None, "outputs": bodies[i % 4].format(i=i)} for i in range(n)]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares ``time = fixed + n * per_row`` through ``(n, seconds)`` points."""
    k = len(points)
    mean_n = sum(n for n, _ in points) / k
    mean_t = sum(t for _, t in points) / k
    var = sum((n - mean_n) ** 2 for n, _ in points)
    per_row = sum((n - mean_n) * (t - mean_t) for n, t in points) / var if var else 0.0
    return mean_t - per_row * mean_n, per_row


def same(a: Any, b: Any) -> bool:
    def strip(result: Any) -> list[Any]:
        return [{n: e["results"] for n, e in r["evaluations"].items()} for r in result.rows]

    return strip(a) == strip(b) and a.aggregates.keys() == b.aggregates.keys()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--typecheck", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=2048, help="rows per Ray batch")
    parser.add_argument("--sizes", type=int, nargs="*", default=[2_000, 20_000, 100_000])
    args = parser.parse_args()

    import ray

    cold, _ = timed(
        lambda: ray.init(
            num_cpus=args.workers,
            include_dashboard=False,
            configure_logging=False,
            log_to_driver=False,
        )
    )
    print(f"Ray start-up (local, {args.workers} CPUs): {cold:.1f} s (not counted below)")
    ray_kw = {"engine": RayEngine(workers=args.workers, batch_size=args.batch_size)}

    print(f"\n== deterministic metrics: {', '.join(METRICS)}")
    print(f"{'rows':>10} {'local s':>9} {'ray s':>9} {'local rows/s':>13} {'ray rows/s':>11}")
    points: dict[str, list[tuple[int, float]]] = {"local": [], "ray": []}
    for n in sorted({*args.sizes, args.rows}):
        data = metric_rows(n)
        t_local, local = timed(partial(evaluate, data, METRICS, progress=False))
        t_ray, on_ray = timed(partial(evaluate, data, METRICS, progress=False, **ray_kw))
        assert same(local, on_ray), "the engines disagree"
        points["local"].append((n, t_local))
        points["ray"].append((n, t_ray))
        print(f"{n:>10,} {t_local:>9.2f} {t_ray:>9.2f} {n / t_local:>13,.0f} {n / t_ray:>11,.0f}")
        del data, local, on_ray
    (lf, lp), (rf, rp) = fit(points["local"]), fit(points["ray"])
    big_n, big_t = points["ray"][-1]
    print(f"local: {lf:.2f} s fixed + {lp * 1e6:.1f} us/row")
    print(f"ray:   {rf:.2f} s fixed + {rp * 1e6:.1f} us/row")
    print(f"ray rows/s per worker at {big_n:,} rows: {big_n / big_t / args.workers:,.0f}")
    print(f"ray per-row overhead over local: {(rp - lp) * 1e6:+.1f} us/row")
    if rp < lp:
        print(f"crossover: local is faster below ~{(rf - lf) / (lp - rp):,.0f} rows")
    else:
        print("crossover: none - the local engine is faster at every size for this workload")

    print(f"\n== type-checking: {args.typecheck} samples with mypy")
    from openevals.code.mypy import create_mypy_evaluator

    code = code_rows(args.typecheck)
    per_batch = max(1, -(-args.typecheck // args.workers))
    t_local, local = timed(lambda: evaluate(code, [create_mypy_evaluator()], progress=False))
    t_ray, on_ray = timed(
        lambda: evaluate(
            code,
            [create_mypy_evaluator()],
            progress=False,
            engine=RayEngine(workers=args.workers, batch_size=per_batch),
        )
    )
    assert same(local, on_ray), "the engines disagree"
    n = args.typecheck
    print(f"local (one mypy per sample):      {t_local:6.2f} s  {n / t_local:7.1f} samples/s")
    print(f"ray   (batched, {per_batch} per batch): {t_ray:6.2f} s  {n / t_ray:7.1f} samples/s")
    print(f"ray samples/s per worker: {n / t_ray / args.workers:.1f}")
    ray.shutdown()
    print(f"\nmachine: {os.cpu_count()} CPUs visible; ray {ray.__version__}")


if __name__ == "__main__":
    main()
