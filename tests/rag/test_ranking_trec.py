"""Our ranking metrics against trec_eval (pytrec-eval-terrier) on seeded random cases, and
average precision with a cutoff (``normalize_by="all_relevant"``, trec_eval's ``map_cut_k``)
against numbers computed by hand.

Where the definitions match, scores agree to 1e-9 (in practice exactly). The definitions differ
in these places, which the random cases therefore avoid or set up on purpose:

* ``map_cut_k`` divides by every relevant item R; our default ``normalize_by="relevant"``
  divides by min(k, R), so that a perfect top k scores 1.0. ``normalize_by="all_relevant"``
  is ``map_cut_k``. Without a cutoff both are trec_eval's ``map``.
* trec_eval orders a run by score and breaks ties by document id; we take the list order. The
  cases give strictly decreasing scores.
* A run cannot hold a document twice; we score a repeat as a non-relevant position.
* ``recip_rank`` has no cutoff; ours with ``k`` only looks at the top k (compared without k).
* trec_eval counts a document relevant when its grade is >= 1 (integer grades); we use > 0,
  the same for integer grades (fractional grades cannot be written in qrels).
* A query without relevant documents scores 0.0 in trec_eval, as under our default
  ``empty_reference="zero"`` (the random cases include some).
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from openevals.rag import ranking

pytrec_eval = pytest.importorskip("pytrec_eval")

CUTS = (1, 2, 3, 5, 10, 25)
N_CASES = 300

# trec_eval measure -> (our factory, our batch form, options); "{k}" is the cutoff.
WITH_CUTOFF: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "recall_{k}": (ranking.create_recall_evaluator, ranking.recall_batch, {}),
    "P_{k}": (ranking.create_precision_evaluator, ranking.precision_batch, {}),
    "success_{k}": (ranking.create_hit_rate_evaluator, ranking.hit_rate_batch, {}),
    "ndcg_cut_{k}": (ranking.create_ndcg_evaluator, ranking.ndcg_batch, {}),
    "map_cut_{k}": (
        ranking.create_average_precision_evaluator,
        ranking.average_precision_batch,
        {"normalize_by": "all_relevant"},
    ),
}
WITHOUT_CUTOFF: dict[str, tuple[Any, Any, dict[str, Any]]] = {
    "map": (ranking.create_average_precision_evaluator, ranking.average_precision_batch, {}),
    "recip_rank": (ranking.create_reciprocal_rank_evaluator, ranking.reciprocal_rank_batch, {}),
}


def random_cases(n: int, seed: int) -> list[tuple[list[str], dict[str, int]]]:
    """Distinct retrieved ids and graded judgements (grades 0-3; some queries have none > 0)."""
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        pool = [f"d{i}" for i in range(rng.randint(3, 40))]
        retrieved = rng.sample(pool, rng.randint(1, len(pool)))
        candidates = pool + [f"x{i}" for i in range(5)]
        judged = rng.sample(candidates, rng.randint(1, min(12, len(candidates))))
        grades = {doc: rng.choice((0, 1, 1, 2, 3)) for doc in judged}
        cases.append((retrieved, grades))
    return cases


def trec(cases: list[tuple[list[str], dict[str, int]]], measures: set[str]) -> list[dict]:
    qrels = {f"q{i}": grades for i, (_, grades) in enumerate(cases)}
    run = {
        f"q{i}": {doc: float(len(ranked) - rank) for rank, doc in enumerate(ranked)}
        for i, (ranked, _) in enumerate(cases)
    }
    result = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return [result[f"q{i}"] for i in range(len(cases))]


CASES = random_cases(N_CASES, seed=20240611)
TREC = trec(
    CASES,
    {
        "recall." + ",".join(map(str, CUTS)),
        "P." + ",".join(map(str, CUTS)),
        "success." + ",".join(map(str, CUTS)),
        "ndcg_cut." + ",".join(map(str, CUTS)),
        "map_cut." + ",".join(map(str, CUTS)),
        "map",
        "recip_rank",
    },
)
REFERENCES = [list(grades.items()) for _, grades in CASES]
RETRIEVED = [ranked for ranked, _ in CASES]


def test_the_random_cases_cover_the_interesting_shapes() -> None:
    no_relevant = sum(1 for _, g in CASES if not any(v > 0 for v in g.values()))
    graded = sum(1 for _, g in CASES if {2, 3} & set(g.values()))
    partly_missed = sum(1 for r, g in CASES if set(g) - set(r))
    assert no_relevant >= 5
    assert graded >= 100
    assert partly_missed >= 100


@pytest.mark.parametrize("measure", sorted(WITH_CUTOFF))
@pytest.mark.parametrize("k", CUTS)
def test_metrics_with_a_cutoff_match_trec_eval(measure: str, k: int) -> None:
    factory, batch, options = WITH_CUTOFF[measure]
    name = measure.format(k=k)
    expected = [row[name] for row in TREC]
    evaluator = factory(k=k, **options)
    singles = [
        evaluator(outputs=ranked, reference_outputs=reference)["score"]
        for ranked, reference in zip(RETRIEVED, REFERENCES, strict=True)
    ]
    batched = batch(RETRIEVED, REFERENCES, k=k, **options).scores
    for i, want in enumerate(expected):
        assert math.isclose(singles[i], want, abs_tol=1e-9), (name, CASES[i])
        assert math.isclose(batched[i], want, abs_tol=1e-9), (name, CASES[i])


@pytest.mark.parametrize("measure", sorted(WITHOUT_CUTOFF))
def test_metrics_without_a_cutoff_match_trec_eval(measure: str) -> None:
    factory, batch, options = WITHOUT_CUTOFF[measure]
    expected = [row[measure] for row in TREC]
    evaluator = factory(**options)
    batched = batch(RETRIEVED, REFERENCES, **options).scores
    for i, want in enumerate(expected):
        single = evaluator(outputs=RETRIEVED[i], reference_outputs=REFERENCES[i])["score"]
        assert math.isclose(single, want, abs_tol=1e-9), (measure, CASES[i])
        assert math.isclose(batched[i], want, abs_tol=1e-9), (measure, CASES[i])


def test_our_default_average_precision_at_k_differs_from_map_cut_where_k_is_below_r() -> None:
    differ = 0
    for k in CUTS:
        ours = ranking.average_precision_batch(RETRIEVED, REFERENCES, k=k).scores
        for i, row in enumerate(TREC):
            relevant = sum(1 for v in CASES[i][1].values() if v > 0)
            if relevant and k < relevant and row[f"map_cut_{k}"] > 0:
                # Same sum of precisions, divided by min(k, R) instead of R.
                assert math.isclose(ours[i] * k, row[f"map_cut_{k}"] * relevant, abs_tol=1e-9)
                differ += 1
            else:
                assert math.isclose(ours[i], row[f"map_cut_{k}"], abs_tol=1e-9)
    assert differ >= 50


# --------------------------------------------------------------------------- map_cut by hand


def hand_map_cut(retrieved: list[str], relevant: set[str], k: int) -> float:
    """Average precision at k as trec_eval's map_cut_k defines it, written out plainly."""
    precisions = []
    for rank in range(1, min(k, len(retrieved)) + 1):
        if retrieved[rank - 1] in relevant:
            found = sum(1 for doc in retrieved[:rank] if doc in relevant)
            precisions.append(found / rank)
    return sum(precisions) / len(relevant)


