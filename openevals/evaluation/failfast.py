"""Errors a run shows and errors that stop it.

* :class:`ErrorTally` counts failures by evaluator, type and message, so ``repr(result)``, the
  notebook view, ``summary["errors"]["common"]`` and the end of a run show the most common ones.
* :class:`FailFast` watches each evaluator's first evaluations: when the first
  :data:`FAIL_FAST_AFTER` of them all fail with the same error (a missing API key, a misspelled
  column or prompt variable fails every row the same way), the run stops with
  :class:`EvaluatorFailing`, which names the error and carries what finished as ``.result``,
  instead of recording that error on every row. Pairs read back from an ``output=`` file, rows
  whose target failed and rows holding values that cannot be stored do not count.
* :class:`DataSourceFailed`: the data itself failed mid-stream (a generator or a streamed
  dataset raising, a corrupt Parquet row group). The rows read before it are finished first and
  the run then stops, carrying them as ``.result``. A bad *record* never stops a run: it is an
  error row (``RowDataError``) naming its index and field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from openevals._repr import show

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = [
    "FAIL_FAST_AFTER",
    "DataSourceFailed",
    "ErrorTally",
    "EvaluatorFailing",
    "FailFast",
]

FAIL_FAST_AFTER = 5
"""An evaluator whose first this-many evaluations fail with one same error stops the run."""

_KEPT = 256  # distinct (evaluator, type, message) counted; later new ones are not
_MESSAGE = 300
_NOT_CONFIGURATION = frozenset({"TargetError", "RowDataError"})


class EvaluatorFailing(RuntimeError):
    """An evaluator failed its first evaluations with the same error, so the run stopped.

    Attributes:
        evaluator: the evaluator's name in the run.
        error: ``{"type", "message"}`` of the error (secrets removed).
        result: the :class:`~openevals.evaluation.result.EvaluationResult` of what finished
            (set by ``evaluate`` / ``aevaluate``; ``None`` until then).
    """

    def __init__(self, evaluator: str, error: Mapping[str, Any], count: int) -> None:
        self.evaluator = evaluator
        self.error = dict(error)
        self.result: EvaluationResult | None = None
        super().__init__(
            f"evaluator {show(evaluator)} failed on each of its first {count} rows with the same "
            f"error, so the run stopped: {error.get('type')}: {error.get('message')}. This is "
            "usually a configuration mistake (a missing API key, a misspelled column or prompt "
            "variable); fix it and run again (with output=, finished pairs are kept). What "
            "finished is in this exception's `.result`"
        )


class DataSourceFailed(ValueError):
    """Reading the data failed mid-stream, so the run stopped after the rows read before it.

    Every row read before the failure was evaluated to the end. The source's own exception is
    the ``__cause__``.

    Attributes:
        source: what the data is called in messages (a path, ``"data"``, ``"pandas DataFrame"``).
        rows_read: how many rows were read (and evaluated) before the failure.
        result: the :class:`~openevals.evaluation.result.EvaluationResult` of those rows (set by
            ``evaluate`` / ``aevaluate``; ``None`` until then).
    """

    def __init__(self, source: str, rows_read: int, cause: BaseException) -> None:
        self.source = source
        self.rows_read = rows_read
        self.result: EvaluationResult | None = None
        self.__cause__ = cause
        super().__init__(
            f"{source}: reading the data failed after {rows_read} rows, so the run stopped "
            f"there: {type(cause).__name__}: {cause}. The {rows_read} rows read before were "
            "evaluated and are in this exception's `.result` (with output=, in that file too: "
            "fix the data and run again with the same output= to resume)"
        )


class FailFast:
    """Watches the first evaluations of each evaluator (see the module docs)."""

    def __init__(self, exempt: Sequence[str] = ()) -> None:
        # name -> (its first error, how many times so far); None: decided, never stops the run
        self._first: dict[str, tuple[tuple[str, str], int] | None] = dict.fromkeys(exempt)

    def watching(self, name: str) -> bool:
        """Is ``name`` still in its first evaluations, all failed the same way so far?"""
        return name not in self._first or self._first[name] is not None

    def observe(self, name: str, error: Mapping[str, Any] | None) -> EvaluatorFailing | None:
        """One finished evaluation of ``name`` (``error``: its error, else ``None``); the
        exception to raise when it completes a run of identical first failures."""
        if name in self._first and self._first[name] is None:
            return None  # decided: it succeeded once, or failed in different ways
        if error is None:
            self._first[name] = None
            return None
        kind = str(error.get("type"))
        if kind in _NOT_CONFIGURATION:
            return None
        key = (kind, str(error.get("message")))
        seen = self._first.get(name)
        if seen is not None and seen[0] != key:
            self._first[name] = None
            return None
        count = 1 if seen is None else seen[1] + 1
        if count < FAIL_FAST_AFTER:
            self._first[name] = (key, count)
            return None
        self._first[name] = None
        return EvaluatorFailing(name, error, count)


class ErrorTally:
    """Failures counted by ``(evaluator, type, message)`` (see the module docs)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], int] = {}

    def add(self, name: str, error: Mapping[str, Any] | None) -> None:
        error = error or {}
        key = (name, str(error.get("type", "Error")), str(error.get("message", ""))[:_MESSAGE])
        counts = self._counts
        if key in counts:
            counts[key] += 1
        elif len(counts) < _KEPT:
            counts[key] = 1

    def common(self, limit: int = 3) -> list[dict[str, Any]]:
        """The ``limit`` most common failures, most frequent first."""
        ranked = sorted(self._counts.items(), key=lambda item: -item[1])[:limit]
        return [
            {"evaluator": name, "type": kind, "message": message, "count": count}
            for (name, kind, message), count in ranked
        ]
