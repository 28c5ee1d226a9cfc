"""Loading evaluation datasets: lists of dicts, JSONL, JSON, CSV and TSV files.

Every source becomes a stream of :class:`Row` objects. Files are read lazily (JSONL, CSV and TSV
line by line; JSON as a whole, since a JSON document cannot be streamed without a parser that is
not in the standard library), so a 100,000-row JSONL file never sits in memory as a whole.
DataFrames, Parquet, Hugging Face and LangSmith datasets come in through
:mod:`openevals.data.sources`, which :func:`iter_rows` and :func:`count_rows` ask first.

Row fields:

* ``inputs``, ``outputs``, ``reference_outputs`` - the evaluator arguments. graphrag-eval's TSV
  columns ``Question``, ``Actual answer`` and ``Reference answer`` map to them.
* ``id`` - optional. When present it identifies the row across runs (resuming an ``output=``
  file, pairing two runs in ``compare``); otherwise the id is made from what defines the example
  (:mod:`.row_ids`): its ``inputs``, ``reference_outputs`` and extra
  columns, never its ``outputs``, with repeats of one example told apart by their order.
* anything else - an *extra column*, passed to evaluators whose signature accepts it (for
  example ``context`` for a groundedness judge, or a ``template_id`` used by ``group_by``).

In CSV/TSV files a cell that holds a JSON object or array (``{...}`` / ``[...]``) is decoded, and
dotted column names build nested dicts: ``inputs.question`` and ``inputs.context`` become
``inputs = {"question": ..., "context": ...}`` (the LangSmith export convention).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import sys
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.data.columns import FIELDS, GRAPHRAG_COLUMNS, Unreadable, decode_cell, set_dotted
from openevals.data.row_ids import RowIds, outputs_of, row_fingerprint

__all__ = [
    "MISSING",
    "Row",
    "RowDataError",
    "RowReader",
    "Unreadable",
    "check_id",
    "count_rows",
    "field_at",
    "group_of",
    "iter_rows",
    "load_rows",
    "normalize_row",
    "placeholder",
    "raw_source",
    "resolve_path",
    "storable_check",
]

_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
}
_JSON_LIST_KEYS = ("examples", "rows", "data", "items")
_ID_KEY = "id"


@dataclass
class Row:
    """One dataset row, normalised.

    ``fields`` holds ``inputs`` / ``outputs`` / ``reference_outputs`` (only those present) and the
    extra columns; ``id`` is the explicit id or the content hash.
    """

    index: int
    id: str
    fields: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    """Why the row cannot be evaluated (a field that cannot be stored as JSON), else ``None``.
    Such a row's offending fields hold a bounded, escaped text in their place; the runner
    records each of its evaluations as a :class:`RowDataError` and goes on."""

    fp: str | None = field(default=None, repr=False, compare=False)

    @property
    def extra(self) -> dict[str, Any]:
        return {k: v for k, v in self.fields.items() if k not in FIELDS}

    def fingerprint(self) -> str:
        """:func:`row_fingerprint` of the row's fields (made once)."""
        if self.fp is None:
            self.fp = row_fingerprint(self.fields)
        return self.fp


# --------------------------------------------------------------------------- normalisation


class RowDataError(ValueError):
    """A row holds a value that cannot be stored as JSON text, or is not a row at all (recorded
    on the row's evaluations, naming its index and field; the run goes on)."""


# Rows are checked with the encoder the records use (``str()`` for non-JSON objects).
_CHECK = json.JSONEncoder(ensure_ascii=False, default=str)
_UNSTORABLE = (ValueError, RecursionError, TypeError)  # UnicodeEncodeError is a ValueError


def _why_unstorable(value: Any) -> str | None:
    """Why ``value`` cannot be written as UTF-8 JSON text, or ``None`` when it can."""
    try:
        _CHECK.encode(value).encode("utf-8")
    except RecursionError:
        return "it is nested too deeply to store as JSON"
    except UnicodeEncodeError:
        return "it holds text that is not valid Unicode (a lone surrogate such as '\\udce9')"
    except (ValueError, TypeError) as exc:
        if "Circular reference" in str(exc):
            return "it contains itself (a cycle)"
        return f"it cannot be stored as JSON ({exc})"
    return None


