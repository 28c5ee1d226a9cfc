"""Human labels with the judge's scores on the same rows: what a corrected estimate needs.

:class:`CalibrationData` holds them as numbers (booleans as 0/1). :func:`as_calibration` makes
one from a :class:`~openevals.calibration.CalibrationReport` (what ``calibrate`` returns), from
the JSON file ``openevals calibrate --json`` writes, from a JSONL file of ``{"human", "judge"}``
lines (an ``id`` optional), or from a mapping of that JSON. No model is called.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openevals._repr import show

__all__ = ["CalibrationData", "as_calibration", "load_calibration"]


def score_number(value: Any) -> float | None:
    """A score as a float (booleans as 0/1), or ``None`` when it is not a finite number."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def label_number(value: Any, where: str) -> float:
    """A label or judge score as a float (booleans as 0/1); ``ValueError`` for anything else."""
    number = score_number(value)
    if number is not None:
        return number
    raise ValueError(
        f"{where} is {show(value)}: corrected estimates need boolean or numeric labels and "
        "scores (a mean of categories is undefined)"
    )


@dataclass(frozen=True)
class CalibrationData:
    """Human labels and the judge's scores on the same rows, as numbers.

    ``feedback_key`` names the judge result the scores come from (``None``: unknown, so the
    caller names the key); ``ids`` are the rows' ids (empty when unknown).
    """

    human: tuple[float, ...]
    judge: tuple[float, ...]
    feedback_key: str | None = None
    ids: tuple[str, ...] = ()
    label_type: str | None = None

    def __post_init__(self) -> None:
        if len(self.human) != len(self.judge):
            raise ValueError(
                f"a calibration needs one judge score per human label; got {len(self.human)} "
                f"labels and {len(self.judge)} scores"
            )
        if len(self.human) < 2:
            raise ValueError(f"a calibration needs at least 2 labelled rows; got {len(self.human)}")
        if self.ids and len(self.ids) != len(self.human):
            raise ValueError(f"`ids` must have one id per labelled row; got {len(self.ids)}")

    @property
    def n(self) -> int:
        return len(self.human)

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[Mapping[str, Any]],
        *,
        feedback_key: str | None = None,
        label_type: str | None = None,
        source: str = "calibration",
    ) -> CalibrationData:
        """From mappings with ``human`` and ``judge`` (and optionally ``id``)."""
        human: list[float] = []
        judge: list[float] = []
        ids: list[str] = []
        for index, row in enumerate(rows):
            if not isinstance(row, Mapping) or "human" not in row or "judge" not in row:
                raise ValueError(
                    f"{source}: row {index} must be an object with `human` and `judge`; got "
                    f"{show(row)}"
                )
            human.append(label_number(row["human"], f"{source}: row {index} `human`"))
            judge.append(label_number(row["judge"], f"{source}: row {index} `judge`"))
            if "id" in row:
                ids.append(str(row["id"]))
        if ids and len(ids) != len(human):
            raise ValueError(f"{source}: give every row an `id`, or none")
        return cls(tuple(human), tuple(judge), feedback_key, tuple(ids), label_type)


def _from_report(report: Any) -> CalibrationData:
    rows = [{"id": r.id, "human": r.human, "judge": r.judge} for r in report.rows]
    return CalibrationData.from_rows(
        rows,
        feedback_key=report.feedback_key,
        label_type=report.label_type,
        source="calibration report",
    )


def _from_mapping(data: Mapping[str, Any], source: str) -> CalibrationData:
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise ValueError(
            f"{source}: expected the JSON of `openevals calibrate --json` (an object with a "
            "`rows` list of {id, human, judge}); it has no `rows` list"
        )
    key = data.get("feedback_key")
    label_type = data.get("label_type")
    return CalibrationData.from_rows(
        rows,
        feedback_key=key if isinstance(key, str) else None,
        label_type=label_type if isinstance(label_type, str) else None,
        source=source,
    )


def load_calibration(path: str | os.PathLike[str]) -> CalibrationData:
    """Read a calibration file: the JSON ``openevals calibrate --json`` writes, or JSONL lines of
    ``{"human": ..., "judge": ...}`` (an ``id`` optional)."""
    target = Path(path)
    text = target.read_text("utf-8")
    if target.suffix.lower() == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{target}: line {number} is not JSON ({exc.msg})") from None
        return CalibrationData.from_rows(rows, source=str(target))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{target}: not JSON ({exc.msg}); give the file `openevals calibrate --json` wrote, "
            "or a .jsonl file of {human, judge} lines"
        ) from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{target}: expected a JSON object with a `rows` list")
    return _from_mapping(data, str(target))


def as_calibration(calibration: Any) -> CalibrationData:
    """``calibration`` as :class:`CalibrationData`: a ``CalibrationReport``, a path, a mapping
    (the ``--json`` layout) or a ``CalibrationData``; ``TypeError`` for anything else."""
    if isinstance(calibration, CalibrationData):
        return calibration
    if isinstance(calibration, (str, os.PathLike)):
        return load_calibration(calibration)
    if isinstance(calibration, Mapping):
        return _from_mapping(calibration, "calibration")
    if hasattr(calibration, "rows") and hasattr(calibration, "feedback_key"):
        return _from_report(calibration)
    raise TypeError(
        "`calibration` must be what calibrate() returns (a CalibrationReport), a CalibrationData, "
        "or the path of a calibration file (`openevals calibrate --json FILE`); got "
        f"{type(calibration).__name__}"
    )
