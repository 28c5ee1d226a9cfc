"""The records of a batch run and where secrets are taken out (their one JSON encoding is
:mod:`openevals.data.encoding`).

In memory, a run produces *result rows* (:class:`ResultRow`, the dicts in
``EvaluationResult.rows``), each holding one :class:`Evaluation` per evaluator. The ``output=``
file holds the same data as JSON Lines, one record per line, told apart by ``kind``:

* ``run`` - one per run: start time, evaluator names, ``group_by``, and ``row_ids``, the rule
  that made the ids of rows without an ``id`` (:data:`~.data.ID_RULE`);
* ``row`` - one per row, written before its first evaluation (after the target ran, so a resumed
  run reuses the target's outputs): ``row_id``, ``index``, the three fields, ``extra``,
  ``group``, ``target``, ``row_fp``;
* ``eval`` - one per finished row x evaluator pair: ``row_id``, ``index``, ``evaluator``, the
  :class:`Evaluation` fields except ``resumed``, and the fingerprints a resume checks it
  against: ``evaluator_fp`` (:mod:`.fingerprint`) and ``row_fp`` (the row's whole content).

The live path, resume and both files (the ``output=`` file and ``EvaluationResult.to_jsonl``)
all go through the functions below, so each key is spelled in one place.

:class:`Recorder` is the one place where secrets are removed (with
:class:`~openevals.evaluation.redact.Redactor`): error messages when they are recorded
(:meth:`Recorder.error`), every result row when it is finished (:meth:`Recorder.finish`, before
scores, progress, batch metrics or the result see it), every ``output=`` line
(:meth:`Recorder.line`) and batch-metric values (:meth:`Recorder.data`). Every sink (rows,
``to_jsonl``, the report, the summary, ``repr``, progress, the CLI) reads only these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Literal, TypedDict

from openevals.data.columns import FIELDS
from openevals.data.encoding import encode
from openevals.data.row_ids import ID_RULE
from openevals.evaluation.redact import Redactor

__all__ = [
    "CacheCounts",
    "ErrorInfo",
    "Evaluation",
    "Outcome",
    "Recorder",
    "ResultRow",
    "TargetInfo",
    "error_type",
    "row_record",
]

Status = Literal["success", "error"]
_MAX_MESSAGE = 4000


class ErrorInfo(TypedDict):
    """A failure, in place of a score: the exception's type name and its (redacted) message."""

    type: str
    message: str


class CacheCounts(TypedDict):
    """Judge-cache lookups made by one evaluation."""

    hits: int
    misses: int


class Evaluation(TypedDict):
    """One finished row x evaluator pair (``row["evaluations"][name]``)."""

    status: Status
    results: list[dict[str, Any]]
    error: ErrorInfo | None
    elapsed_sec: float | None
    usage: dict[str, int] | None
    cost_usd: float | None
    model: str | None
    cache: CacheCounts | None
    resumed: bool


class TargetInfo(TypedDict):
    """The target's call for one row (``row["target"]``)."""

    status: Status
    elapsed_sec: float
    usage: dict[str, int] | None
    error: ErrorInfo | None


Outcome = tuple[list[dict[str, Any]], ErrorInfo | None, float, tuple[int, int] | None]
"""``(results, error, elapsed_sec, (cache hits, misses) or None)`` of one row x evaluator pair."""


class _ResultRowBase(TypedDict):
    id: str
    index: int
    inputs: Any
    outputs: Any
    reference_outputs: Any


class ResultRow(_ResultRowBase, total=False):
    """One data row with its evaluations (``EvaluationResult.rows[i]``)."""

    extra: dict[str, Any]
    group: str | None
    target: TargetInfo
    evaluations: dict[str, Evaluation]
    status: Status


_EVAL_FILE_KEYS = tuple(k for k in Evaluation.__annotations__ if k != "resumed")
_ROW_FILE_KEYS = ("inputs", "outputs", "reference_outputs", "extra", "group", "target")


def error_type(evaluation: Mapping[str, Any]) -> str:
    """The error type of a failed evaluation (``"Error"`` when the record does not say)."""
    error = evaluation.get("error")
    return str(error.get("type", "Error")) if isinstance(error, Mapping) else "Error"


def _message(exc: BaseException) -> str:
    text = str(exc) or repr(exc)
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + " ...[truncated]"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def row_record(
    row_id: str,
    index: int,
    fields: Mapping[str, Any],
    *,
    group: str | None,
    grouped: bool,
    target: TargetInfo | None = None,
    evaluations: dict[str, Evaluation] | None = None,
) -> ResultRow:
    """A result row: the row's fields, its group, ``evaluations`` (empty by default), target."""
    rec: dict[str, Any] = {
        "id": row_id,
        "index": index,
        "inputs": fields.get("inputs"),
        "outputs": fields.get("outputs"),
        "reference_outputs": fields.get("reference_outputs"),
    }
    extra = {k: v for k, v in fields.items() if k not in FIELDS}
    if extra:
        rec["extra"] = extra
    if grouped:
        rec["group"] = group
    rec["evaluations"] = {} if evaluations is None else evaluations
    if target is not None:
        rec["target"] = target
    return rec  # type: ignore[return-value]


