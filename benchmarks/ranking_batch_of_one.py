"""What scoring a single query as a batch of one costs the per-item ranking evaluators.

Each metric has one formula (:mod:`openevals.rag._ranking_formulas`); a per-item evaluator runs it
on its query laid out as a batch of one (plain Python values). For each metric, on one
100-document ranked list (10 relevant, k=10), this prints the time of a whole per-item evaluator
call (the floor the formula sits inside), of the formula on the batch of one (layout included),
and of the same query laid out as a one-row numpy batch (what the ``*_batch`` functions build),
and checks that both layouts give identical numbers.

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
from openevals.rag._ranking_batch import NUMPY
from openevals.rag._ranking_metrics import Metric, build_metric
from openevals.rag.ranking import create_retrieval_evaluator


def numpy_row(j: Judged, k: int | None) -> formulas.Gains:
    """``j`` as a one-row numpy batch (the layout ``_ranking_batch._gains`` builds for many)."""
    one = formulas.batch_of_one(j, k)
    width = max(1, one.found)
    ranks = np.zeros((1, width), dtype=np.int64)
    ranks[0, : one.found] = one.ranks
    gains = np.zeros((1, width))
    gains[0, : one.found] = one.gains
    ideal = None
    if one.ideal is not None:
        ideal = np.zeros((1, max(1, len(one.ideal))))
        ideal[0, : len(one.ideal)] = one.ideal
    columns = (np.array([value]) for value in (one.found, one.top, one.n_relevant))
    return formulas.Gains(NUMPY, ranks, gains, *columns, ideal)


def first(metric: Metric, batch: formulas.Gains) -> tuple[float, dict[str, Any]]:
    values, extra = metric.formula(batch, metric.k)
    value = values if batch.ops is formulas.ONE else values[0]
    return float(value), {name: column[0] for name, column in extra.items()}


def best(fn: Any, number: int = 5000) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main() -> None:
    rng = random.Random(0)
    docs = [f"d{i}" for i in range(100)]
    reference, retrieved = rng.sample(docs, 10), rng.sample(docs, 100)
    print(f"{'metric':<20}{'evaluator call':>16}{'batch of one':>14}{'numpy row':>12}")
    for name in ("ndcg", "recall", "precision", "hit_rate", "reciprocal_rank", "map"):
        metric = build_metric(name, {"k": 10})
        j = judge(retrieved, reference, metric.key, metric.k)
        plain = first(metric, formulas.batch_of_one(j, metric.k))
        assert plain == first(metric, numpy_row(j, metric.k)), name
        evaluator = create_retrieval_evaluator(metrics=[name], k=10)
        call = best(
            functools.partial(evaluator, outputs=retrieved, reference_outputs=reference), 2000
        )
        one = best(lambda: first(metric, formulas.batch_of_one(j, metric.k)))  # noqa: B023
        row = best(lambda: first(metric, numpy_row(j, metric.k)), 2000)  # noqa: B023
        print(f"{name:<20}{call:>13.1f} us{one:>11.2f} us{row:>9.2f} us")


if __name__ == "__main__":
    main()
