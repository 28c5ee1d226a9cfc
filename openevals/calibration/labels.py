"""Labelled data for calibration: reading the label column, typing it, and matching it to the judge.

Everything here runs before any model call, so a dataset that cannot be compared with the judge
(a missing label column, continuous labels for a pass/fail judge, labels outside the judge's
``choices``) fails at once with a message naming the column, the rows and the fix.

Label types:

* ``"boolean"`` - pass/fail labels (``true``/``false``; CSV text ``"true"``/``"false"`` too);
* ``"categorical"`` - labels from a set (``choices``): numbers (ordered, so weighted kappa is
  reported too) or text;
* ``"continuous"`` - numbers compared with a continuous judge score.

The judge's score type is read from the judge when it says (every ``create_*llm_as_judge``
factory, the trajectory, code and RAG LLM metrics), or given as ``judge_scores=`` for judges that
do not say (plain functions). When neither is known, the labels decide and each judge score is
checked against them after the run.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from openevals._contract import info_of
from openevals._repr import show
from openevals.calibration.agreement import sorted_labels
from openevals.data.rows import MISSING, Row, field_at, iter_rows

if TYPE_CHECKING:
    from openevals.calibration.run import Settings

__all__ = [
    "JudgeScores",
    "LabelType",
    "LabelledData",
    "LabelledRow",
    "judge_scores_of",
    "load_labelled",
]

LabelType = Literal["boolean", "categorical", "continuous"]
LABEL_TYPES: tuple[str, ...] = ("boolean", "categorical", "continuous")
_TRUE = frozenset({"true", "yes"})
_FALSE = frozenset({"false", "no"})


@dataclass(frozen=True)
class JudgeScores:
    """What scores a judge gives: ``kind`` is ``"boolean"``, ``"continuous"``, ``"choices"`` or
    ``None`` (unknown: checked against the labels after the run)."""

    kind: Literal["boolean", "continuous", "choices"] | None
    choices: tuple[float, ...] = ()

    def describe(self) -> str:
        if self.kind == "choices":
            return "scores from the choices " + ", ".join(_show(c) for c in self.choices)
        if self.kind == "boolean":
            return "boolean (pass/fail) scores"
        if self.kind == "continuous":
            return "continuous scores in [0, 1]"
        return "scores of an undeclared type"


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _show(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) else show(value)


def judge_scores_of(judge: Any, declared: Any = None) -> JudgeScores:
    """The score type of ``judge``: ``declared`` (``"boolean"``, ``"continuous"`` or a list of
    choices) when given, else what the judge's factory recorded, else unknown."""
    if declared is not None:
        if isinstance(declared, str):
            if declared not in ("boolean", "continuous"):
                raise ValueError(
                    "`judge_scores` must be 'boolean', 'continuous' or a list of numeric choices; "
                    f"got {show(declared)}"
                )
            return JudgeScores(declared)  # type: ignore[arg-type]
        if isinstance(declared, Sequence) and declared and all(_is_number(c) for c in declared):
            return JudgeScores("choices", tuple(float(c) for c in declared))
        raise ValueError(
            "`judge_scores` must be 'boolean', 'continuous' or a non-empty list of numeric "
            f"choices; got {show(declared)}"
        )
    # Judge factories record the score schema their judge answers in on the evaluator's contract
    # description (info_of looks through functools.partial).
    info = info_of(judge)
    if info is None or info.score_type is None:
        return JudgeScores(None)
    return JudgeScores(info.score_type, info.choices)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def parse_label(value: Any) -> Any:
    """A raw label cell as a Python value: CSV text ``"true"``/``"0.5"`` becomes a bool/number."""
    if isinstance(value, str):
        text = value.strip()
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        try:
            number = float(text)
        except ValueError:
            return text
        if not math.isfinite(number):
            return text
        return int(number) if number.is_integer() and "." not in text else number
    return value


@dataclass(frozen=True)
class LabelledRow:
    """One labelled row: the row the judge sees (label columns removed), the human label and
    the human's reason (``None`` when the data has no reason column or it is empty)."""

    index: int
    id: str
    fields: dict[str, Any]
    label: Any
    reason: str | None

    def as_data(self) -> dict[str, Any]:
        """The row as the runner reads it (with its id, so results map back to it)."""
        return {"id": self.id, **self.fields}


