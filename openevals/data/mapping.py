"""Column mapping on the data side: :func:`map_columns`.

``evaluate(map_columns(df, {"question": "inputs", "answer": "outputs", "ground_truth":
"reference_outputs"}), ...)`` reads ``df`` as if its columns had the names the evaluators take.
A target may be a field (``inputs``, ``outputs``, ``reference_outputs``, ``id``), a dotted path
that nests (``inputs.question``), or any other name (an extra column, e.g. ``context``). Columns
not named stay as they are. ``map_columns(data, "ragas")`` / ``"deepeval"`` maps the column names
those libraries use (:data:`PRESETS`), as many as the data has.

DataFrames (pandas, polars), Arrow tables and Hugging Face datasets are renamed through their
own ``rename`` methods (their fast paths stay); JSONL, JSON, CSV and TSV files and lists of dicts
are renamed record by record as they are read (the caller's dicts are not changed). A Parquet
file is checked for its columns before any mapping: read it as a table first
(``pyarrow.parquet.read_table(path)``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any

from openevals._repr import show
from openevals.data.columns import FIELDS, PRESETS, set_dotted
from openevals.data.sources import library_kind

__all__ = ["PRESETS", "MappedData", "map_columns"]


class MappedData:
    """A data source read with its columns renamed (made by :func:`map_columns`)."""

    def __init__(self, data: Any, columns: dict[str, str], *, preset: bool = False) -> None:
        self.data = data
        self.columns = columns
        self.preset = preset
        """Columns the data lacks are skipped (a preset), not refused."""

    def __repr__(self) -> str:
        return f"map_columns({type(self.data).__name__}, {show(self.columns)})"

    def renamed(self) -> Any:
        """The table renamed by its own library, or ``None`` for other sources."""
        kind = library_kind(self.data)
        if kind is None:
            return None
        names = _column_names(self.data, kind)
        mapping = self._present(names)
        if kind == "pandas":
            return self.data.rename(columns=mapping)
        if kind == "polars":
            return self.data.rename(mapping)
        if kind == "arrow":
            return self.data.rename_columns([mapping.get(n, n) for n in names])
        return self.data.rename_columns(mapping)  # a Hugging Face dataset

    def records(self, raw: Iterator[Any]) -> Iterator[Any]:
        """``raw`` records with their keys renamed (copies; non-dicts pass through)."""
        mapping: dict[str, str] | None = None
        for record in raw:
            if not isinstance(record, Mapping):
                yield record
                continue
            if mapping is None:
                mapping = self._present(list(record))
            out: dict[str, Any] = {}
            for key, value in record.items():
                target = mapping.get(key) if isinstance(key, str) else None
                if target is None:
                    out[key] = value
                else:
                    _put(out, target, value)
            yield out

    def _present(self, names: list[str], *, strict: bool = True) -> dict[str, str]:
        """The mapping of the columns ``names`` has; ``ValueError`` for a column it lacks."""
        missing = [name for name in self.columns if name not in names]
        if missing and strict and not self.preset:
            described = []
            for name in missing:
                close = difflib.get_close_matches(name, names, n=1)
                described.append(
                    show(name) + (f" (did you mean {show(close[0])}?)" if close else "")
                )
            raise ValueError(
                f"map_columns: the data has no column {', '.join(described)}; its columns: "
                f"{show(names[:20])}"
            )
        return {name: target for name, target in self.columns.items() if name in names}


def _put(record: dict[str, Any], target: str, value: Any) -> None:
    head, _, rest = target.partition(".")
    if rest and head in FIELDS:
        set_dotted(record, target, value)
    else:
        record[target] = value


def _column_names(table: Any, kind: str) -> list[str]:
    if kind == "hf":
        return list(table.column_names)
    return [str(name) for name in table.columns] if kind != "arrow" else list(table.column_names)


def map_columns(data: Any, columns: Mapping[str, str] | str) -> MappedData:
    """``data`` read with its columns renamed (see the module docs).

    Args:
        data: any source ``evaluate`` reads (a DataFrame, a file path, a list of dicts, ...).
        columns: ``{"column": "field"}``; or ``"ragas"`` / ``"deepeval"`` for those libraries'
            names (the ones the data has).

    Raises:
        TypeError: ``columns`` is not a dict of str -> str or a preset name.
        ValueError: an unknown preset; a target named twice; (when read) a column the data does
            not have, with the closest column names.
    """
    preset = False
    if isinstance(columns, str):
        if columns not in PRESETS:
            raise ValueError(
                f"map_columns: unknown preset {show(columns)}; presets: {show(sorted(PRESETS))}"
            )
        mapping, preset = dict(PRESETS[columns]), True
    elif isinstance(columns, Mapping):
        mapping = dict(columns)
    else:
        raise TypeError(
            "map_columns: `columns` must be a dict of column name -> field (e.g. {'answer': "
            "'outputs'}) or 'ragas' / 'deepeval'; got " + type(columns).__name__
        )
    for name, target in mapping.items():
        if not isinstance(name, str) or not isinstance(target, str) or not target:
            raise TypeError(
                "map_columns: `columns` must map column names (str) to field names (non-empty "
                f"str); got {show(name)}: {show(target)}"
            )
    if not preset:
        targets = list(mapping.values())
        twice = sorted({t for t in targets if targets.count(t) > 1})
        if twice:
            raise ValueError(
                f"map_columns: several columns map to {show(twice[0])}; map each to its own field "
                "(or to dotted paths such as 'inputs.question' and 'inputs.context')"
            )
    return MappedData(data, mapping, preset=preset)
