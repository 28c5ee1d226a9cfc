"""Step scoring for tool-using agents, after graphrag-eval's ``steps_score``.

The reference is a list of *levels*: each level is a list of steps that may run in any order,
after every step of the previous level. The answer is assumed to come from the outputs of the
last level, so the score is::

    steps_score = matched steps of the LAST reference level / number of steps in that level

A reference step matches an actual step when

* the names are equal,
* the actual step did not fail (its ``status`` is absent or ``"success"``),
* the outputs agree, compared according to the reference step's ``output_media_type``:
  ``application/sparql-results+json`` (rows of the reference's ``required_columns``, as a
  sequence when ``ordered`` is true and as a multiset otherwise; ASK results by their boolean),
  ``application/json`` (JSON equality; a list of row objects is compared as a table when the
  reference sets ``ordered`` or ``required_columns``), ``text/csv`` /
  ``text/tab-separated-values`` (tables with a header row), anything else as text;
* a reference step without an ``output`` is matched on its ``args`` instead, and with
  ``compare_args=True`` the ``args`` must be equal in every case.

Each actual step serves at most one reference step; the pairing is a maximum matching (so a
step that could match several references never blocks a better overall assignment), and among
maximum matchings the one using the latest actual steps is chosen.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._matching import max_weight_assignment
from openevals.types import EvaluatorResult, SimpleAsyncEvaluator, SimpleEvaluator
from openevals.utils import _arun_evaluator, _run_evaluator

__all__ = ["create_async_steps_evaluator", "create_steps_evaluator"]

SPARQL_RESULTS = "application/sparql-results+json"
JSON = "application/json"
CSV = "text/csv"
TSV = "text/tab-separated-values"
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_OK_STATUSES = (None, "success")


class _Unparsable(Exception):
    """An actual step's output cannot be read in the reference's media type (a mismatch)."""


# --------------------------------------------------------------------------- canonical values


def _canon(value: Any) -> Hashable:
    """A hashable form of a JSON value in which equal JSON values are equal.

    ``1`` and ``1.0`` are the same JSON number; ``true`` and ``1`` are not.
    """
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("num", int(value))
        return ("num", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, Mapping):
        return ("obj", tuple(sorted((str(k), _canon(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("arr", tuple(_canon(v) for v in value))
    return ("other", repr(value))


def _maybe_json(value: Any) -> Any:
    """Parse a JSON object/array given as text (tool arguments often are); else return as is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "["):
            try:
                return json.loads(text)
            except ValueError:
                return value
    return value


def _load_json(value: Any) -> Any:
    if isinstance(value, (str, bytes, bytearray)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise _Unparsable(f"not valid JSON ({exc})") from None
    return value


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class _Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[Hashable, ...], ...]


@dataclass(frozen=True)
class _AskResult:
    value: bool


def _rows_equal(
    reference: Sequence[tuple[Hashable, ...]], actual: Sequence[tuple[Hashable, ...]], ordered: bool
) -> bool:
    if len(reference) != len(actual):
        return False
    if ordered:
        return list(reference) == list(actual)
    return Counter(reference) == Counter(actual)


def _sparql_term(term: Any) -> Hashable:
    if not isinstance(term, Mapping):
        return _canon(term)
    kind = term.get("type")
    if kind == "typed-literal":
        kind = "literal"
    if kind == "bnode":
        # Blank-node labels are local to one result set; any blank node equals any other.
        return ("bnode",)
    datatype = term.get("datatype")
    if datatype == _XSD_STRING:
        datatype = None
    lang = term.get("xml:lang")
    if isinstance(lang, str):
        lang = lang.lower()
    return (kind, _canon(term.get("value")), datatype, lang)


def _sparql_parse(value: Any) -> tuple[list[str], list[Mapping[str, Any]]] | _AskResult:
    data = _load_json(value)
    if not isinstance(data, Mapping):
        raise _Unparsable(f"SPARQL results must be a JSON object; got {type(data).__name__}")
    if "boolean" in data:
        if not isinstance(data["boolean"], bool):
            raise _Unparsable("the 'boolean' of an ASK result must be true or false")
        return _AskResult(data["boolean"])
    head = data.get("head")
    results = data.get("results")
    bindings = results.get("bindings") if isinstance(results, Mapping) else None
    if not isinstance(bindings, list) or not all(isinstance(b, Mapping) for b in bindings):
        raise _Unparsable("SPARQL results need 'results': {'bindings': [ {...}, ... ]}")
    variables = head.get("vars", []) if isinstance(head, Mapping) else []
    if not isinstance(variables, list):
        raise _Unparsable("'head.vars' of SPARQL results must be a list")
    return [str(v) for v in variables], bindings