@dataclass(frozen=True)
class LabelledData:
    """A labelled dataset, checked against the judge (see :func:`load_labelled`)."""

    rows: tuple[LabelledRow, ...]
    label: str
    label_type: LabelType
    labels: tuple[Hashable, ...]
    """Every label, in order (categorical and boolean; empty for continuous)."""
    ordered: bool
    judge: JudgeScores

    def by_id(self) -> dict[str, LabelledRow]:
        return {row.id: row for row in self.rows}

    def check_score(self, score: Any, row: LabelledRow) -> Any:
        """A judge score checked against the label type; ``ValueError`` if they cannot match."""
        if self.label_type == "boolean":
            ok = isinstance(score, bool)
        elif self.label_type == "continuous":
            ok = _is_number(score)
        else:
            ok = isinstance(score, Hashable) and score in self.labels
            if ok and not isinstance(score, bool) and any(isinstance(x, bool) for x in self.labels):
                ok = False
        if not ok:
            wanted = {
                "boolean": "true/false",
                "continuous": "a number",
                "categorical": "one of " + ", ".join(_show(x) for x in self.labels),
            }[self.label_type]
            raise ValueError(
                f"the judge scored row {row.index} (id {show(row.id)}) {show(score)}, but the "
                f"labels in column {show(self.label)} are {self.label_type} ({wanted}); pass "
                "`judge_scores=` to declare the judge's score type, or a judge whose scores match "
                "the labels"
            )
        return score


def _rows_of(data: Any) -> list[Row]:
    if isinstance(data, Mapping):
        raise TypeError(
            "`data` must be a list of row dicts or a path to a JSONL/JSON/CSV/TSV file; got one "
            "dict (wrap it in a list)"
        )
    rows = list(iter_rows(data))
    if len(rows) < 2:
        raise ValueError(f"`data` must hold at least 2 labelled rows; got {len(rows)}")
    return rows


def _take(fields: dict[str, Any], path: str) -> Any:
    """The value at ``path``; a top-level column is removed from ``fields`` (the judge's row)."""
    value = field_at(fields, path)
    if "." not in path:
        fields.pop(path, None)
    return value