def storable_check(value: Any) -> None:
    """Raise what the record encoder raises when ``value`` cannot be stored as UTF-8 JSON text
    (a cycle, nesting too deep, a lone surrogate, a non-text key)."""
    text = _CHECK.encode(value)
    if not text.isascii():  # ASCII text holds no surrogate: nothing more to check
        text.encode("utf-8")


def placeholder(value: Any) -> str:
    """A bounded, escaped text standing for a value that cannot be stored as JSON."""
    from openevals._repr import show

    text = show(value).encode("utf-8", "backslashreplace").decode("utf-8")
    return f"<unstorable {type(value).__name__}: {text}>"


def _unstorable_row(
    index: int, raw: Mapping[str, Any], fields: dict[str, Any], source: str, ids: RowIds
) -> Row:
    """The error row standing for a row whose fields cannot be stored (see :attr:`Row.problem`)."""
    bad: list[str] = []
    safe: dict[str, Any] = {}
    for key, value in fields.items():
        reason = _why_unstorable(value)
        if reason is None:
            safe[key] = value
        else:
            bad.append(f"field {show(key)}: {reason}")
            safe[key] = placeholder(value)
    explicit = raw.get(_ID_KEY)
    if _why_unstorable(explicit) is not None:
        bad.insert(0, "its 'id' is not valid Unicode text, so the row is identified by content")
        explicit = None
    if explicit is None or explicit == "":
        row_id = ids.content_id(safe, strict=False)
    else:
        row_id = str(explicit)
    reasons = "; ".join(bad) or "the row cannot be stored as JSON"
    problem = (
        f"{source}: row {index} cannot be evaluated: {reasons}. Fix or remove the value; the "
        "other rows were evaluated"
    )
    return Row(index=index, id=row_id, fields=safe, problem=problem)


def normalize_row(raw: Any, index: int, *, source: str = "data", ids: RowIds | None = None) -> Row:
    """Turn one raw record into a :class:`Row` (copying it: the caller's dict is not touched);
    a row without an ``id`` gets the next id of ``ids`` (the source's :class:`RowIds`)."""
    if isinstance(raw, Unreadable):
        raise TypeError(f"{source}: row {index}: {raw.reason}")
    if not isinstance(raw, Mapping):
        raise TypeError(
            f"{source}: row {index} must be a dict (a JSON object) with 'inputs', 'outputs', "
            f"'reference_outputs' and optional extra fields; got {type(raw).__name__}"
        )
    fields: dict[str, Any] = {}
    renamed = {col: name for col, name in GRAPHRAG_COLUMNS.items() if col in raw}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise TypeError(
                f"{source}: row {index} has a non-string field name {show(key)}; field names "
                "must be strings"
            )
        if key == _ID_KEY:
            continue
        target = renamed.get(key)
        if target is not None and target not in raw:
            fields[target] = value
        else:
            fields[key] = value
    row_id = check_id(raw.get(_ID_KEY), index, source)
    if ids is None:
        ids = RowIds()
    try:
        # The example's encoding both makes the id and proves that part can be stored.
        storable_check(raw if row_id is not None else outputs_of(raw))
        if row_id is None:
            row_id = ids.content_id(raw)
    except _UNSTORABLE:
        return _unstorable_row(index, raw, fields, source, ids)
    return Row(index=index, id=row_id, fields=fields)


# --------------------------------------------------------------------------- file readers


def resolve_path(data: Any) -> Path | None:
    """``data`` as a file path when it is one (``str`` or ``os.PathLike``), else ``None``."""
    return Path(data) if isinstance(data, (str, os.PathLike)) else None


