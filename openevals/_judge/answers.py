"""Reading judge answers: JSON extraction from text and validation against the expected schema."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from openevals._judge.errors import JudgeOutputError
from openevals._judge.schema import SchemaSpec
from openevals._repr import show

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


MAX_ANSWER_CHARS = 200_000
"""Longest judge answer (in characters) the judge will parse; a longer one is a JudgeOutputError.

Judge answers are a JSON object with some reasoning, a few KB at most; an answer past this size is a
runaway generation, and parsing it would cost time for nothing.
"""

_MAX_DECODE_STARTS = 64
_OBJECT_START_RE = re.compile(r'\{\s*(?:"|\})')


class AnswerError(ValueError):
    """A judge answer that does not fit the expected shape (internal; triggers one repair)."""


def check_answer_size(text: str) -> None:
    """Raise :class:`JudgeOutputError` for an answer over :data:`MAX_ANSWER_CHARS`."""
    if len(text) > MAX_ANSWER_CHARS:
        raise JudgeOutputError(
            f"the judge's answer is {len(text):,} characters long, over the limit of "
            f"{MAX_ANSWER_CHARS:,} (openevals._judge.answers.MAX_ANSWER_CHARS); it was not "
            f"parsed. Start of the answer: {show(text, 500)}",
            raw=text[:MAX_ANSWER_CHARS],
        )


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Find a JSON object in ``text``: the whole text, a fenced block, or a ``{"...`` in prose.

    The work is linear in ``len(text)``: at most a fixed number of decode attempts, each at most
    one pass over the text. Nesting too deep for the decoder counts as "no object here".
    """
    check_answer_size(text)
    stripped = text.strip()
    candidates = [stripped]
    if "```" in text:
        candidates.extend(m.group(1).strip() for m in _FENCE_RE.finditer(text))
    for candidate in candidates[: _MAX_DECODE_STARTS // 2]:
        try:
            value = json.loads(candidate)
        except (ValueError, TypeError, RecursionError):  # too deep counts as "no object here"
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for tried, match in enumerate(_OBJECT_START_RE.finditer(text)):
        if tried >= _MAX_DECODE_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _coerce_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise AnswerError(f"'score' must be a boolean (true or false), got {show(value)}")


def _coerce_number(value: Any) -> float:
    if isinstance(value, bool):
        raise AnswerError(f"'score' must be a number, got the boolean {show(value)}")
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise AnswerError(f"'score' must be a number, got {show(value)}") from None
    else:
        raise AnswerError(f"'score' must be a number, got {show(value)}")
    if math.isnan(number) or math.isinf(number):
        raise AnswerError(f"'score' must be a finite number, got {show(value)}")
    return number


def _validate_score(spec: SchemaSpec, data: Mapping[str, Any]) -> tuple[Any, str | None]:
    if "score" not in data:
        raise AnswerError(f"the answer has no 'score' field (keys: {show(sorted(data))})")
    raw_score = data["score"]
    score: float | bool
    if spec.score_type == "boolean":
        score = _coerce_bool(raw_score)
    elif spec.score_type == "continuous":
        score = _coerce_number(raw_score)
        if not 0.0 <= score <= 1.0:
            raise AnswerError(
                f"'score' must be between 0.0 and 1.0 inclusive, got {show(raw_score)}"
            )
    else:
        number = _coerce_number(raw_score)
        matches = [c for c in spec.choices if math.isclose(c, number, rel_tol=1e-9, abs_tol=1e-9)]
        if not matches:
            raise AnswerError(
                f"'score' must be one of {list(spec.choices)!r}, got {show(raw_score)}"
            )
        score = matches[0]
    reasoning: str | None = None
    if spec.use_reasoning:
        value = data.get("reasoning")
        if not isinstance(value, str) or not value.strip():
            raise AnswerError("the answer has no 'reasoning' text before the score")
        reasoning = value
    return score, reasoning


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return node if isinstance(node, Mapping) else {}
    return schema


def _type_matches(value: Any, kind: Any) -> bool:
    if kind == "null":
        return value is None
    allowed = _JSON_TYPES.get(str(kind))
    if allowed is None:
        return True
    if isinstance(value, bool) and kind in ("number", "integer"):
        return False
    return isinstance(value, allowed)


def _check(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any], path: str) -> None:
    """Check ``value`` against the parts of a JSON schema answers usually get wrong.

    Types, required properties, enums and nested objects/arrays; raises :class:`AnswerError` with
    the path of the first problem (which triggers the judge's one repair request).
    """
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            errors = []
            for option in options:
                try:
                    _check(value, option, root, path)
                    return
                except AnswerError as exc:
                    errors.append(str(exc))
            raise AnswerError(errors[0])
    if "enum" in schema and value not in schema["enum"]:
        raise AnswerError(f"{path} must be one of {schema['enum']!r}, got {show(value)}")
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(_type_matches(value, k) for k in kinds):
        raise AnswerError(f"{path} should be of type {kind}, got {type(value).__name__}")
    if isinstance(value, Mapping):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                raise AnswerError(f"{path} is missing the required field {show(name)}")
        for name, item in value.items():
            prop = props.get(name)
            if isinstance(prop, Mapping):
                _check(item, prop, root, f"{path}.{name}")
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            _check(item, schema["items"], root, f"{path}[{i}]")


def _validate_structured(spec: SchemaSpec, data: Mapping[str, Any]) -> Any:
    """A Pydantic schema gives an instance of the model; JSON schemas and TypedDicts a dict."""
    if spec.pydantic_model is not None:
        try:
            model = spec.pydantic_model.model_validate(dict(data))
        except Exception as exc:
            raise AnswerError(f"the answer does not validate against {spec.name}: {exc}") from None
        return model
    schema = spec.validation_schema if spec.validation_schema is not None else spec.schema
    _check(data, schema, schema, "the answer")
    return dict(data)


def validate_answer(spec: SchemaSpec, data: Any) -> Any:
    """Validate a parsed answer.

    Score schemas give ``(score, reasoning)``; Pydantic schemas an instance of the model; other
    schemas a dict.
    """
    if spec.kind == "text":
        if not isinstance(data, str) or not data.strip():
            raise AnswerError("the reply is empty")
        return data
    if hasattr(data, "model_dump") and callable(data.model_dump):
        data = data.model_dump()
    if not isinstance(data, Mapping):
        raise AnswerError(f"expected a JSON object, got {type(data).__name__}")
    if spec.kind == "score":
        return _validate_score(spec, data)
    return _validate_structured(spec, data)