class Recorder:
    """Makes every record of a run, with secrets removed (see :mod:`~.redact`)."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor if redactor is not None else Redactor()

    # ------------------------------------------------------------------ pieces
    def error(self, exc: BaseException) -> ErrorInfo:
        """An exception as a record's ``error``: type name and redacted, truncated message."""
        return {"type": type(exc).__name__, "message": self.redactor.text(_message(exc))}

    @staticmethod
    def target_failed(target: TargetInfo) -> ErrorInfo:
        """The error of each evaluator that did not run because the row's target failed."""
        failure: Mapping[str, Any] = target.get("error") or {}
        return {
            "type": "TargetError",
            "message": "the target failed, so the evaluator did not run: "
            f"{failure.get('type')}: {failure.get('message')}",
        }

    def data(self, value: Any) -> Any:
        """Any other value that reaches a sink (batch-metric values): secret values removed."""
        return self.redactor.data(value)

    # ------------------------------------------------------------------ evaluations
    @staticmethod
    def evaluation(
        outcome: Outcome, *, usage: dict[str, int] | None, cost_usd: float | None, model: str | None
    ) -> Evaluation:
        """A pair that just finished, from its :data:`Outcome` (its error comes from
        :meth:`error`; the rest is cleaned with its row by :meth:`finish`)."""
        results, error, elapsed, counts = outcome
        return {
            "status": "success" if error is None else "error",
            "results": results,
            "error": error,
            "elapsed_sec": elapsed,
            "usage": usage,
            "cost_usd": cost_usd,
            "model": model,
            "cache": None if counts is None else {"hits": counts[0], "misses": counts[1]},
            "resumed": False,
        }

    def resumed(self, line: Mapping[str, Any]) -> Evaluation:
        """A pair read back from the ``output=`` file (an ``eval`` line)."""
        entry: dict[str, Any] = {key: line.get(key) for key in _EVAL_FILE_KEYS}
        entry["status"] = line.get("status", "error")
        entry["results"] = list(line.get("results") or [])
        entry["resumed"] = True
        return entry  # type: ignore[return-value]

    @staticmethod
    def eval_line(
        row_id: str,
        index: int,
        evaluator: str,
        entry: Evaluation,
        *,
        evaluator_fp: str,
        row_fp: str,
    ) -> dict[str, Any]:
        """The ``eval`` line of ``entry`` for the ``output=`` file, with the fingerprints of
        the evaluator and the row content it was computed for (checked on resume)."""
        line: dict[str, Any] = {"kind": "eval", "row_id": row_id, "index": index}
        line["evaluator"] = evaluator
        for key in _EVAL_FILE_KEYS:
            line[key] = entry[key]  # type: ignore[literal-required]
        line["evaluator_fp"] = evaluator_fp
        line["row_fp"] = row_fp
        return line

    # ------------------------------------------------------------------ rows
    def target(
        self, error: ErrorInfo | None, elapsed_sec: float, usage: dict[str, int] | None
    ) -> TargetInfo:
        return {
            "status": "success" if error is None else "error",
            "elapsed_sec": elapsed_sec,
            "usage": usage,
            "error": error,
        }

    def finish(self, rec: ResultRow) -> ResultRow:
        """``rec`` made final: every secret value removed (a copy only where one was found)."""
        return self.redactor.data(rec)  # type: ignore[no-any-return]

    def line(self, record: Mapping[str, Any]) -> str:
        """``record`` as one line of the ``output=`` file: encoded, secret values removed."""
        return self.redactor.json_text(encode(record))

    @staticmethod
    def row_line(rec: ResultRow, row_fp: str) -> dict[str, Any]:
        """The ``row`` line of a result row for the ``output=`` file (``row_fp``: the data
        row's fingerprint, :func:`~.data.row_fingerprint`)."""
        line: dict[str, Any] = {"kind": "row", "row_id": rec["id"], "index": rec["index"]}
        for key in _ROW_FILE_KEYS:
            line[key] = rec.get(key)
        line["row_fp"] = row_fp
        return line

    @staticmethod
    def run_line(evaluators: Sequence[str], group_by: str | None) -> dict[str, Any]:
        """The ``run`` line that starts each run's records in the ``output=`` file."""
        return {
            "kind": "run",
            "row_id": "",
            "started_at": _now(),
            "evaluators": list(evaluators),
            "group_by": group_by,
            "row_ids": ID_RULE,
        }
