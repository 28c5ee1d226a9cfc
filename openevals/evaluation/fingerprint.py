"""What a resumed pair is checked against: the identity of an evaluator, as a short hash.

Every ``eval`` line of an ``output=`` file carries ``row_fp`` (the row's whole content,
:func:`~.data.row_fingerprint`) and ``evaluator_fp`` (:func:`evaluator_fingerprint`). On resume a
recorded pair is reused only when both still match; otherwise it is evaluated again and the
result says how many were (:class:`~.result.EvaluationResult` ``reevaluated``).

An evaluator's identity is what can be read from it without calling it:

* its name in the run, its field mapping and its :class:`~openevals._contract.EvaluatorInfo`
  (run name, feedback keys, model label, score type and choices);
* for a judge of this package, its options: prompt text, model, system message, score type,
  choices, few-shot examples, output schema, samples, weighting;
* for any other callable (a user's function, a factory's closure), its module and qualified
  name, its code (the bytecode, constants and names, not the file or line, so moving it or
  re-running a notebook cell keeps it), the immutable plain values it closes over (text,
  numbers, tuples of those; a dict or list it closes over usually holds state it changes, so
  only its type counts), the functions it closes over (the same way), and the values bound with
  ``functools.partial`` (lists and dicts included). Other objects count by their
  ``repr`` when it names no memory address, else by their type name only.

What it cannot see: a change inside another function or module the evaluator calls, a file it
reads, or a model behind an API that changed under the same name. Start a new ``output=`` file
when such a change matters.
"""

from __future__ import annotations

import hashlib
import json
import types
from collections.abc import Callable, Mapping
from typing import Any

from openevals._contract import EvaluatorInfo, unwrap

__all__ = ["evaluator_fingerprint"]

_DEPTH = 4
_ITEMS = 64
_PLAIN = (str, int, float, bool, type(None))


def evaluator_fingerprint(
    name: str, fn: Callable[..., Any], info: EvaluatorInfo | None, fields: Mapping[str, str]
) -> str:
    """A 16-hex-digit hash of the evaluator's identity (see the module docs)."""
    described: dict[str, Any] = {"name": name, "fields": dict(fields), "callable": _identity(fn)}
    if info is not None:
        described["info"] = [
            info.run_name,
            list(info.feedback_keys),
            info.model,
            info.score_type,
            list(info.choices),
        ]
    from openevals._judge.shell import CORE_ATTRIBUTE

    core = getattr(fn, CORE_ATTRIBUTE, None)
    if core is not None:
        described["judge"] = _judge(core)
    text = json.dumps(described, sort_keys=True, default=_type_name, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _judge(core: Any) -> Any:
    options = core.options
    prompt = options.prompt
    return _value(
        {
            "prompt": prompt if isinstance(prompt, str) else _identity(prompt),
            "model": options.model,
            "judge": _type_name(options.judge) if options.judge is not None else None,
            "system": options.system,
            "continuous": options.continuous,
            "choices": options.choices,
            "use_reasoning": options.use_reasoning,
            "few_shot_examples": list(options.few_shot_examples),
            "output_schema": _identity(options.output_schema),
            "samples": options.samples,
            "score_weighting": options.score_weighting,
            "feedback_key": options.feedback_key,
        },
        0,
    )


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>"


def _code(code: types.CodeType, depth: int) -> Any:
    consts = [
        _code(c, depth + 1) if isinstance(c, types.CodeType) else _value(c, depth + 1)
        for c in code.co_consts
    ]
    return [code.co_code.hex(), consts, list(code.co_names), list(code.co_varnames)]


def _identity(fn: Any, depth: int = 0) -> Any:
    """A callable (or any value) as plain data that is the same in every process."""
    if depth > _DEPTH:
        return _type_name(fn)
    inner, partials = unwrap(fn)
    if partials:
        return {
            "partial": _identity(inner, depth + 1),
            "bound": [
                [_value(list(p.args), depth + 1), _value(dict(p.keywords), depth + 1)]
                for p in partials
            ],
        }
    if isinstance(fn, types.MethodType):
        return {"method": _identity(fn.__func__, depth + 1), "of": _type_name(fn.__self__)}
    if isinstance(fn, types.FunctionType):
        cells = [cell.cell_contents for cell in fn.__closure__ or () if _filled(cell)]
        return {
            "function": f"{fn.__module__}.{fn.__qualname__}",
            "code": _code(fn.__code__, depth),
            "closure": [_closed(value, depth + 1) for value in cells],
            "defaults": _value(list(fn.__defaults__ or ()), depth + 1),
        }
    if isinstance(fn, type):
        return f"<class {fn.__module__}.{fn.__qualname__}>"
    if callable(fn) and hasattr(fn, "__dict__"):
        call = type(fn).__call__
        attributes = {k: v for k, v in vars(fn).items() if not callable(v) or depth < 2}
        return {
            "object": _type_name(fn),
            "call": _identity(call, depth + 1) if isinstance(call, types.FunctionType) else None,
            "attributes": _value(attributes, depth + 1),
        }
    return _value(fn, depth)


def _closed(value: Any, depth: int) -> Any:
    """A value a function closes over: functions by :func:`_identity`; immutable plain values
    (text, numbers, tuples of those) as they are; mutable containers by type only, since they
    usually hold state the function changes as it runs (a counter, a cache)."""
    if isinstance(value, (dict, list, set)) or not _immutable(value):
        if callable(value) and not isinstance(value, type):
            return _identity(value, depth)
        return _type_name(value)
    return _value(value, depth)


def _immutable(value: Any) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (tuple, frozenset)):
        return all(_immutable(v) for v in value)
    return False


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _value(value: Any, depth: int) -> Any:
    """Plain values as they are (bounded); functions by :func:`_identity`; others by type."""
    if isinstance(value, _PLAIN):
        return value if not isinstance(value, float) or value == value else "nan"
    if depth > _DEPTH:
        return _type_name(value)
    if isinstance(value, Mapping):
        items = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0])
        return {k: _value(v, depth + 1) for k, v in items[:_ITEMS]}
    if isinstance(value, (list, tuple)):
        return [_value(v, depth + 1) for v in value[:_ITEMS]]
    if isinstance(value, (set, frozenset)):
        return sorted(str(_value(v, depth + 1)) for v in value)[:_ITEMS]
    if isinstance(value, (types.FunctionType, types.MethodType)) or unwrap(value)[1]:
        return _identity(value, depth + 1)
    if isinstance(value, type):
        return f"<class {value.__module__}.{value.__qualname__}>"
    try:  # a prompt template, a schema object: its text, unless it names a memory address
        text = repr(value)
    except Exception:
        return _type_name(value)
    if " at 0x" in text:
        return _type_name(value)
    digest = hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]
    return f"{_type_name(value)}:{digest}"