def _format_of(path: Path) -> str:
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"data: cannot tell the format of {show(str(path), PATH_LIMIT)} from its suffix "
            f"{show(path.suffix)}; accepted: {', '.join(sorted(_SUFFIXES))}, and Parquet "
            "(.parquet, .pq, .parq)"
        )
    return fmt


def _not_utf8(path: Path, lineno: int, exc: UnicodeDecodeError) -> ValueError:
    byte = exc.object[exc.start : exc.start + 1].hex()
    return ValueError(
        f"data: {show(str(path), PATH_LIMIT)} line {lineno} is not UTF-8 text (byte 0x{byte} at "
        f"column {exc.start + 1}); is it a binary file? Datasets must be UTF-8 JSONL, JSON, CSV or "
        "TSV"
    )


def _text_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """``(line number, line)`` of a UTF-8 text file (a leading BOM dropped, line ends kept);
    a line that is not UTF-8 raises ``ValueError`` naming the file and the line."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield lineno, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(path, lineno, exc) from None


def _read_jsonl(path: Path) -> Iterator[Any]:
    for lineno, line in _text_lines(path):
        text = line.strip()
        if not text:
            continue
        try:
            yield json.loads(text)
        except RecursionError:
            raise ValueError(
                f"data: {show(str(path), PATH_LIMIT)} line {lineno} is nested too deeply to "
                "read as JSON"
            ) from None
        except ValueError as exc:
            raise ValueError(
                f"data: {show(str(path), PATH_LIMIT)} line {lineno} is not valid JSON ({exc}); "
                "each line of a JSONL file must hold one JSON object"
            ) from None


def _read_json(path: Path) -> Iterator[Any]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, raw.count(b"\n", 0, exc.start) + 1, exc) from None
    try:
        doc = json.loads(text)
    except RecursionError:
        from openevals._cli_checks import deep_data_message

        raise ValueError(f"data: {deep_data_message(str(path))}") from None
    except ValueError as exc:
        raise ValueError(f"data: {show(str(path), PATH_LIMIT)} is not valid JSON ({exc})") from None
    if isinstance(doc, Mapping):
        for key in _JSON_LIST_KEYS:
            if isinstance(doc.get(key), list):
                doc = doc[key]
                break
        else:
            raise ValueError(
                f"data: {show(str(path), PATH_LIMIT)} holds a JSON object; expected a list of "
                f"rows, or an object with the rows under one of {list(_JSON_LIST_KEYS)}"
            )
    if not isinstance(doc, list):
        raise ValueError(
            f"data: {show(str(path), PATH_LIMIT)} must hold a JSON list of row objects; got "
            f"{type(doc).__name__}"
        )
    yield from doc


def _raise_csv_limit() -> None:
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return
        except OverflowError:
            limit //= 10


def _csv_cells(path: Path, delimiter: str) -> Generator[list[str], None, None]:
    """The cells of each line of a CSV / TSV file (no size limit on a cell)."""
    _raise_csv_limit()
    lines = _text_lines(path)
    try:
        yield from csv.reader((line for _, line in lines), delimiter=delimiter)
    finally:
        lines.close()


def _read_delimited(path: Path, delimiter: str) -> Iterator[dict[str, Any]]:
    reader = _csv_cells(path, delimiter)
    try:
        header = next(reader, None)
        if header is None:
            return
        names = [h.strip() for h in header]
        if len(set(names)) != len(names):
            raise ValueError(
                f"data: {show(str(path), PATH_LIMIT)} has duplicate column names: {show(names)}"
            )
        nested = [("." in n and n.split(".", 1)[0] in FIELDS) for n in names]
        for lineno, cells in enumerate(reader, start=2):
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) > len(names):
                raise ValueError(
                    f"data: {show(str(path), PATH_LIMIT)} row at line {lineno} has {len(cells)} "
                    f"cells but the header has {len(names)} columns"
                )
            record: dict[str, Any] = {}
            for name, is_nested, cell in zip(names, nested, cells, strict=False):
                value = decode_cell(cell)
                if is_nested:
                    set_dotted(record, name, value)
                else:
                    record[name] = value
            yield record
    finally:
        reader.close()


def _read_file(path: Path) -> Iterator[Any]:
    if not path.exists():
        raise FileNotFoundError(f"data: no such file {show(str(path), PATH_LIMIT)}")
    fmt = _format_of(path)
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    return _read_delimited(path, "," if fmt == "csv" else "\t")


# --------------------------------------------------------------------------- public entry points


def raw_source(data: Any) -> tuple[Iterator[Any], str, bool, Any, frozenset[str] | None]:
    """``(raw records, source name, owned, known, fields)`` of ``data``: a path or an iterable of
    dicts, or one of the sources of :mod:`openevals.data.sources` (DataFrames, Parquet, HF
    and LangSmith datasets). The records are not normalised yet (see :class:`RowReader`).
    ``owned``: the records are made by the reader (files, tables), not the caller's own objects;
    ``known``: for Arrow-backed sources, which records are storable by construction
    (:class:`~openevals.data.sources.Known`), else ``None``; ``fields``: a table's fields."""
    from openevals.data.detect import open_source
    from openevals.data.mapping import MappedData

    if isinstance(data, MappedData):  # map_columns(data, ...): fields unknown if renamed per record
        renamed = data.renamed()
        if renamed is not None:
            return raw_source(renamed)
        raw, source, _, _, _ = raw_source(data.data)
        return data.records(raw), source, True, None, None
    opened = open_source(data)  # DataFrames, Parquet, Hugging Face / LangSmith datasets
    if opened is not None:
        return iter(opened.records()), opened.name, True, opened.known, opened.fields
    path = resolve_path(data)
    if path is not None:
        # Fail on a missing file / unknown suffix now, not at the first ``next()``.
        raw_iter: Iterable[Any] = _read_file(path)
        source = str(path)
    elif isinstance(data, Mapping):
        raise TypeError(
            "data must be a list of row dicts or a path to a JSONL/JSON/CSV/TSV file; got a "
            "single dict (wrap it in a list)"
        )
    elif isinstance(data, (bytes, bytearray)):
        raise TypeError("data must be a list of row dicts or a file path; got bytes")
    elif isinstance(data, Iterable):
        raw_iter = data
        source = "data"
    else:
        raise TypeError(
            "data must be a list of row dicts or a path to a JSONL/JSON/CSV/TSV file; got "
            f"{type(data).__name__}"
        )
    return iter(raw_iter), source, path is not None, None, None


