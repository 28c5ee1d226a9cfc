"""Evaluation results as tables: pandas and polars DataFrames and Parquet files.

Two shapes, both built from :attr:`EvaluationResult.rows`:

* **long** (the default): one row per dataset row x feedback key, with the columns of
  :data:`LONG_COLUMNS` - ``id``, ``index``, ``group`` (only with ``group_by``), ``evaluator``,
  ``key``, ``score``, ``comment``, ``error`` (``"Type: message"`` when the evaluator failed; its
  score is then missing), ``model``, ``tokens`` (total tokens of the evaluator call) and ``cost``
  (its estimated USD). A failed evaluator gives one row per key it produced on other rows (its own
  name when it never succeeded). ``tokens`` and ``cost`` belong to the evaluator call, so an
  evaluator with several keys repeats them on each: sum them per ``evaluator``, not per ``key``.
* **wide** (``wide=True``): one row per dataset row with ``id``, ``index``, ``group``, ``status``
  (``"success"`` / ``"error"``) and one score column per feedback key (a key that would clash
  with those names gets a ``score:`` prefix).

pandas keeps scores as they are (an ``object`` column when they mix types). Arrow-typed outputs
(polars, Parquet) need one type per column: a score column of booleans stays boolean, numbers
(booleans among them as 0/1) become floats, anything else becomes text (JSON for non-strings);
non-text comments become JSON text as well.

:func:`to_parquet` writes atomically: into a temporary file beside the target, renamed over it
only once complete, so a failed write never leaves a partial file that looks complete. The file's
schema metadata holds the run's aggregates and summary under ``openevals``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals._text import first_surrogate, replace_surrogates
from openevals.data.encoding import no_gc_pauses
from openevals.data.sources import require

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = [
    "LONG_COLUMNS",
    "long_columns",
    "long_table",
    "rows_arrow",
    "to_arrow",
    "to_pandas",
    "to_parquet",
    "to_polars",
    "wide_table",
]

LONG_COLUMNS = (
    "id",
    "index",
    "group",
    "evaluator",
    "key",
    "score",
    "comment",
    "error",
    "model",
    "tokens",
    "cost",
)
"""The columns of the long form (``group`` only when the run had ``group_by``)."""

_WIDE_FIXED = ("id", "index", "group", "status")
_TEXT_COLUMNS = ("id", "group", "status", "evaluator", "key", "comment", "error", "model")


def _grouped(rows: Sequence[dict[str, Any]]) -> bool:
    return bool(rows) and "group" in rows[0]


def _keys_by_evaluator(rows: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    keys: dict[str, dict[str, None]] = {}
    for row in rows:
        for name, entry in row["evaluations"].items():
            seen = keys.setdefault(name, {})
            for result in entry.get("results") or ():
                seen.setdefault(str(result.get("key")), None)
    return {name: list(found) for name, found in keys.items()}


def _error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        return f"{error.get('type', 'Error')}: {error.get('message', '')}"
    return str(error)


def _long_rows(
    rows: Sequence[dict[str, Any]],
    grouped: bool,
    fallback: dict[str, list[str]],
    columns: dict[str, list[Any]],
) -> None:
    """Append the long form of result dicts to ``columns`` (one list per column)."""
    out = [columns[name] for name in LONG_COLUMNS if grouped or name != "group"]
    adds = [column.append for column in out]
    for row in rows:
        head: tuple[Any, ...] = (
            (row["id"], row["index"], row.get("group")) if grouped else (row["id"], row["index"])
        )
        for name, entry in row["evaluations"].items():
            usage = entry.get("usage")
            error = entry.get("error")
            tail = (
                None if error is None else _error_text(error),
                entry.get("model"),
                usage.get("total_tokens") if usage else None,
                entry.get("cost_usd"),
            )
            results = entry.get("results")
            records = (
                [
                    (*head, name, res["key"], res["score"], res.get("comment"), *tail)
                    for res in results
                ]
                if results
                else [(*head, name, key, None, None, *tail) for key in fallback.get(name) or [name]]
            )
            for record in records:
                for add, value in zip(adds, record, strict=True):
                    add(value)


def long_columns(
    rows: Sequence[dict[str, Any]], *, failed: bool | None = None
) -> tuple[list[str], dict[str, list[Any]]]:
    """The long form as column names and ``{column: values}``.

    ``failed``: whether any evaluation failed, when the caller knows (a run's summary says);
    otherwise the rows are read once more to find out. Blocks of the runner's columnar path
    (:class:`~openevals.evaluation.blocks.ColumnBlock`) are read as columns, without building
    their result dicts.
    """
    grouped = _grouped(rows)
    names = [c for c in LONG_COLUMNS if grouped or c != "group"]
    columns: dict[str, list[Any]] = {name: [] for name in LONG_COLUMNS}
    if failed is None:
        failed = any(r.get("status") == "error" for r in rows)
    fallback = _keys_by_evaluator(rows) if failed else {}
    parts: Iterable[Any] = rows.iter_parts() if hasattr(rows, "iter_parts") else [rows]
    for part in parts:
        direct = getattr(part, "long_columns", None)
        found = direct(grouped) if direct is not None else None
        if found is None:
            _long_rows(part.rows() if hasattr(part, "rows") else part, grouped, fallback, columns)
        else:
            for name in names:
                columns[name].extend(found[name])
    return names, {name: columns[name] for name in names}


def long_table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The long form: column names and one tuple per dataset row x feedback key."""
    names, columns = long_columns(rows)
    return names, list(zip(*(columns[name] for name in names), strict=True))


def wide_table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The wide form: column names and one tuple per dataset row."""
    grouped = _grouped(rows)
    keys: list[str] = []
    for found in _keys_by_evaluator(rows).values():
        keys.extend(k for k in found if k not in keys)
    fixed = [c for c in _WIDE_FIXED if grouped or c != "group"]
    names = fixed + [f"score:{k}" if k in _WIDE_FIXED else k for k in keys]
    out: list[tuple[Any, ...]] = []
    for row in rows:
        scores: dict[Any, Any] = {}
        for entry in row["evaluations"].values():
            for res in entry.get("results") or ():
                scores[str(res.get("key"))] = res.get("score")
        head: tuple[Any, ...] = (row["id"], row["index"])
        if grouped:
            head += (row.get("group"),)
        out.append((*head, row.get("status"), *(scores.get(k) for k in keys)))
    return names, out


def _table(result: EvaluationResult, wide: bool) -> tuple[list[str], dict[str, list[Any]]]:
    """The table of ``result`` as column names and ``{column: values}``."""
    if not isinstance(wide, bool):
        raise TypeError(f"wide must be True or False; got {show(wide)}")
    if not wide:
        failed = result.summary.get("pairs", {}).get("failed")
        names, columns = long_columns(result.rows, failed=None if failed is None else bool(failed))
        return names, {name: _utf8(values) for name, values in columns.items()}
    names, records = wide_table(result.rows)
    values = list(zip(*records, strict=True)) if records else [() for _ in names]
    return names, {name: _utf8(list(column)) for name, column in zip(names, values, strict=True)}


_ROW_FIELDS = ("inputs", "outputs", "reference_outputs", "extra")


def _with_rows(
    result: EvaluationResult, names: list[str], columns: dict[str, list[Any]]
) -> list[str]:
    """Add the rows' ``inputs``, ``outputs``, ``reference_outputs`` and ``extra`` to
    ``columns``, matched by ``index``, after ``index``; the new column names."""
    fields = {row["index"]: row for row in result.rows}
    for name in _ROW_FIELDS:
        columns[name] = [fields[i].get(name) for i in columns["index"]]
    at = names.index("index") + 1
    return [*names[:at], *_ROW_FIELDS, *names[at:]]


def to_pandas(result: EvaluationResult, *, wide: bool = False, with_rows: bool = False) -> Any:
    """``result`` as a ``pandas.DataFrame`` (long form, or wide with ``wide=True``); with
    ``with_rows=True`` also each row's ``inputs``, ``outputs``, ``reference_outputs`` and
    ``extra`` columns."""
    pd = require("pandas", "pandas", "EvaluationResult.to_pandas()")
    if not isinstance(with_rows, bool):
        raise TypeError(f"with_rows must be True or False; got {show(with_rows)}")
    with no_gc_pauses():
        names, columns = _table(result, wide)
        if with_rows:
            names = _with_rows(result, names, columns)
        return pd.DataFrame(columns, columns=names)


_AGGREGATE_COLUMNS = ("key", "type", "n", "mean", "ci_low", "ci_high")
_CORRECTED_COLUMNS = ("corrected_mean", "corrected_low", "corrected_high", "labelled")


def aggregates_frame(result: EvaluationResult) -> Any:
    """One row per feedback key: ``n``, ``mean`` and its interval, and with corrected figures
    (:meth:`EvaluationResult.corrected`) the ``corrected_*`` columns and the ``labelled`` count
    beside them (empty for keys without a correction)."""
    pd = require("pandas", "pandas", "EvaluationResult.to_pandas(aggregates=True)")
    corrected = any("corrected" in stats for stats in result.aggregates.values())
    names = [*_AGGREGATE_COLUMNS, *(_CORRECTED_COLUMNS if corrected else ())]
    records = []
    for key, stats in result.aggregates.items():
        ci = stats.get("ci95") or [None, None]
        record = [key, stats.get("type"), stats.get("count", 0), stats.get("mean"), *ci]
        if corrected:
            fixed = stats.get("corrected") or {}
            low, high = fixed.get("ci") or [None, None]
            record += [fixed.get("mean"), low, high, fixed.get("labelled")]
        records.append(record)
    return pd.DataFrame(records, columns=names)


# --------------------------------------------------------------------------- typed columns


def _json(value: Any) -> str:
    """``value`` as JSON text a UTF-8 table can hold (lone surrogates as U+FFFD)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    except TypeError:  # keys of mixed types cannot be sorted: keep their order
        text = json.dumps(value, ensure_ascii=False, default=str)
    return replace_surrogates(text)


def _utf8(values: list[Any]) -> list[Any]:
    """``values`` with lone surrogates in its strings replaced by U+FFFD (a judge can answer half
    an emoji; UTF-8 tables cannot hold it). One scan of the column when there is none."""
    texts = [v for v in values if isinstance(v, str)]
    if not texts or first_surrogate("".join(texts)) is None:
        return values
    return [replace_surrogates(v) if isinstance(v, str) else v for v in values]


def _typed(values: list[Any]) -> list[Any]:
    """One Arrow type for a column of scores: bools, else floats, else text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {bool}:
        return values
    if kinds <= {bool, int, float}:
        return [None if v is None else float(v) for v in values]
    return _text(values)


def _text(values: list[Any]) -> list[Any]:
    # Strings come from _table, already made UTF-8 safe; _json makes its own text safe.
    return [None if v is None else v if isinstance(v, str) else _json(v) for v in values]


def typed_columns(result: EvaluationResult, wide: bool) -> dict[str, list[Any]]:
    """The table as ``{column: values}`` with one Arrow-compatible type per column."""
    names, columns = _table(result, wide)
    return _typed_columns(names, columns, set(names) - set(_WIDE_FIXED) if wide else {"score"})


def _typed_columns(
    names: list[str], columns: dict[str, list[Any]], scores: set[str], *, floats: bool = False
) -> dict[str, list[Any]]:
    for name, values in columns.items():
        if name in scores:
            typed = _typed(values)
            if floats and typed is values and any(v is not None for v in values):
                typed = [None if v is None else float(v) for v in values]  # booleans as 1.0/0.0
            columns[name] = typed
        elif name == "cost":
            columns[name] = [None if v is None else float(v) for v in values]
        elif name in _TEXT_COLUMNS:
            columns[name] = _text(values)
    return columns


def _arrow(columns: dict[str, list[Any]]) -> Any:
    pa = require("pyarrow", "parquet", "EvaluationResult.to_parquet()")
    types = {
        "index": pa.int64(),
        "tokens": pa.int64(),
        "cost": pa.float64(),
        **{name: pa.string() for name in _TEXT_COLUMNS},
    }
    return pa.table(
        {
            name: pa.array(values, type=types.get(name) or _score_type(pa, values))
            for name, values in columns.items()
        }
    )


def to_arrow(result: EvaluationResult, *, wide: bool = False) -> Any:
    """``result`` as a ``pyarrow.Table`` with the run's summary in its schema metadata."""
    table = _arrow(typed_columns(result, wide))
    summary = _json(result.to_dict())
    return table.replace_schema_metadata({"openevals": summary})


def rows_arrow(rows: Sequence[dict[str, Any]]) -> Any:
    """The long form of result rows as a ``pyarrow.Table`` whose ``score`` column is a float
    (booleans as 1.0/0.0) whenever the scores are numbers or booleans, so that tables written
    for parts of one run (a Ray worker's batches) share one schema."""
    names, columns = long_columns(rows)
    safe = {name: _utf8(values) for name, values in columns.items()}
    return _arrow(_typed_columns(names, safe, {"score"}, floats=True))


def _score_type(pa: Any, values: list[Any]) -> Any:
    return None if any(v is not None for v in values) else pa.float64()


def to_polars(result: EvaluationResult, *, wide: bool = False) -> Any:
    """``result`` as a ``polars.DataFrame`` (long form, or wide with ``wide=True``)."""
    pl = require("polars", "polars", "EvaluationResult.to_polars()")
    return pl.from_arrow(to_arrow(result, wide=wide).replace_schema_metadata(None))


def atomic_write(path: str | os.PathLike[str], write: Any) -> Path:
    """Call ``write(temporary_path)``, then rename the file over ``path``; on any failure the
    temporary file is removed and ``path`` is left as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".partial", dir=target.parent
    )
    os.close(fd)
    try:
        write(temporary)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return target


def to_parquet(
    result: EvaluationResult, path: str | os.PathLike[str], *, wide: bool = False
) -> Path:
    """Write ``result`` to a Parquet file at ``path`` (atomically); returns the path."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file path (str or os.PathLike); got {type(path).__name__}")
    pq = require("pyarrow.parquet", "parquet", "EvaluationResult.to_parquet()")
    table = to_arrow(result, wide=wide)
    return atomic_write(path, lambda temporary: pq.write_table(table, temporary))
