"""Dataset-level metrics of a batch run (``evaluate(batch_metrics=BatchMetrics(...))``).

:class:`BatchMetrics` is the option (the metrics, ``accumulate`` and ``batch_size``, checked when
it is made); :class:`MetricBatches` runs them. Finished rows are buffered; every ``batch_size``
rows (and once at the end) each metric function gets the batch as columns - ``id``, ``inputs``,
``outputs``, ``reference_outputs``, the extra columns and ``scores`` (feedback key -> score per
row) - and returns ``{name: {"value": ...}}``.
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from openevals._contract import display_name
from openevals._repr import show
from openevals.data.columns import FIELDS
from openevals.evaluation.records import Recorder, ResultRow

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "BatchMetrics",
    "CorpusMetric",
    "MetricBatches",
    "batch_metrics_of",
]

DEFAULT_BATCH_SIZE: Final = 64
"""Rows per ``batch_metrics`` batch."""

BatchFn = Callable[[dict[str, list[Any]]], Any]
Accumulate = Callable[[dict[str, list[dict[str, Any]]]], Any]


@runtime_checkable
class CorpusMetric(Protocol):
    """A dataset-level metric computed once over the parts collected from every batch."""

    def collect(self, batch: dict[str, list[Any]]) -> Any: ...

    def finish(self, parts: list[Any]) -> Mapping[str, Mapping[str, Any]]: ...


@dataclass(frozen=True, init=False)
class BatchMetrics:
    """``evaluate(..., batch_metrics=BatchMetrics(metrics, accumulate=..., batch_size=...))``.

    Args:
        metrics: dataset-level metrics ``fn(batch: dict[str, list]) -> {name: {"value": ...}}``
            run on batches of ``batch_size`` finished rows (columns ``id``, ``inputs``,
            ``outputs``, ``reference_outputs``, extra columns, and ``scores``); or the name of a
            corpus metric (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``, ``"rouge"``, with
            ``:option=value`` settings), computed once over the whole run.
        accumulate: combines the per-batch metrics ``{name: [per-batch dicts]}`` into the final
            ones; by default values are summed.
        batch_size: rows per batch.

    A plain list of metrics passed as ``batch_metrics=`` means ``BatchMetrics(that_list)``.

    Raises:
        TypeError / ValueError: a metric that is neither a function nor a known name, an
            ``accumulate`` that is not a function, a ``batch_size`` below 1 (naming it).
    """

    metrics: tuple[BatchFn, ...]
    accumulate: Accumulate | None
    batch_size: int

    def __init__(
        self,
        metrics: Iterable[BatchFn | str],
        *,
        accumulate: Accumulate | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if (
            callable(metrics)
            or isinstance(metrics, (str, bytes))
            or not isinstance(metrics, Iterable)
        ):
            raise TypeError(
                "batch_metrics must be a list of functions batch -> dict (or metric names); got "
                f"{type(metrics).__name__}"
            )
        fns = tuple(_batch_metric(fn) for fn in metrics)
        for fn in fns:
            if not callable(fn):
                raise TypeError(
                    f"batch_metrics must hold functions batch -> dict; got {type(fn).__name__}"
                )
        if accumulate is not None and not callable(accumulate):
            raise TypeError(
                f"BatchMetrics(accumulate=) must be a function or None; got {show(accumulate)}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(
                f"BatchMetrics(batch_size=) must be an integer >= 1; got {show(batch_size)}"
            )
        object.__setattr__(self, "metrics", fns)
        object.__setattr__(self, "accumulate", accumulate)
        object.__setattr__(self, "batch_size", batch_size)


def batch_metrics_of(value: Any) -> BatchMetrics | None:
    """``batch_metrics=`` of ``evaluate``: a :class:`BatchMetrics`, a list of metrics, or
    ``None``."""
    if value is None or isinstance(value, BatchMetrics):
        return value
    return BatchMetrics(value)


def _batch_metric(item: Any) -> Any:
    """A metric: a function, or the name of a registered dataset-level metric (``"bleu"``,
    ``"rouge:use_stemmer=true"``, ...; see ``registry.build_batch_metric``)."""
    if isinstance(item, str):
        from openevals.evaluation.registry import build_batch_metric

        return build_batch_metric(item)
    return item


class MetricBatches:
    """The batch buffer, the per-batch values, and their running combination."""

    def __init__(self, options: BatchMetrics, recorder: Recorder) -> None:
        self.fns = list(options.metrics)
        self.accumulate = options.accumulate
        self.size = options.batch_size
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
                    "accumulation sums them, so pass BatchMetrics(..., accumulate=) for other "
                    "kinds of metrics"
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
    # The three fields, then every other field in the order the rows first have it.
    for name in dict.fromkeys([*FIELDS, *(name for fields, _ in rows for name in fields)]):
        if name != "id":
            columns[name] = [fields.get(name) for fields, _ in rows]
    columns["scores"] = [
        {res["key"]: res["score"] for e in rec["evaluations"].values() for res in e["results"]}
        for _, rec in rows
    ]
    return columns
