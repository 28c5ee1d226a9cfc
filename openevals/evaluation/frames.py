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
import gc
import importlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openevals._repr import show
from openevals.evaluation.sources import require

if TYPE_CHECKING:
    from openevals.evaluation.result import EvaluationResult

__all__ = [
    "LONG_COLUMNS",
    "long_table",
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


def long_table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The long form: column names and one tuple per dataset row x feedback key."""
    grouped = _grouped(rows)
    fallback = _keys_by_evaluator(rows) if any(r.get("status") == "error" for r in rows) else {}
    out: list[tuple[Any, ...]] = []
    add = out.append
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
            if results:
                for res in results:
                    add((*head, name, res["key"], res["score"], res.get("comment"), *tail))
            else:
                for key in fallback.get(name) or [name]:
                    add((*head, name, key, None, None, *tail))
    return [c for c in LONG_COLUMNS if grouped or c != "group"], out


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


def _table(result: EvaluationResult, wide: bool) -> tuple[list[str], list[tuple[Any, ...]]]:
    if not isinstance(wide, bool):
        raise TypeError(f"wide must be True or False; got {show(wide)}")
    return wide_table(result.rows) if wide else long_table(result.rows)


@contextlib.contextmanager
def _no_gc_pauses() -> Iterator[None]:
    """Build millions of tuples without cyclic-GC passes over the result's (acyclic) records:
    each pass would walk every record still alive, for no garbage."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def to_pandas(result: EvaluationResult, *, wide: bool = False) -> Any:
    """``result`` as a ``pandas.DataFrame`` (long form, or wide with ``wide=True``)."""
    pd = require("pandas", "pandas", "EvaluationResult.to_pandas()")
    with _no_gc_pauses():
        names, records = _table(result, wide)
        return pd.DataFrame.from_records(records, columns=names)


# --------------------------------------------------------------------------- typed columns


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def _typed(values: list[Any]) -> list[Any]:
    """One Arrow type for a column of scores: bools, else floats, else text."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {bool}:
        return values
    if kinds <= {bool, int, float}:
        return [None if v is None else float(v) for v in values]
    return [None if v is None else v if isinstance(v, str) else _json(v) for v in values]


def _text(values: list[Any]) -> list[Any]:
    return [None if v is None else v if isinstance(v, str) else _json(v) for v in values]


def typed_columns(result: EvaluationResult, wide: bool) -> dict[str, list[Any]]:
    """The table as ``{column: values}`` with one Arrow-compatible type per column."""
    names, records = _table(result, wide)
    columns = (
        {name: list(values) for name, values in zip(names, zip(*records))}  # noqa: B905
        if records
        else {name: [] for name in names}
    )
    scores = set(names) - set(_WIDE_FIXED) if wide else {"score"}
    for name, values in columns.items():
        if name in scores:
            columns[name] = _typed(values)
        elif name == "cost":
            columns[name] = [None if v is None else float(v) for v in values]
        elif name in _TEXT_COLUMNS:
            columns[name] = _text(values)
    return columns


def to_arrow(result: EvaluationResult, *, wide: bool = False) -> Any:
    """``result`` as a ``pyarrow.Table`` with the run's summary in its schema metadata."""
    pa = require("pyarrow", "parquet", "EvaluationResult.to_parquet()")
    columns = typed_columns(result, wide)
    types = {
        "index": pa.int64(),
        "tokens": pa.int64(),
        "cost": pa.float64(),
        **{name: pa.string() for name in _TEXT_COLUMNS},
    }
    table = pa.table(
        {
            name: pa.array(values, type=types.get(name) or _score_type(pa, values))
            for name, values in columns.items()
        }
    )
    summary = _json(result.to_dict())
    return table.replace_schema_metadata({"openevals": summary})


def _score_type(pa: Any, values: list[Any]) -> Any:
    return None if any(v is not None for v in values) else pa.float64()


def to_polars(result: EvaluationResult, *, wide: bool = False) -> Any:
    """``result`` as a ``polars.DataFrame`` (long form, or wide with ``wide=True``)."""
    require("polars", "polars", "EvaluationResult.to_polars()")
    pl = importlib.import_module("polars")
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
