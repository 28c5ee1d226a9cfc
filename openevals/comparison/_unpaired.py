"""Rows two runs do not pair, looked at before anything is concluded from the rest.

Rows are paired by ``id``. A row without an ``id`` is identified by its example (inputs,
reference outputs, extra columns; :data:`~openevals.data.rows.ID_RULE`), so rows left
unpaired on both sides are usually the same examples with a changed reference or extra column,
or runs written under different id rules. :func:`same_inputs` counts the unpaired rows of each
side whose ``inputs`` equal those of an unpaired row of the other side (one to one, in order),
and :func:`unpaired_notes` says what that means and how to give rows stable ids.
:func:`unpaired_gate` is the ``allow_unpaired`` check of the CI gate.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.comparison._runs import RunScores, record_at

_KEY = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=repr)


class UnpairedRowsError(ValueError):
    """More rows are unpaired than the gate allows (``allow_unpaired``)."""


def refuse_parquet(source: Any, label: str) -> None:
    """``ValueError`` when ``source`` is the path of a Parquet file (``compare`` reads the
    ``output=`` JSONL records of a run; a Parquet table of results does not hold them)."""
    if not isinstance(source, (str, os.PathLike)):
        return
    try:
        with Path(source).open("rb") as handle:
            magic = handle.read(4)
    except OSError:
        return  # read_run says what is wrong with the path
    if magic == b"PAR1":
        raise ValueError(
            f"`{label}`: {show(str(source), PATH_LIMIT)} is a Parquet file; compare reads the "
            "JSONL file a run wrote with output= (or an EvaluationResult), which holds the rows' "
            "ids, outputs and every evaluation. Pass that file"
        )


def _inputs(run: RunScores, wanted: Sequence[str]) -> Iterator[str]:
    """The canonical JSON text of the ``inputs`` of each row of ``wanted`` that has any."""
    source = run.source
    if isinstance(source, (str, os.PathLike)):
        with Path(source).open("rb") as handle:
            for row_id in wanted:
                record = record_at(handle, run.row_offsets, run.ids[row_id], row_id)
                if isinstance(record, dict) and record.get("inputs") is not None:
                    yield _KEY.encode(record["inputs"])
        return
    want = set(wanted)
    for rec in source.rows:
        if str(rec.get("id")) in want and rec.get("inputs") is not None:
            yield _KEY.encode(rec["inputs"])


def same_inputs(base: RunScores, cand: RunScores, only_b: list[str], only_c: list[str]) -> int:
    """How many unpaired baseline rows have the inputs of an unpaired candidate row (each row
    matched at most once)."""
    if not only_b or not only_c:
        return 0
    found = Counter(_inputs(base, only_b))
    other = Counter(_inputs(cand, only_c))
    return sum((found & other).values())


def _rule(run: RunScores) -> Any:
    """The row-id rule named by the first ``run`` line of a run file (``None``: none named)."""
    source = run.source
    if not isinstance(source, (str, os.PathLike)):
        return "result"
    try:
        with Path(source).open("rb") as handle:
            first = json.loads(handle.readline() or b"{}")
    except (OSError, ValueError):
        return None
    return first.get("row_ids") if isinstance(first, dict) else None


def unpaired_notes(
    base: RunScores, cand: RunScores, only_b: list[str], only_c: list[str], matched: int
) -> list[str]:
    """What the comparison says about its unpaired rows (nothing when every row pairs)."""
    if not only_b and not only_c:
        return []
    notes = [
        f"{len(only_b)} row(s) only in the baseline and {len(only_c)} only in the candidate "
        "are not paired (listed in `only_in_baseline` / `only_in_candidate`); the comparison "
        "covers the paired rows only"
    ]
    if matched:
        notes.append(
            f"{matched} unpaired row(s) of the baseline have the same inputs as unpaired rows "
            "of the candidate: they look like the same examples with changed content (a "
            "changed reference output or extra column changes the id of a row without an "
            "`id`). Give the rows a stable `id` column in both runs so that they pair"
        )
    rules = {_rule(base), _rule(cand)} - {"result"}
    if len(rules) > 1:
        notes.append(
            "the two run files were written under different rules for row ids "
            f"({' and '.join(sorted(map(str, rules)))}; `None` is openevals 0.1.0's "
            "position-and-content hash): evaluate both with this version, or give rows an `id`"
        )
    return notes


def unpaired_gate(comparison: Any, allow_unpaired: float) -> None:
    """Raise :class:`UnpairedRowsError` (one line) when the share of unpaired rows of both runs
    is over ``allow_unpaired``; ``ValueError`` for a share outside [0, 1]."""
    if (
        isinstance(allow_unpaired, bool)
        or not isinstance(allow_unpaired, (int, float))
        or not 0 <= allow_unpaired <= 1
    ):
        raise ValueError(
            f"`allow_unpaired` must be a fraction between 0 and 1; got {show(allow_unpaired)}"
        )
    only_b, only_c = comparison.count_only_in_baseline, comparison.count_only_in_candidate
    total = comparison.rows_baseline + comparison.rows_candidate
    share = (only_b + only_c) / total if total else 0.0
    if share <= allow_unpaired:
        return
    matched = comparison.unpaired_same_inputs
    hint = (
        f"; {matched} of them have the same inputs as a row of the other run (the same examples "
        "with changed content?)"
        if matched
        else ""
    )
    raise UnpairedRowsError(
        f"{only_b + only_c} of {total} rows ({share:.0%}) are not paired ({only_b} only in the "
        f"baseline, {only_c} only in the candidate){hint}, more than allow_unpaired="
        f"{allow_unpaired:g} allows; give rows a stable `id` column in both runs, or allow the "
        f"share with --allow-unpaired {share:.2f} (allow_unpaired= in Python)"
    )
