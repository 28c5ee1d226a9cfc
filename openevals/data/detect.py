"""Which reader a ``data=`` value goes to (tables, Parquet, Hugging Face, LangSmith, OTLP
traces; else :mod:`.rows` reads it). Rows flow one way: rows asks this module, which opens a
reader; the reader plans its columns once (:mod:`.columns`) and streams rows."""

from __future__ import annotations

from typing import Any

from openevals.data.langsmith_source import LangSmithDataset, open_examples, parse_uri
from openevals.data.sources import (
    TRACE_SUFFIXES,
    Source,
    arrow_source,
    hf_source,
    library_kind,
    open_parquet,
    pandas_source,
    parquet_files,
    parquet_source,
    polars_source,
    text_path,
)

__all__ = ["NOT_A_SOURCE", "count_source", "open_source"]

NOT_A_SOURCE: Any = object()
"""What :func:`count_source` returns for data it does not handle."""


_OPENERS = {
    "pandas": pandas_source,
    "polars": polars_source,
    "arrow": arrow_source,
    "hf": hf_source,
}
"""The opener of each :func:`library_kind`."""


def _is_traces(data: Any, text: str | None) -> bool:
    if text is not None:
        return text.lower().endswith(TRACE_SUFFIXES)
    return type(data).__module__ == "openevals.traces.source"


def open_source(data: Any) -> Source | None:
    """``data`` opened as a :class:`Source`, or ``None`` when it is a plain list / text file.

    Opening checks what can be checked before the first row: columns, column types, duplicate
    ids of in-memory tables, Parquet footers, that a LangSmith dataset exists.

    Raises:
        TypeError, ValueError, FileNotFoundError: bad input, naming the column or file.
        ImportError: the library the source needs is missing (naming the extra).
    """
    text = text_path(data)
    if _is_traces(data, text):
        from openevals.traces.source import TraceReader, read_traces

        reader = data if isinstance(data, TraceReader) else read_traces(data)
        return Source(name=reader.name, records=reader.__iter__)
    if text is not None:
        if text.startswith("langsmith://"):
            return parse_uri(text).open()
        files = parquet_files(text)
        return None if files is None else parquet_source(text, files)
    kind = library_kind(data)
    return _OPENERS[kind](data) if kind is not None else open_examples(data)


def count_source(data: Any) -> Any:
    """The number of rows of a source (``None`` if unknown), or :data:`NOT_A_SOURCE`.

    Reads no rows and makes no network call (Parquet footers only).
    """
    text = text_path(data)
    if _is_traces(data, text):
        return None
    if text is not None:
        if text.startswith("langsmith://"):
            return None
        try:
            files = parquet_files(text)
        except (OSError, ValueError):
            return None
        if files is None:
            return NOT_A_SOURCE
        try:
            return sum(open_parquet(f).metadata.num_rows for f in files)
        except ValueError:
            return None
    try:
        kind = library_kind(data)
    except TypeError:
        return None
    if kind is None:
        return None if isinstance(data, LangSmithDataset) else NOT_A_SOURCE
    if kind == "hf" and type(data).__name__ == "IterableDataset":
        return None
    return len(data)
