"""Dataset-level metrics of a batch run (``evaluate(batch_metrics=..., accumulate=...)``).

Finished rows are buffered; every ``batch_size`` rows (and once at the end) each metric function
gets the batch as columns - ``id``, ``inputs``, ``outputs``, ``reference_outputs``, the extra
columns and ``scores`` (feedback key -> score per row) - and returns ``{name: {"value": ...}}``.
The per-batch values are combined by ``accumulate`` (default: summed). A metric that raises is
recorded in ``summary["batch_metric_errors"]``; it never stops the run.

A metric with ``collect(batch)`` and ``finish(parts)`` methods (a :class:`CorpusMetric`, such as
``openevals.text.reference_batch_metric("bleu")``) is a corpus metric: ``collect`` runs on every
batch and ``finish`` once on all the parts, so its final value is computed over the whole run
(corpus BLEU pools n-gram counts; summing per-batch scores would be wrong). Its value is not part
of the running combination, and ``accumulate`` does not see it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from openevals._contract import display_name
from openevals._repr import show
from openevals.evaluation.data import FIELDS
from openevals.evaluation.records import Recorder, ResultRow

__all__ = ["BatchMetrics", "CorpusMetric"]

BatchFn = Callable[[dict[str, list[Any]]], Any]
Accumulate = Callable[[dict[str, list[dict[str, Any]]]], Any]


@runtime_checkable
class CorpusMetric(Protocol):
    """A dataset-level metric computed once over the parts collected from every batch."""

    def collect(self, batch: dict[str, list[Any]]) -> Any: ...

    def finish(self, parts: list[Any]) -> Mapping[str, Mapping[str, Any]]: ...


class BatchMetrics:
    """The batch buffer, the per-batch values, and their running combination."""

    def __init__(
        self,
        fns: Sequence[BatchFn],
        accumulate: Accumulate | None,
        size: int,
        recorder: Recorder,
    ) -> None:
        self.fns = list(fns)
        self.accumulate = accumulate
        self.size = size
        self.recorder = recorder
        self.buffer: list[tuple[Mapping[str, Any], ResultRow]] = []
        self.per_batch: dict[str, list[dict[str, Any]]] = {}
        self.errors: list[dict[str, Any]] = []
        self.current: dict[str, dict[str, Any]] = {}
        self.parts: dict[int, list[Any]] = {}

    def add(self, fields: Mapping[str, Any], rec: ResultRow) -> None:
        """Buffer one finished row (its fields as the evaluators saw them, and its record)."""
        self.buffer.append((fields, rec))
        if len(self.buffer) >= self.size:
            self.flush()

    def flush(self) -> None:
        """Run every metric on the buffered rows and update the running combination."""
        if not self.buffer:
            return
        rows, self.buffer = self.buffer, []
        columns = _columns(rows)
        for fn in self.fns:
            label = display_name(fn)
            if isinstance(fn, CorpusMetric):
                try:
                    self.parts.setdefault(id(fn), []).append(fn.collect(dict(columns)))
                except Exception as exc:
                    self.errors.append({"metric_fn": label, "rows": len(rows), **self._error(exc)})
                continue
            try:
                out = fn({k: list(v) for k, v in columns.items()})
                if not isinstance(out, Mapping):
                    raise TypeError(
                        f"batch metric {show(label)} returned {type(out).__name__}; expected a "
                        "dict of metric name -> {'value': ...}"
                    )
                for metric, value in out.items():
                    if not isinstance(value, Mapping) or "value" not in value:
                        raise TypeError(
                            f"batch metric {show(label)} returned {show(value)} for "
                            f"{show(metric)}; each metric must be a dict with a 'value' entry"
                        )
                for metric, value in out.items():
                    name = self.recorder.data(str(metric))
                    self.per_batch.setdefault(name, []).append(self.recorder.data(dict(value)))
            except Exception as exc:
                self.errors.append({"metric_fn": label, "rows": len(rows), **self._error(exc)})
        with contextlib.suppress(Exception):
            self.current = self.combine()

    def combine(self) -> dict[str, dict[str, Any]]:
        """The per-batch values combined: by ``accumulate``, or summed."""
        per_batch = {k: [dict(v) for v in vs] for k, vs in self.per_batch.items()}
        if self.accumulate is not None:
            out = self.accumulate(per_batch)
            if not isinstance(out, Mapping):
                raise TypeError(
                    f"accumulate returned {type(out).__name__}; expected a dict of metric name "
                    "-> {'value': ...}"
                )
            return self.recorder.data(  # type: ignore[no-any-return]
                {
                    str(k): dict(v) if isinstance(v, Mapping) else {"value": v}
                    for k, v in out.items()
                }
            )
        total: dict[str, dict[str, Any]] = {}
        for name, values in per_batch.items():
            raw = [v.get("value") for v in values]
            numbers = [x for x in raw if isinstance(x, (int, float))]
            kinds = {isinstance(x, bool) for x in numbers}
            if len(numbers) == len(raw) and len(kinds) <= 1:
                total[name] = {"value": sum(numbers), "batches": len(values)}
            else:
                raise TypeError(
                    f"batch metric {show(name)} has non-numeric values; the default "
                    "accumulation sums them, so pass accumulate= for other kinds of metrics"
                )
        return total

    def final(self) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
        """``(batch_metrics, batch_metric_errors)`` for the result."""
        errors = list(self.errors)
        try:
            metrics = self.combine()
        except Exception as exc:
            metrics = {}
            errors.append({"metric_fn": "accumulate", **self._error(exc)})
        failed = {e["metric_fn"] for e in self.errors}
        for fn in self.fns:
            label = display_name(fn)
            if not isinstance(fn, CorpusMetric) or id(fn) not in self.parts or label in failed:
                continue
            try:
                out = fn.finish(self.parts[id(fn)])
                for metric, value in out.items():
                    metrics[self.recorder.data(str(metric))] = self.recorder.data(
                        {**dict(value), "batches": len(self.parts[id(fn)])}
                    )
            except Exception as exc:
                errors.append({"metric_fn": label, **self._error(exc)})
        return metrics, errors

    def _error(self, exc: Exception) -> dict[str, Any]:
        return dict(self.recorder.error(exc))


def _columns(rows: Sequence[tuple[Mapping[str, Any], ResultRow]]) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {"id": [rec["id"] for _, rec in rows]}
    for name in FIELDS:
        columns[name] = [fields.get(name) for fields, _ in rows]
    extra_names: list[str] = []
    for fields, _ in rows:
        for name in fields:
            if name not in FIELDS and name not in columns and name not in extra_names:
                extra_names.append(name)
    for name in extra_names:
        columns[name] = [fields.get(name) for fields, _ in rows]
    columns["scores"] = [
        {res["key"]: res["score"] for e in rec["evaluations"].values() for res in e["results"]}
        for _, rec in rows
    ]
    return columns