def _project(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], cell: Any
) -> tuple[tuple[Hashable, ...], ...]:
    return tuple(tuple(cell(row.get(c)) for c in columns) for row in rows)


def _csv_parse(value: Any, delimiter: str) -> tuple[list[str], list[dict[str, Any]]]:
    if not isinstance(value, str):
        raise _Unparsable(f"a CSV/TSV table must be text; got {type(value).__name__}")
    reader = csv.reader(io.StringIO(value.strip("\r\n")), delimiter=delimiter)
    lines = [line for line in reader if line]
    if not lines:
        raise _Unparsable("the table has no header row")
    header = [h.strip() for h in lines[0]]
    return header, [
        dict(zip(header, (c.strip() for c in line), strict=False)) for line in lines[1:]
    ]


def _text_cell(value: Any) -> Hashable:
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class _RefStep:
    level: int
    index: int
    name: str
    args: Hashable | None  # canonical args, None when the step has no args
    has_output: bool
    compare: Callable[[Any], bool]


@dataclass(frozen=True)
class _ActualStep:
    index: int
    step_id: Any
    name: str
    args: Hashable | None
    usable: bool  # not failed
    has_output: bool
    output: Any


def _where_ref(level: int, index: int) -> str:
    return f"reference_outputs[{level}][{index}]"


