"""What "a single query is a batch of one" would cost the per-item ranking evaluators.

For each metric, on one 100-document ranked list (10 relevant, k=10), prints the time of the
scalar formula the per-item evaluators use today, of the same query laid out as a one-row
``Gains`` batch and scored by the vector formula, and of a whole per-item evaluator call (the
floor the formula time sits inside). It also checks that both forms give identical numbers.

    python benchmarks/ranking_batch_of_one.py
"""

from __future__ import annotations

import functools
import random
import timeit
from typing import Any

import numpy as np

from openevals.rag import _ranking_formulas as formulas
from openevals.rag._items import Judged, judge
from openevals.rag._ranking_metrics import Metric, build_metric
from openevals.rag.ranking import create_retrieval_evaluator


def one_row(j: Judged, k: int | None) -> formulas.Gains:
    """``j`` as a batch of one (the layout ``_ranking_batch._gains`` builds for many)."""
    found = formulas.hits(j, k)
    top = j.retrieved if k is None else min(k, j.retrieved)
    width = max(1, found)
    ranks = np.zeros((1, width), dtype=np.int64)
    ranks[0, :found] = j.ranks[:found]
    gains = np.zeros((1, width))
    gains[0, :found] = j.gains[:found]
    ideal = None
    if not j.binary:
        kept = j.ideal if k is None else j.ideal[:k]
        ideal = np.zeros((1, max(1, len(kept))))
        ideal[0, : len(kept)] = kept
    return formulas.Gains(
        ranks, gains, np.array([found]), np.array([top]), np.array([j.n_relevant]), ideal
    )


def batch_of_one(metric: Metric, j: Judged) -> tuple[float, dict[str, Any]]:
    values, extra = metric.spec.vector(one_row(j, metric.k), metric.k, **metric.options)
    return float(values[0]), {name: column[0] for name, column in extra.items()}


def best(fn: Any, number: int = 5000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    rng = random.Random(0)
    docs = [f"d{i}" for i in range(100)]
    reference, retrieved = rng.sample(docs, 10), rng.sample(docs, 100)
    print(f"{'metric':<20}{'evaluator call':>16}{'scalar formula':>16}{'batch of one':>14}")
    for name in ("ndcg", "recall", "precision", "hit_rate", "reciprocal_rank"):
        metric = build_metric(name, {"k": 10})
        j = judge(retrieved, reference, metric.key, metric.k)
        assert metric.formula(j, metric.k) == batch_of_one(metric, j), name
        evaluator = create_retrieval_evaluator(metrics=[name], k=10)
        call = best(
            functools.partial(evaluator, outputs=retrieved, reference_outputs=reference), 2000
        )
        scalar = best(functools.partial(metric.formula, j, metric.k))
        vector = best(functools.partial(batch_of_one, metric, j))
        print(f"{name:<20}{call:>13.1f} us{scalar:>13.2f} us{vector:>11.2f} us")


if __name__ == "__main__":
    main()