def load_labelled(data: Any, settings: Settings, judge: Any) -> LabelledData:
    """Read ``data``, pull out the label (and reason) column and check it against the scores of
    the evaluator ``judge``."""
    scores = judge_scores_of(judge, settings.judge_scores)
    label, reason, label_map = settings.label, settings.reason, settings.label_map
    if not isinstance(label, str) or not label:
        raise TypeError(f"`label` must be the name of the label column (a str); got {show(label)}")
    if reason is not None and (not isinstance(reason, str) or not reason):
        raise TypeError(f"`reason` must be a column name (str) or None; got {show(reason)}")
    if settings.label_type not in (None, *LABEL_TYPES):
        raise ValueError(
            f"`label_type` must be one of {LABEL_TYPES} or None; got {show(settings.label_type)}"
        )
    if label_map is not None and not isinstance(label_map, Mapping):
        raise TypeError(f"`label_map` must be a dict of raw label -> label; got {show(label_map)}")
    raw_rows = _rows_of(data)
    rows: list[LabelledRow] = []
    missing: list[int] = []
    for row in raw_rows:
        fields = dict(row.fields)
        value = _take(fields, label)
        why = _take(fields, reason) if reason is not None else MISSING
        if value is MISSING or value is None or value == "":
            missing.append(row.index)
            continue
        if label_map is not None:
            value = _mapped(value, label_map, row.index, label)
        rows.append(
            LabelledRow(
                index=row.index,
                id=row.id,
                fields=fields,
                label=parse_label(value),
                reason=None if why is MISSING or why in (None, "") else str(why),
            )
        )
    if missing:
        if len(missing) == len(raw_rows):
            columns = sorted({k for r in raw_rows for k in r.fields})
            raise ValueError(
                f"no row has a label in column {show(label)}; the rows have the columns "
                f"{show(columns)}. Pass `label=` with the name of the human label column"
            )
        shown = ", ".join(str(i) for i in missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise ValueError(
            f"{len(missing)} row(s) have no label in column {show(label)} (rows {shown}); label "
            "them or leave them out of the data"
        )
    return _typed(rows, settings, scores)


def _mapped(value: Any, label_map: Mapping[Any, Any], index: int, label: str) -> Any:
    """``label_map``'s value for a raw label, whatever the file format: a CSV/TSV cell is text,
    so ``"1"`` is also looked up as ``1`` (and a JSON number ``1`` also as ``"1"``)."""
    candidates = [value]
    if isinstance(value, str):
        candidates.append(parse_label(value))
    elif _is_number(value):
        candidates.append(str(value))
    for candidate in candidates:
        if isinstance(candidate, Hashable) and candidate in label_map:
            return label_map[candidate]
    also = (
        f" (also looked up as {show(candidates[1])}: CSV/TSV cells are read as text)"
        if len(candidates) > 1 and candidates[1] != value
        else ""
    )
    raise ValueError(
        f"row {index}: label {show(value)} in column {show(label)} is not a key of "
        f"`label_map` ({show(list(label_map))}){also}; add it"
    )


def _label_kind(values: Sequence[Any], label: str) -> str:
    kinds = set()
    for value in values:
        if isinstance(value, bool):
            kinds.add("bool")
        elif _is_number(value):
            kinds.add("number")
        elif isinstance(value, str):
            kinds.add("text")
        else:
            raise TypeError(
                f"labels in column {show(label)} must be booleans, numbers or text; got "
                f"{type(value).__name__} ({show(value)})"
            )
    if len(kinds) > 1:
        raise ValueError(
            f"labels in column {show(label)} mix {' and '.join(sorted(kinds))} values; use one "
            "kind (e.g. all true/false, or all numbers), or map them with `label_map=`"
        )
    return kinds.pop()


def _typed(rows: list[LabelledRow], settings: Settings, judge: JudgeScores) -> LabelledData:
    label, label_type, choices = settings.label, settings.label_type, settings.choices
    values = [r.label for r in rows]
    kind = _label_kind(values, label)
    example = next(iter(values))
    if choices is not None:
        if isinstance(choices, (str, bytes)) or not isinstance(choices, Sequence) or not choices:
            raise TypeError(f"`choices` must be a non-empty list of labels; got {show(choices)}")
        choices = [parse_label(c) for c in choices]
        for index, choice in enumerate(choices):
            if not _hashable(choice):
                raise TypeError(
                    f"`choices` must hold labels (booleans, numbers or text); item {index} is "
                    f"{type(choice).__name__} {show(choice)}"
                )
    elif judge.kind == "choices":
        choices = list(judge.choices)
    if label_type is None:
        if kind == "bool":
            label_type = "boolean"
        elif kind == "text" or (kind == "number" and choices is not None):
            label_type = "categorical"
        else:
            label_type = "continuous"
    problem = _mismatch(kind, label_type, judge, values)
    if problem:
        raise ValueError(
            f"the labels in column {show(label)} ({problem}, e.g. {show(example)}) cannot be "
            f"compared with a judge that gives {judge.describe()}: {_fix(kind, label_type, judge)}"
        )
    labels: tuple[Hashable, ...] = ()
    ordered = False
    if label_type == "boolean":
        labels = (False, True)
    elif label_type == "categorical":
        labels = (
            tuple(dict.fromkeys(choices)) if choices is not None else tuple(sorted_labels(values))
        )
        outside = sorted({show(v) for v in values if v not in labels})
        if outside:
            listed = ", ".join(outside[:6]) + (", ..." if len(outside) > 6 else "")
            raise ValueError(
                f"labels {listed} in column {show(label)} are not among the choices "
                f"{show(list(labels))}; fix the labels or the choices"
            )
        ordered = all(_is_number(x) for x in labels)
    return LabelledData(
        rows=tuple(rows),
        label=label,
        label_type=label_type,  # type: ignore[arg-type]
        labels=labels,
        ordered=ordered,
        judge=judge,
    )


def _mismatch(kind: str, label_type: str, judge: JudgeScores, values: Sequence[Any]) -> str | None:
    """Why labels of ``kind`` typed ``label_type`` cannot meet ``judge``; ``None`` if they can."""
    if label_type == "boolean" and kind != "bool":
        return f"{kind} labels declared boolean"
    if label_type == "continuous" and kind != "number":
        return f"{kind} labels declared continuous"
    if judge.kind == "boolean" and label_type != "boolean":
        return f"{label_type} {kind} labels"
    if judge.kind == "continuous":
        if label_type != "continuous":
            return f"{label_type} {kind} labels"
        if any(not 0.0 <= float(v) <= 1.0 for v in values):
            return "continuous labels outside [0, 1]"
    if judge.kind == "choices":
        if kind != "number":
            return f"{kind} labels"
        if label_type == "categorical":
            outside = sorted({v for v in values if float(v) not in judge.choices})
            if outside:
                return f"labels {outside} outside the judge's choices"
    return None


def _fix(kind: str, label_type: str, judge: JudgeScores) -> str:
    if kind == "text":
        # No judge scores text: continuous judges need numbers in [0, 1], choices judges numbers.
        return (
            "map the text labels to true/false (or to numbers) with `label_map=`, e.g. "
            "label_map={'good': True, 'bad': False}"
        )
    if judge.kind == "boolean":
        return (
            "give true/false labels (map others with `label_map=`), or a judge made with "
            "continuous=True (numeric labels in [0, 1]) or choices=[...] (numeric labels)"
        )
    if judge.kind == "continuous":
        return "give numeric labels in [0, 1] (rescale them), or a judge whose scores match"
    if judge.kind == "choices":
        return "give labels from the judge's choices, or a judge with matching choices"
    return f"declare `label_type=` to match the labels (they were read as {label_type})"
