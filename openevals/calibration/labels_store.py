"""Labels people gave in the run store (``openevals view``) as calibration data, and the
agreement between two labellers.

:func:`stored_labels` turns a stored run's labelled rows into the rows ``calibrate`` reads (the
row's fields, its id, and ``label`` / ``reason`` columns), so running a judge, labelling its
disagreements in the viewer and calibrating again is one loop:

    from openevals.calibration import calibrate, stored_labels

    report = calibrate(stored_labels("latest", store=True), judge)

On the command line, ``openevals calibrate runs:latest --judge ...`` does the same.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from openevals._repr import show
from openevals.evaluation.recordrun import rows_ready
from openevals.store.runs import Label, RunStore, open_store

__all__ = ["RUNS_PREFIX", "labeller_agreement", "stored_labels"]

RUNS_PREFIX = "runs:"
"""``DATA`` of ``openevals calibrate`` naming a stored run's labels (``runs:latest``, ``runs:7``)."""

_FIELDS = ("inputs", "outputs", "reference_outputs")


def _newest_per_row(labels: list[Label]) -> dict[str, Label]:
    newest: dict[str, Label] = {}
    for label in sorted(labels, key=lambda lab: (lab.created_at, lab.id)):
        newest[label.row_id] = label
    return newest


def stored_labels(
    run: int | str, *, store: Any = True, labeller: str | None = None
) -> list[dict[str, Any]]:
    """The labelled rows of a stored run as calibration data: one dict per labelled row with
    ``id``, ``inputs``, ``outputs``, ``reference_outputs``, the row's other columns, ``label``
    and ``reason``. With several labels on a row, the newest wins (``labeller=`` keeps only
    one person's).

    Raises:
        ValueError: no such run, or no row of it is labelled (by ``labeller``).
    """
    with open_store(store) as opened:
        stored = rows_ready(opened, opened.run(run))
        labels = _newest_per_row(opened.labels(stored.id, labeller=labeller))
        if not labels:
            who = f" by {show(labeller)}" if labeller is not None else ""
            raise ValueError(
                f"run {stored.id} has no labelled rows{who}; label rows in `openevals view` first"
            )
        out: list[dict[str, Any]] = []
        for row in opened.iter_rows(stored.id):
            label = labels.get(str(row.get("id")))
            if label is None:
                continue
            data: dict[str, Any] = {"id": row.get("id")}
            data.update({name: row.get(name) for name in _FIELDS})
            data.update(row.get("extra") or {})
            data["label"] = label.value
            data["reason"] = label.reason
            out.append(data)
    return out


def labeller_agreement(store: RunStore, run_id: int, first: str, second: str) -> Any:
    """Cohen's kappa (with accuracy and the confusion matrix) between two people's labels on
    the rows both labelled, as calibration computes it; ``None`` when fewer than two rows
    were labelled by both."""
    from openevals.calibration.agreement import categorical_agreement

    a = _newest_per_row(store.labels(run_id, labeller=first))
    b = _newest_per_row(store.labels(run_id, labeller=second))
    shared = [row for row in a if row in b]
    if len(shared) < 2:
        return None
    human: list[Hashable] = [_hashable(a[row].value) for row in shared]
    other: list[Hashable] = [_hashable(b[row].value) for row in shared]
    return categorical_agreement(human, other, resamples=500)


def _hashable(value: Any) -> Hashable:
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
