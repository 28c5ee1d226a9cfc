"""Data where users keep it: DataFrames, Parquet, Hugging Face and LangSmith datasets as rows.

:func:`openevals.data.rows.iter_rows` (what ``evaluate``, ``aevaluate``, ``calibrate`` and
the ``openevals`` command read rows with) asks :func:`open_source` first; every source here then
yields plain row dicts that go through the same normalisation, ids and duplicate-id check as a
list of dicts. Accepted, besides lists of dicts and JSONL/JSON/CSV/TSV files:

* a **pandas** or **polars** ``DataFrame``, a **pyarrow** ``Table`` or ``RecordBatch``: one row
  per table row; columns map as in :mod:`.columns` (dotted names, JSON cells, missing values);
* **Parquet**: a file (``.parquet``, ``.pq``, ``.parq``), a directory of them (read in sorted
  order, recursively) or a glob (``"data/*.parquet"``), read through pyarrow in record batches,
  so a large file never sits in memory as a whole;
* a Hugging Face ``datasets.Dataset`` or ``IterableDataset`` (read in batches; streamed datasets
  stay streamed);
* **traces**: an OTLP file named ``*.otlp.json``, ``*.otlp.jsonl``, ``*.otlp.pb`` or
  ``*.otlp.binpb``, or :func:`openevals.traces.read_traces` (any file, in-process spans, options);
  one row per trace or agent span, see :mod:`openevals.traces`;
* a **LangSmith** dataset: ``"langsmith://NAME"`` (options ``?split=test`` - repeatable - and
  ``&version=TAG-or-ISO-time``), :func:`langsmith_dataset`, or an iterable of LangSmith
  ``Example`` objects. See :mod:`.langsmith_source`.

No library is imported until such an object or path is passed; a missing one raises an
``ImportError`` naming the extra to install (``openevals-suite[pandas]``, ``[polars]``, ``[parquet]``,
``[datasets]``).
"""

from __future__ import annotations

import glob
import importlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.data.columns import ColumnPlan, Unreadable, plan_columns

__all__ = [
    "PARQUET_SUFFIXES",
    "TRACE_SUFFIXES",
    "Source",
    "library_kind",
    "parquet_files",
]

PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
"""File suffixes read as Parquet."""

TRACE_SUFFIXES = (".otlp.json", ".otlp.jsonl", ".otlp.pb", ".otlp.binpb")
"""File name endings read as OTLP traces (:mod:`openevals.traces`)."""

_BATCH_ROWS = 4096
_GLOB_CHARS = ("*", "?", "[")


@dataclass(frozen=True)
class Source:
    """An opened data source: ``records()`` streams raw row dicts. ``name`` is what errors call
    the source (a file path, ``"pandas DataFrame"``, ``"langsmith://NAME"``)."""

    name: str
    records: Callable[[], Iterator[Any]]
    known: Known | None = None
    """For Arrow-backed sources: which of the records yielded so far are known to be storable
    as JSON without checking them (see :class:`Known`)."""
    fields: frozenset[str] | None = None
    """The row fields its records can have (a table's columns, mapped), when known on opening."""


class Known:
    """The records of an Arrow-backed source that are storable as JSON by construction: those of
    batches taken as they are (UTF-8 text, integers, booleans, floats that are not NaN; nothing
    decoded from JSON text), so the runner need not encode them to find out."""

    def __init__(self) -> None:
        self.yielded = 0
        self._unsure: list[tuple[int, int]] = []  # record ranges of other batches, in order

    def add(self, count: int, *, sure: bool) -> None:
        if not sure:
            self._unsure.append((self.yielded, self.yielded + count))
        self.yielded += count

    def storable(self, start: int, stop: int) -> bool:
        """Are records ``start`` to ``stop - 1`` (yielded already) all storable by construction?"""
        while self._unsure and self._unsure[0][1] <= start:
            self._unsure.pop(0)  # ranges before the reader's position are not asked about again
        return stop <= self.yielded and not any(a < stop and start < b for a, b in self._unsure)


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import ``module`` for ``what``, or raise an ``ImportError`` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"{what} needs the {show(module.split('.')[0])} package, which is not installed; "
            f"install it with `pip install 'openevals-suite[{extra}]'`"
        ) from None


# --------------------------------------------------------------------------- detection