def _check_columns(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if (
        isinstance(value, str)
        or not isinstance(value, (list, tuple))
        or not value
        or not all(isinstance(c, str) for c in value)
    ):
        raise TypeError(
            f"{where}['required_columns'] must be a non-empty list of column names; got {value!r}"
        )
    return tuple(value)


def _sparql_comparator(
    output: Any, columns: tuple[str, ...] | None, ordered: bool, where: str
) -> Callable[[Any], bool]:
    try:
        parsed = _sparql_parse(output)
    except _Unparsable as exc:
        raise ValueError(f"{where}['output'] is not SPARQL results JSON: {exc}") from None
    if isinstance(parsed, _AskResult):
        expected = parsed.value

        def ask(actual: Any) -> bool:
            got = _sparql_parse(actual)
            return isinstance(got, _AskResult) and got.value == expected

        return ask
    variables, bindings = parsed
    if columns is None:
        columns = tuple(variables) or tuple(sorted({str(k) for b in bindings for k in b}))
    else:
        known = set(variables) | {str(k) for b in bindings for k in b}
        missing = [c for c in columns if c not in known]
        if missing:
            raise ValueError(
                f"{where}['required_columns'] names {missing!r}, which the reference output does "
                f"not have (its variables: {variables!r})"
            )
    table = _Table(columns, _project(bindings, columns, _sparql_term))

    def select(actual: Any) -> bool:
        got = _sparql_parse(actual)
        if isinstance(got, _AskResult):
            return False
        return _rows_equal(table.rows, _project(got[1], table.columns, _sparql_term), ordered)

    return select


def _json_comparator(
    output: Any, columns: tuple[str, ...] | None, ordered: bool | None, where: str
) -> Callable[[Any], bool]:
    try:
        reference = _load_json(output)
    except _Unparsable as exc:
        raise ValueError(f"{where}['output'] is not valid JSON: {exc}") from None
    as_table = (columns is not None or ordered is not None) and (
        isinstance(reference, list) and all(isinstance(r, Mapping) for r in reference)
    )
    if not as_table:
        expected = _canon(reference)
        return lambda actual: _canon(_load_json(actual)) == expected
    cols = columns or tuple(sorted({str(k) for row in reference for k in row}))
    rows = _project(reference, cols, _canon)

    def table(actual: Any) -> bool:
        got = _load_json(actual)
        if not isinstance(got, list) or not all(isinstance(r, Mapping) for r in got):
            return False
        return _rows_equal(rows, _project(got, cols, _canon), bool(ordered))

    return table


def _csv_comparator(
    output: Any, columns: tuple[str, ...] | None, ordered: bool, delimiter: str, where: str
) -> Callable[[Any], bool]:
    try:
        header, rows = _csv_parse(output, delimiter)
    except _Unparsable as exc:
        raise ValueError(f"{where}['output'] is not a table: {exc}") from None
    cols = columns or tuple(header)
    missing = [c for c in cols if c not in header]
    if missing:
        raise ValueError(
            f"{where}['required_columns'] names {missing!r}, which the reference table does not "
            f"have (its header: {header!r})"
        )
    expected = _project(rows, cols, _text_cell)

    def table(actual: Any) -> bool:
        got_header, got_rows = _csv_parse(actual, delimiter)
        if any(c not in got_header for c in cols):
            return False
        return _rows_equal(expected, _project(got_rows, cols, _text_cell), ordered)

    return table


def _text_comparator(output: Any) -> Callable[[Any], bool]:
    if isinstance(output, str):
        return lambda actual: isinstance(actual, str) and actual == output
    expected = _canon(output)
    return lambda actual: _canon(actual) == expected


def _prepare_ref_step(raw: Any, level: int, index: int) -> _RefStep:
    where = _where_ref(level, index)
    if not isinstance(raw, Mapping):
        raise TypeError(f"{where} must be a step dict with a 'name'; got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a non-empty string 'name'; got {name!r}")
    media_type = raw.get("output_media_type")
    if media_type is not None and not isinstance(media_type, str):
        raise TypeError(f"{where}['output_media_type'] must be a string; got {media_type!r}")
    ordered_raw = raw.get("ordered")
    if ordered_raw is not None and not isinstance(ordered_raw, bool):
        raise TypeError(f"{where}['ordered'] must be true or false; got {ordered_raw!r}")
    ordered = bool(ordered_raw)
    columns = _check_columns(raw.get("required_columns"), where)
    has_output = raw.get("output") is not None
    compare: Callable[[Any], bool] = _never
    if has_output:
        output = raw["output"]
        kind = (media_type or "").split(";")[0].strip().lower()
        if kind == SPARQL_RESULTS:
            compare = _sparql_comparator(output, columns, ordered, where)
        elif kind == JSON:
            compare = _json_comparator(output, columns, ordered_raw, where)
        elif kind in (CSV, TSV):
            compare = _csv_comparator(output, columns, ordered, "," if kind == CSV else "\t", where)
        else:
            compare = _text_comparator(output)
    args = _canon(_maybe_json(raw["args"])) if "args" in raw else None
    return _RefStep(level, index, name, args, has_output, compare)


def _never(actual: Any) -> bool:
    return False


def _prepare_actual_step(raw: Any, index: int) -> _ActualStep:
    where = f"outputs[{index}]"
    if not isinstance(raw, Mapping):
        raise TypeError(f"{where} must be a step dict with a 'name'; got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a non-empty string 'name'; got {name!r}")
    status = raw.get("status")
    args = _canon(_maybe_json(raw["args"])) if "args" in raw else None
    return _ActualStep(
        index=index,
        step_id=raw.get("id"),
        name=name,
        args=args,
        usable=status in _OK_STATUSES,
        has_output=raw.get("output") is not None,
        output=raw.get("output"),
    )


def _reference_levels(reference_outputs: Any) -> list[list[_RefStep]]:
    value = reference_outputs
    if isinstance(value, Mapping):
        for name in ("reference_steps", "steps"):
            if name in value:
                value = value[name]
                break
        else:
            raise ValueError(
                "`reference_outputs` is a dict, so it must hold the levels under "
                f"'reference_steps' (or 'steps'); got keys {sorted(map(str, value))!r}"
            )
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not value:
        raise TypeError(
            "`reference_outputs` must be a non-empty list of levels (lists of step dicts), a flat "
            "list of step dicts (one level), or a dict with 'reference_steps'; got "
            f"{type(value).__name__} {value!r}"[:300]
        )
    if all(isinstance(item, Mapping) for item in value):
        raw_levels: list[Any] = [value]
    elif all(isinstance(item, (list, tuple)) for item in value):
        raw_levels = list(value)
    else:
        raise TypeError(
            "`reference_outputs` mixes step dicts and levels; give either a list of levels "
            "(lists of step dicts) or one flat list of step dicts"
        )
    levels: list[list[_RefStep]] = []
    for level, raw_level in enumerate(raw_levels):
        if not raw_level:
            raise ValueError(
                f"reference_outputs[{level}] is an empty level; every level needs steps"
            )
        levels.append([_prepare_ref_step(s, level, i) for i, s in enumerate(raw_level)])
    return levels


def _actual_steps(outputs: Any) -> tuple[list[_ActualStep], str | None]:
    """The actual steps, and the target's error message when it reported a failure."""
    value = outputs
    if isinstance(value, Mapping):
        for name in ("actual_steps", "steps"):
            if name in value:
                value = value[name]
                break
        else:
            if value.get("status") == "error":
                return [], str(value.get("error") or "the target reported status 'error'")
            raise ValueError(
                "`outputs` is a dict, so it must hold the steps under 'actual_steps' (or 'steps'), "
                f"or report status 'error'; got keys {sorted(map(str, value))!r}"
            )
    if value is None:
        value = []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise TypeError(
            "`outputs` must be a list of step dicts (name, args, output, status, id) or a dict "
            f"with 'actual_steps'; got {type(value).__name__}"
        )
    return [_prepare_actual_step(s, i) for i, s in enumerate(value)], None


def _is_match(ref: _RefStep, actual: _ActualStep, compare_args: bool) -> bool:
    if not actual.usable or ref.name != actual.name:
        return False
    if (compare_args or not ref.has_output) and ref.args is not None and ref.args != actual.args:
        return False
    if not ref.has_output:
        return True
    if not actual.has_output:
        return False
    try:
        return ref.compare(actual.output)
    except _Unparsable:
        return False


def _match_level(
    level: list[_RefStep], actual: list[_ActualStep], compare_args: bool
) -> list[int | None]:
    """Maximum matching of reference steps to actual steps, preferring later actual steps."""
    n_ref, n_act = len(level), len(actual)
    if n_act == 0:
        return [None] * n_ref
    edges = [[_is_match(r, a, compare_args) for a in actual] for r in level]
    # Weight 1 per matched pair plus a tie-break bonus (< 1 in total) for later actual steps:
    # the optimum is a maximum matching and, among those, the one using the latest steps.
    scale = (n_ref + 1) * (n_act + 1)
    weights = [
        [(1.0 + (j + 1) / scale) if edges[i][j] else 0.0 for j in range(n_act)]
        for i in range(n_ref)
    ]
    assigned: list[int | None] = [None] * n_ref
    for i, j in max_weight_assignment(weights):
        if edges[i][j]:
            assigned[i] = j
    return assigned


@dataclass(frozen=True)
class _StepsScorer:
    compare_args: bool

    def score(
        self, *, outputs: Any = None, reference_outputs: Any = None
    ) -> tuple[float, str, dict[str, Any]]:
        levels = _reference_levels(reference_outputs)
        actual, target_error = _actual_steps(outputs)
        last = levels[-1]
        assigned = _match_level(last, actual, self.compare_args)
        matches = [
            {
                "reference_index": ref.index,
                "reference_name": ref.name,
                "actual_index": j,
                "actual_id": actual[j].step_id,
            }
            for ref, j in zip(last, assigned, strict=True)
            if j is not None
        ]
        matched = len(matches)
        metadata: dict[str, Any] = {
            "matches": matches,
            "matched": matched,
            "reference_level": len(levels) - 1,
            "reference_steps": len(last),
            "actual_steps": len(actual),
            "unmatched_reference": [
                r.index for r, j in zip(last, assigned, strict=True) if j is None
            ],
        }
        if target_error is not None:
            metadata["target_error"] = target_error
            comment = f"the target reported an error, so no step matched: {target_error}"
        else:
            comment = (
                f"{matched} of {len(last)} step(s) of the last reference level matched an "
                "actual step"
            )
        return matched / len(last), comment, metadata


def _check_compare_args(compare_args: Any) -> bool:
    if not isinstance(compare_args, bool):
        raise TypeError(f"`compare_args` must be True or False; got {compare_args!r}")
    return compare_args


def _check_feedback_key(feedback_key: Any) -> str:
    if not isinstance(feedback_key, str) or not feedback_key:
        raise TypeError(f"`feedback_key` must be a non-empty string; got {feedback_key!r}")
    return feedback_key


def create_steps_evaluator(
    *, compare_args: bool = False, feedback_key: str = "steps_score"
) -> SimpleEvaluator:
    """Score an agent's executed steps against reference steps grouped in levels.

    ``outputs``: the actual steps (dicts with ``name``, ``args``, ``output``, ``status``, ``id``)
    or a target record ``{"actual_steps": [...], ...}``. ``reference_outputs``: a list of levels
    (lists of reference steps), a flat list of steps (one level) or ``{"reference_steps": ...}``.
    The score is the share of the last level's steps matched by some actual step; the pairs are
    in ``metadata["matches"]``.
    """
    scorer = _StepsScorer(_check_compare_args(compare_args))
    key = _check_feedback_key(feedback_key)

    def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult:
        result = _run_evaluator(
            run_name="steps_score",
            scorer=scorer.score,
            feedback_key=key,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )
        return result  # type: ignore[return-value]

    return evaluator


def create_async_steps_evaluator(
    *, compare_args: bool = False, feedback_key: str = "steps_score"
) -> SimpleAsyncEvaluator:
    """Async twin of :func:`create_steps_evaluator`."""
    scorer = _StepsScorer(_check_compare_args(compare_args))
    key = _check_feedback_key(feedback_key)

    async def evaluator(
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> EvaluatorResult:
        result = await _arun_evaluator(
            run_name="steps_score",
            scorer=scorer.score,
            feedback_key=key,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )
        return result  # type: ignore[return-value]

    return evaluator
