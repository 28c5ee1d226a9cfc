"""Few-shot examples from labelled disagreements, in the judge's ``few_shot_examples`` format.

An example is a row the judge got wrong, shown with the *human's* verdict as its score and the
human's reason (when the data has a reason column) as its reasoning, so the judge sees what a
correct judgement of a hard case looks like. Selection takes the most severe disagreements first
and spreads the picks over the kinds of mistake (for booleans: passed failures and failed passes;
for categories: each human label x judge label cell; for continuous scores: over- and
under-scoring), so a few examples cover as many error patterns as they can. Ties are broken by a
seeded shuffle, never by data order.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from typing import Any

from openevals._repr import show
from openevals.calibration.report import CalibrationReport, JudgedRow
from openevals.types import FewShotExample

__all__ = ["as_example", "select_disagreements", "suggest_few_shot_examples"]


def _kind(row: JudgedRow, continuous: bool) -> Any:
    if continuous:
        return float(row.judge) > float(row.human)  # over- or under-scoring
    return (repr(row.human), repr(row.judge))


def select_disagreements(
    rows: Sequence[JudgedRow], k: int, *, continuous: bool, seed: int
) -> list[JudgedRow]:
    """Up to ``k`` disagreeing rows: most severe first, round-robin over the kinds of mistake."""
    rng = random.Random(seed)
    candidates = [r for r in rows if not r.agrees]
    rng.shuffle(candidates)
    candidates.sort(key=lambda r: -r.severity)  # stable: equal severities keep the shuffle
    queues: dict[Any, list[JudgedRow]] = {}
    for row in candidates:
        queues.setdefault(_kind(row, continuous), []).append(row)
    picked: list[JudgedRow] = []
    while len(picked) < k and any(queues.values()):
        for queue in queues.values():
            if queue and len(picked) < k:
                picked.append(queue.pop(0))
    return picked


def as_example(row: JudgedRow) -> FewShotExample:
    """``row`` as a few-shot example: what the judge saw, the human's score and reason."""
    example: FewShotExample = {"inputs": row.inputs, "outputs": row.outputs}
    if row.reference_outputs is not None:
        example["reference_outputs"] = row.reference_outputs
    example["score"] = row.human
    if row.human_reason:
        example["reasoning"] = row.human_reason
    return example


def suggest_few_shot_examples(
    report: CalibrationReport,
    k: int = 4,
    *,
    rows: Collection[str] | None = None,
    seed: int = 0,
) -> list[FewShotExample]:
    """Few-shot examples for the judge, picked from the report's disagreements.

    Args:
        report: a :class:`CalibrationReport` from :func:`~openevals.calibration.calibrate`.
        k: the most examples to return (fewer when there are fewer disagreements).
        rows: only pick from these row ids (e.g. a training split), when given.
        seed: breaks ties between equally severe disagreements.

    Returns:
        a list in the ``few_shot_examples`` format of ``create_llm_as_judge`` and the other judge
        factories: ``inputs``, ``outputs``, ``reference_outputs`` (when present), ``score`` (the
        human label) and ``reasoning`` (the human's reason, where the data has one).

    To judge rows you did not pick examples from, score the judge with them only on other rows;
    :func:`~openevals.calibration.cross_validate` does that for you.
    """
    if not isinstance(report, CalibrationReport):
        raise TypeError(
            f"`report` must be the CalibrationReport of calibrate(); got {type(report).__name__}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"`k` must be a whole number >= 1; got {show(k)}")
    if rows is not None and (isinstance(rows, (str, bytes)) or not isinstance(rows, Collection)):
        raise TypeError(f"`rows` must be a collection of row ids or None; got {show(rows)}")
    allowed = set(rows) if rows is not None else None
    pool = [r for r in report.rows if allowed is None or r.id in allowed]
    chosen = select_disagreements(pool, k, continuous=report.label_type == "continuous", seed=seed)
    return [as_example(r) for r in chosen]