def library_kind(data: Any) -> str | None:
    """Which library object ``data`` is, by its type's module (nothing is imported to tell)."""
    kind = type(data)
    root, name = kind.__module__.split(".")[0], kind.__name__
    if root == "pandas" and name == "DataFrame":
        return "pandas"
    if root == "polars" and name == "DataFrame":
        return "polars"
    if root == "polars" and name == "LazyFrame":
        raise TypeError(
            "data: got a polars LazyFrame; collect it first (`lazy_frame.collect()`), or write it "
            "to Parquet (`sink_parquet`) and pass the file path to stream it"
        )
    if root == "pyarrow" and name in ("Table", "RecordBatch"):
        return "arrow"
    if root == "datasets" and name in ("Dataset", "IterableDataset"):
        return "hf"
    if root == "datasets" and name in ("DatasetDict", "IterableDatasetDict"):
        raise TypeError(
            f"data: got a Hugging Face {name} with the splits {show(sorted(data))}; pass one "
            "split, for example `dataset['test']`"
        )
    if root == "pandas" and name == "Series":
        raise TypeError(
            "data: got a pandas Series; pass a DataFrame with 'inputs', 'outputs' and "
            "'reference_outputs' columns (for example `series.to_frame('outputs')`)"
        )
    return None


def text_path(data: Any) -> str | None:
    if isinstance(data, os.PathLike):
        text = os.fspath(data)
        return text if isinstance(text, str) else None
    return data if isinstance(data, str) else None


def parquet_files(data: Any) -> list[Path] | None:
    """The Parquet files ``data`` names (a file, a directory or a glob), or ``None`` if it names
    none of those.

    Raises:
        FileNotFoundError: a Parquet path that does not exist, or a directory or glob that holds
            no Parquet file.
        ValueError: a glob matching files that are not Parquet.
    """
    text = text_path(data)
    if text is None or text.startswith("langsmith://"):
        return None
    path = Path(text)
    if path.suffix.lower() in PARQUET_SUFFIXES and not any(c in text for c in _GLOB_CHARS):
        if not path.exists():
            raise FileNotFoundError(f"data: no such file {show(text)}")
        if path.is_file():
            return [path]
    if path.is_dir():
        found = sorted(
            p for p in path.rglob("*") if p.suffix.lower() in PARQUET_SUFFIXES and p.is_file()
        )
        if not found:
            raise FileNotFoundError(
                f"data: the directory {show(text)} holds no Parquet files "
                f"({', '.join('*' + s for s in PARQUET_SUFFIXES)})"
            )
        return found
    if any(c in text for c in _GLOB_CHARS) and not path.exists():
        matched = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
        if not matched:
            raise FileNotFoundError(f"data: no file matches the pattern {show(text)}")
        others = [str(p) for p in matched if p.suffix.lower() not in PARQUET_SUFFIXES]
        if others:
            raise ValueError(
                f"data: the pattern {show(text)} matches files that are not Parquet "
                f"({show(others[:3], PATH_LIMIT)}); patterns are read as Parquet datasets - "
                "narrow it (for example '*.parquet')"
            )
        return matched
    return None


# --------------------------------------------------------------------------- shared checks


def _check_ids(ids: Iterable[Any], source: str) -> None:
    """``ValueError`` naming the first repeated id (as row id text); missing ids are skipped."""
    seen: dict[str, int] = {}
    for index, value in enumerate(ids):
        if value is None or value == "" or (isinstance(value, float) and value != value):
            continue
        key = str(value)
        first = seen.setdefault(key, index)
        if first != index:
            raise ValueError(
                f"{source}: rows {first} and {index} share the id {show(key)} (column 'id'); row "
                "ids must be unique (drop the 'id' column to identify rows by their example)"
            )


def _zip_records(plan: ColumnPlan, columns: Sequence[Sequence[Any]]) -> Iterator[Any]:
    return _records(plan, zip(*columns))  # noqa: B905 - columns of one table have one length


def _records(plan: ColumnPlan, rows: Iterable[Sequence[Any]]) -> Iterator[Any]:
    """The row dicts of a table's rows (cells in column order); a row with a cell that has no
    plain form is an :class:`~.rows.Unreadable` naming the column (the runner records it as an
    error row; a reader that is not the runner's raises it as a ``TypeError``)."""
    record = plan.record
    for values in rows:
        try:
            yield record(values)
        except TypeError as exc:
            yield Unreadable(str(exc).removeprefix(f"{plan.source}: "))


# --------------------------------------------------------------------------- pandas / polars


_PANDAS_BAD_KINDS = {
    "c": "complex numbers",
    "m": "durations (timedelta)",
    "S": "bytes",
    "V": "raw bytes",
}