def check_id(value: Any, index: int, source: str) -> str | None:
    """A row's explicit ``id`` as text, or ``None`` when it has none (identified by content)."""
    if value is None or value == "":
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    raise TypeError(
        f"{source}: row {index} has an 'id' of type {type(value).__name__}; ids must be "
        "strings or integers"
    )


class RowReader:
    """The rows of ``data``, normalised one by one (iteration) or taken raw in blocks
    (:meth:`raw_block`, for the runner's columnar path); both share the row numbering, the
    content ids (:attr:`ids`: repeats of an example are numbered, so a content id is unique by
    construction) and the check that explicit ids are unique.
    """

    def __init__(self, data: Any) -> None:
        self._raw, self.source, self.owned, self._known, self.fields = raw_source(data)
        self.index = 0
        self.ids = RowIds()
        self._seen: dict[str, int] = {}

    def __iter__(self) -> Iterator[Row]:
        return self

    def __next__(self) -> Row:
        raw = next(self._raw)
        index = self.index
        self.index += 1
        return self.normalize(raw, index)

    def normalize(self, raw: Any, index: int) -> Row:
        """One raw record of this source as a :class:`Row` (its explicit id checked)."""
        row = normalize_row(raw, index, source=self.source, ids=self.ids)
        if isinstance(raw, Mapping) and raw.get(_ID_KEY) not in (None, ""):
            self.claim(row.id, index)
        return row

    def claim(self, row_id: str, index: int) -> None:
        """Record the explicit id ``row_id`` of row ``index``; ``ValueError`` if taken."""
        first = self._seen.setdefault(row_id, index)
        if first != index:
            raise ValueError(
                f"{self.source}: rows {first} and {index} share the id {show(row_id)}; row ids must "
                "be unique (remove the 'id' field to identify rows by their example)"
            )

    def claim_all(self, ids: Sequence[str], start: int) -> bool:
        """:meth:`claim` the ids of rows ``start, start + 1, ...`` at once when none of them is
        taken or repeated (returns ``True``); otherwise claim nothing and return ``False``."""
        if len(set(ids)) != len(ids) or not self._seen.keys().isdisjoint(ids):
            return False
        self._seen.update(zip(ids, range(start, start + len(ids)), strict=True))
        return True

    def known_storable(self, start: int, stop: int) -> bool:
        """Are the records ``start`` to ``stop - 1`` storable as JSON by construction (taken as
        they are from Arrow batches), so that nothing needs to check them?"""
        return self._known is not None and self._known.storable(start, stop)

    def raw_block(self, size: int) -> tuple[int, list[Any]]:
        """``(index of the first, records)``: up to ``size`` raw records, not normalised."""
        start = self.index
        block = list(itertools.islice(self._raw, size))
        self.index += len(block)
        return start, block