def test_the_example_of_the_issue() -> None:
    retrieved, relevant = ["d1", "d2", "d3"], ["d1", "d2", "d3"]
    cut = ranking.create_average_precision_evaluator(k=1, normalize_by="all_relevant")
    default = ranking.create_average_precision_evaluator(k=1)
    assert cut(outputs=retrieved, reference_outputs=relevant)["score"] == pytest.approx(1 / 3)
    assert cut(outputs=retrieved, reference_outputs=relevant)["metadata"]["denominator"] == 3
    assert default(outputs=retrieved, reference_outputs=relevant)["score"] == 1.0


@pytest.mark.parametrize(
    ("retrieved", "relevant", "k", "expected"),
    [
        (["a", "b", "c"], {"a", "b", "c"}, 1, 1 / 3),
        (["a", "b", "c"], {"a", "b", "c"}, 2, 2 / 3),
        (["x", "a", "y", "b"], {"a", "b", "c", "d"}, 4, (1 / 2 + 2 / 4) / 4),
        (["x", "a", "y", "b"], {"a", "b", "c", "d"}, 2, (1 / 2) / 4),
        (["a", "x", "x2", "b"], {"a", "b"}, 10, (1 + 2 / 4) / 2),
        (["x"], {"a"}, 5, 0.0),
    ],
)
def test_map_cut_on_small_cases_worked_out_by_hand(
    retrieved: list[str], relevant: set[str], k: int, expected: float
) -> None:
    evaluator = ranking.create_average_precision_evaluator(k=k, normalize_by="all_relevant")
    score = evaluator(outputs=retrieved, reference_outputs=sorted(relevant))["score"]
    assert score == pytest.approx(expected, abs=1e-12)
    assert hand_map_cut(retrieved, relevant, k) == pytest.approx(expected, abs=1e-12)


def test_map_cut_matches_the_hand_formula_on_random_cases() -> None:
    rng = random.Random(7)
    for _ in range(400):
        pool = [f"d{i}" for i in range(rng.randint(1, 30))]
        retrieved = rng.sample(pool, rng.randint(0, len(pool)))
        relevant = set(rng.sample([*pool, "out1", "out2"], rng.randint(1, min(8, len(pool)))))
        k = rng.randint(1, 35)
        evaluator = ranking.create_average_precision_evaluator(k=k, normalize_by="all_relevant")
        score = evaluator(outputs=retrieved, reference_outputs=sorted(relevant))["score"]
        assert math.isclose(score, hand_map_cut(retrieved, relevant, k), abs_tol=1e-12)
        batch = ranking.average_precision_batch(
            [retrieved], [sorted(relevant)], k=k, normalize_by="all_relevant"
        )
        assert batch.scores == [score]


def test_all_relevant_without_k_is_the_standard_average_precision() -> None:
    for ranked, reference in zip(RETRIEVED, REFERENCES, strict=True):
        standard = ranking.create_average_precision_evaluator()
        uncapped = ranking.create_average_precision_evaluator(normalize_by="all_relevant")
        assert (
            uncapped(outputs=ranked, reference_outputs=reference)["score"]
            == standard(outputs=ranked, reference_outputs=reference)["score"]
        )