def pandas_source(df: Any) -> Source:
    require("pandas", "pandas", "a pandas DataFrame")
    name = "pandas DataFrame"
    plan = plan_columns(df.columns, name)
    for column, dtype in df.dtypes.items():
        bad = _PANDAS_BAD_KINDS.get(getattr(dtype, "kind", "O"))
        if bad is not None:
            raise TypeError(
                f"{name}: column {show(column)} has dtype {dtype} ({bad}), which has no plain form "
                "for an evaluator; convert it (for example `df[col].astype(str)`) or drop it"
            )
    if "id" in plan.names:
        _check_ids(df["id"].tolist(), name)
    return _frame_source(plan, lambda: df.itertuples(index=False, name=None))


def polars_source(df: Any) -> Source:
    pl = require("polars", "polars", "a polars DataFrame")
    name = "polars DataFrame"
    plan = plan_columns(df.columns, name)
    for column, dtype in df.schema.items():
        if dtype in (pl.Binary, pl.Duration) or isinstance(dtype, pl.Duration):
            raise TypeError(
                f"{name}: column {show(column)} has dtype {dtype}, which has no plain form for an "
                "evaluator; convert it (for example `pl.col(name).cast(pl.String)`) or drop it"
            )
    if "id" in plan.names:
        _check_ids(df.get_column("id").to_list(), name)
    return _frame_source(plan, df.iter_rows)


def _frame_source(plan: ColumnPlan, rows: Callable[[], Iterable[Sequence[Any]]]) -> Source:
    """A DataFrame's source: each pass maps the cells of ``rows()`` by ``plan``."""
    return Source(name=plan.source, records=lambda: _records(plan, rows()), fields=plan.fields)


# --------------------------------------------------------------------------- Arrow / Parquet


def unsupported_arrow_type(pa: ModuleType, kind: Any) -> Any:
    """The part of an Arrow type with no plain form (binary, durations, intervals), or None."""
    types = pa.types
    if (
        types.is_binary(kind)
        or types.is_large_binary(kind)
        or types.is_fixed_size_binary(kind)
        or types.is_duration(kind)
        or types.is_interval(kind)
        or (hasattr(types, "is_binary_view") and types.is_binary_view(kind))
    ):
        return kind
    if types.is_dictionary(kind):
        return unsupported_arrow_type(pa, kind.value_type)
    if types.is_struct(kind):
        for index in range(kind.num_fields):
            bad = unsupported_arrow_type(pa, kind.field(index).type)
            if bad is not None:
                return bad
        return None
    if types.is_map(kind):
        return unsupported_arrow_type(pa, kind.key_type) or unsupported_arrow_type(
            pa, kind.item_type
        )
    if hasattr(kind, "value_type"):  # list, large list, fixed-size list, list view
        return unsupported_arrow_type(pa, kind.value_type)
    return None


def check_arrow_schema(pa: ModuleType, schema: Any, source: str) -> ColumnPlan:
    """Plan the columns of an Arrow schema, rejecting types with no plain form."""
    plan = plan_columns(schema.names, source)
    for field in schema:
        bad = unsupported_arrow_type(pa, field.type)
        if bad is not None:
            raise TypeError(
                f"{source}: column {show(field.name)} has type {field.type} (holding {bad}), which "
                "has no plain form for an evaluator; convert it (for example to a string) or "
                "drop it"
            )
    return plan


def arrow_source(table: Any) -> Source:
    pa = require("pyarrow", "parquet", "a pyarrow Table")
    name = f"pyarrow {type(table).__name__}"
    plan = check_arrow_schema(pa, table.schema, name)
    if "id" in plan.names:
        _check_ids(table.column("id").to_pylist(), name)

    def records() -> Iterator[dict[str, Any]]:
        batches = (
            table.to_batches(max_chunksize=_BATCH_ROWS) if hasattr(table, "to_batches") else [table]
        )
        return itertools.chain.from_iterable(arrow_records(plan, b, known) for b in batches)

    known = Known()
    return Source(name=name, records=records, known=known, fields=plan.fields)


def open_parquet(path: Path) -> Any:
    pa = require("pyarrow", "parquet", "Reading Parquet")
    pq = importlib.import_module("pyarrow.parquet")
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(
            f"{show(str(path))} is not a readable Parquet file ({type(exc).__name__}: {exc}); "
            "it may be truncated or corrupt - write it again"
        ) from None