def iter_rows(data: Any) -> Iterator[Row]:
    """Stream :class:`Row` objects from ``data``: a path or an iterable of dicts, or one of the
    sources of :mod:`openevals.data.sources` (DataFrames, Parquet, Hugging Face and
    LangSmith datasets).

    Raises ``ValueError`` for duplicate explicit ids, naming both rows.
    """
    return RowReader(data)


def load_rows(data: Any) -> list[Row]:
    """All rows of ``data`` as a list (convenience for small datasets and tests)."""
    return list(iter_rows(data))


def count_rows(data: Any) -> int | None:
    """The number of rows ``data`` holds, or ``None`` when it cannot be known without consuming it.

    For files this is a quick pass over the file (no JSON decoding for JSONL).
    """
    from openevals.data.detect import NOT_A_SOURCE, count_source
    from openevals.data.mapping import MappedData

    if isinstance(data, MappedData):
        return count_rows(data.data)
    counted = count_source(data)  # the sources of openevals.data.sources
    if counted is not NOT_A_SOURCE:
        return counted  # type: ignore[no-any-return]
    path = resolve_path(data)
    if path is None:
        return len(data) if isinstance(data, Sized) else None
    if not path.exists():
        return None
    fmt = _format_of(path)
    if fmt == "jsonl":
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    if fmt == "json":
        return sum(1 for _ in _read_json(path))
    reader = _csv_cells(path, "," if fmt == "csv" else "\t")
    next(reader, None)
    return sum(1 for cells in reader if cells and any(c.strip() for c in cells))


# --------------------------------------------------------------------------- fields of a row

MISSING: Any = object()
"""What :func:`field_at` returns for a path the row does not have."""


def field_at(fields: Mapping[str, Any], path: str) -> Any:
    """A dotted path into a row's fields (``outputs.answer``, ``metadata.topic``, ``items.0``).

    Returns :data:`MISSING` when the row has no such field.
    """
    node: Any = fields
    for part in path.split("."):
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, Sequence) and not isinstance(node, str) and part.isdigit():
            index = int(part)
            if index >= len(node):
                return MISSING
            node = node[index]
        else:
            return MISSING
    return node


def group_of(fields: Mapping[str, Any], group_by: str) -> str | None:
    """The ``group_by`` value of a row (also looked up in ``inputs`` and ``metadata``), as text."""
    value = field_at(fields, group_by)
    if value is MISSING:
        for holder in ("inputs", "metadata"):
            value = field_at(fields, f"{holder}.{group_by}")
            if value is not MISSING:
                break
    if value is MISSING or value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