def parquet_batches(path: Path, plan: ColumnPlan, known: Known | None = None) -> Iterator[Any]:
    """Stream the row dicts of one Parquet file, one record batch in memory at a time, mapped by
    ``plan`` (the file's :func:`check_arrow_schema`, made once when the dataset was opened).

    Raises:
        ValueError: the file is corrupt or truncated (naming it), or has a column layout the
            mapping rejects.
        TypeError: a column type with no plain form.
    """
    pa = require("pyarrow", "parquet", "Reading Parquet")
    batches = open_parquet(path).iter_batches(batch_size=_BATCH_ROWS)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as exc:
            raise ValueError(
                f"{show(str(path))}: cannot read its data ({type(exc).__name__}: {exc}); the "
                "file is truncated or corrupt - write it again"
            ) from None
        yield from arrow_records(plan, batch, known)


_DECODED_START = r"^[\s\x0b\x1c-\x1f\x{85}\p{Z}{\[]"


def _as_is(pa: ModuleType, pc: ModuleType, column: Any) -> bool:
    """Does every cell of an Arrow column map to itself (no missing value, no JSON text to
    decode)? Then the column goes into the rows as ``to_pylist()`` gives it."""
    if column.null_count:
        return False
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        # Text that starts with a bracket or a space may hold JSON: it is decoded cell by cell.
        # (the class is exactly the first characters ``str.isspace()`` or "{[" accept)
        return not pc.any(pc.match_substring_regex(column, _DECODED_START)).as_py()
    if pa.types.is_integer(kind) or pa.types.is_boolean(kind):
        return True
    if pa.types.is_floating(kind):
        return not pc.any(pc.is_nan(column)).as_py()
    return False


def arrow_records(plan: ColumnPlan, batch: Any, known: Known | None = None) -> list[Any]:
    """The row dicts of one Arrow record batch (or table), mapped by ``plan``.

    A batch of top-level columns whose cells all map to themselves (checked per column, in
    Arrow) is zipped into dicts directly, and ``known`` notes its records as storable; any other
    goes cell by cell through :meth:`ColumnPlan.record`. Both give the same rows.
    """
    columns = batch.columns
    if all(path is None for path in plan.paths):
        pa = importlib.import_module("pyarrow")
        pc = importlib.import_module("pyarrow.compute")
        if all(_as_is(pa, pc, column) for column in columns):
            values = [column.to_pylist() for column in columns]
            if known is not None:
                known.add(batch.num_rows, sure=True)
            return list(map(dict, map(zip, itertools.repeat(plan.names), zip(*values))))  # noqa: B905
    if known is not None:
        known.add(batch.num_rows, sure=False)
    return list(_zip_records(plan, [column.to_pylist() for column in columns]))


def parquet_source(text: str, files: list[Path]) -> Source:
    pa = require("pyarrow", "parquet", "Reading Parquet")
    # Corrupt footers fail now; each file's columns are planned here, once, then rows stream.
    plans = [check_arrow_schema(pa, open_parquet(path).schema_arrow, str(path)) for path in files]
    fields = frozenset[str]().union(*(plan.fields for plan in plans))
    known = Known()

    def records() -> Iterator[dict[str, Any]]:
        return itertools.chain.from_iterable(
            parquet_batches(path, plan, known=known)
            for path, plan in zip(files, plans)  # noqa: B905 - same length
        )

    return Source(name=text, records=records, known=known, fields=fields)


# --------------------------------------------------------------------------- Hugging Face


def hf_source(dataset: Any) -> Source:
    datasets = require("datasets", "datasets", "a Hugging Face dataset")
    pa = require("pyarrow", "datasets", "a Hugging Face dataset")
    streamed = isinstance(dataset, datasets.IterableDataset)
    name = f"Hugging Face {'IterableDataset' if streamed else 'Dataset'}"
    features = dataset.features
    plan: ColumnPlan | None = None
    if features is not None:
        plan = check_arrow_schema(pa, features.arrow_schema, name)
        if not streamed and "id" in plan.names:
            _check_ids(dataset["id"], name)

    def records() -> Iterator[dict[str, Any]]:
        current = plan
        for batch in dataset.iter(batch_size=_BATCH_ROWS):
            if current is None:  # a streamed dataset whose columns are known only now
                current = plan_columns(batch.keys(), name)
            yield from _zip_records(current, [batch[column] for column in current.names])

    return Source(name=name, records=records, fields=None if plan is None else plan.fields)


def peek_iterable(data: Iterable[Any]) -> tuple[Any, Iterator[Any]] | None:
    """The first item of ``data`` and an iterator over all of it (``None`` when empty).

    A list is looked at, not consumed; a one-shot iterator is consumed by one item and chained.
    """
    if isinstance(data, Sequence):
        return (data[0], iter(data)) if len(data) else None
    iterator = iter(data)
    for first in iterator:
        return first, itertools.chain((first,), iterator)
    return None
