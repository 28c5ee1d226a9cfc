"""Building the judge's chat messages from a prompt and the call's keyword arguments (pure code)."""

from __future__ import annotations

import difflib
import inspect
import json
import string
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openevals._attachments import normalize_content_blocks
from openevals._messages import (
    chat_messages_to_string,
    convert_to_openai_message,
    is_langchain_message,
    normalize_to_openai_messages_list,
    to_json_text,
)
from openevals._repr import show
from openevals._text import first_surrogate

PromptKind = Literal["template", "runnable", "callable"]
_ATTACHMENTS = "attachments"


@dataclass(frozen=True)
class PromptSpec:
    """A prompt analysed once, at evaluator creation."""

    kind: PromptKind
    template: str | None = None
    runnable: Any = None
    fn: Callable[..., Any] | None = None
    variables: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    mustache: bool = False
    structured_schema: Any = None
    structured_kwargs: dict[str, Any] = field(default_factory=dict)


def _template_fields(template: str) -> frozenset[str]:
    names = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(
            f"`prompt` is not a valid f-string template ({exc}); write literal braces as '{{{{' and "
            "'}}}}'"
        ) from None
    for _, field_name, _, _ in parsed:
        if field_name is None:
            continue
        base = field_name.split(".", 1)[0].split("[", 1)[0]
        if not base or base.isdigit():
            raise ValueError(
                "`prompt` uses a positional placeholder '{}'; name every variable, e.g. '{outputs}'"
            )
        names.add(base)
    return frozenset(names)


def _is_mustache(runnable: Any) -> bool:
    for message in getattr(runnable, "messages", []) or []:
        inner = getattr(message, "prompt", None)
        candidates = inner if isinstance(inner, list) else [inner]
        for candidate in candidates:
            if getattr(candidate, "template_format", None) == "mustache":
                return True
    return getattr(runnable, "template_format", None) == "mustache"


_STANDARD = ("inputs", "outputs", "reference_outputs", _ATTACHMENTS)
_OTHER_NAMES = {  # names other libraries (ragas, deepeval) give the standard fields
    "question": "inputs",
    "query": "inputs",
    "user_input": "inputs",
    "answer": "outputs",
    "response": "outputs",
    "actual_output": "outputs",
    "ground_truth": "reference_outputs",
    "expected_output": "reference_outputs",
    "reference": "reference_outputs",
}


def standard_field_like(name: str, *, aliases: bool = False) -> str | None:
    """The standard variable (``inputs``, ``outputs``, ``reference_outputs``, ``attachments``)
    that ``name`` looks like a misspelling of (``output``, ``reference_output``), or with
    ``aliases`` another library's name for (``answer``, ``ground_truth``); else ``None``."""
    if name in _STANDARD:
        return None
    if aliases and name in _OTHER_NAMES:
        return _OTHER_NAMES[name]
    folded = name.lower().replace("-", "_").replace(" ", "_")
    for field_name in _STANDARD:
        if folded == field_name or (len(folded) >= 5 and field_name.startswith(folded)):
            return field_name
    close = difflib.get_close_matches(folded, _STANDARD, n=1, cutoff=0.85)  # a typo
    return close[0] if close and abs(len(close[0]) - len(folded)) <= 1 else None


def _warn_lookalikes(variables: frozenset[str], optional: frozenset[str]) -> None:
    """Warn (at creation) about a variable that looks like a misspelt standard field. Not an
    error: any other name is filled from the call's extra keyword arguments (a batch run's
    extra columns), so ``{output}`` is valid when the caller passes ``output=``."""
    for name in sorted(variables - optional):
        like = standard_field_like(name)
        if like is not None:
            warnings.warn(
                f"the prompt variable {{{name}}} is not one of the standard fields "
                f"{show(list(_STANDARD))}; did you mean `{{{like}}}`? (Other names are filled only "
                f"from extra keyword arguments, such as a batch run's extra columns.)",
                UserWarning,
                stacklevel=5,
            )


def make_prompt_spec(prompt: Any) -> PromptSpec:
    """Classify and check ``prompt`` (f-string, LangChain prompt template, or callable); warn
    about a variable that looks like a misspelt standard field (:func:`standard_field_like`)."""
    if isinstance(prompt, str):
        variables = _template_fields(prompt)
        from openevals.prompts import optional_variables_for

        optional = frozenset(optional_variables_for(prompt))  # a prebuilt prompt's, by its text
        _warn_lookalikes(variables, optional)
        return PromptSpec(kind="template", template=prompt, variables=variables, optional=optional)
    if hasattr(prompt, "invoke") and hasattr(prompt, "input_variables"):
        variables = frozenset(prompt.input_variables or [])
        optional = frozenset(getattr(prompt, "optional_variables", None) or [])
        _warn_lookalikes(variables, optional)
        return PromptSpec(
            kind="runnable",
            runnable=prompt,
            variables=variables,
            optional=optional,
            mustache=_is_mustache(prompt),
            structured_schema=getattr(prompt, "schema_", None),
            structured_kwargs=dict(getattr(prompt, "structured_output_kwargs", None) or {}),
        )
    if callable(prompt):
        return PromptSpec(kind="callable", fn=prompt)
    raise TypeError(
        "`prompt` must be an f-string template (str), a LangChain prompt template (e.g. "
        "ChatPromptTemplate) or a callable returning a list of chat messages; got "
        f"{type(prompt).__name__}"
    )


def _is_message_like(item: Any) -> bool:
    return is_langchain_message(item) or (
        isinstance(item, Mapping) and "role" in item and ("content" in item or "tool_calls" in item)
    )


def _is_messages(value: Any) -> bool:
    """A non-empty list (or other sequence) of chat messages."""
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and bool(value)
        and all(_is_message_like(v) for v in value)
    )


def render_value(value: Any, name: str = "value") -> str:
    """Render a call value for a prompt: strings as-is, message lists as transcripts, else JSON.

    ``name`` is the prompt variable (``outputs``, ...) the errors name: TypeError for a value
    JSON cannot hold, ValueError for one that contains itself."""
    if isinstance(value, str):
        return value
    if is_langchain_message(value):
        return chat_messages_to_string([value])
    if _is_messages(value):
        return chat_messages_to_string(list(value))
    if (
        isinstance(value, Mapping)
        and set(value) == {"messages"}
        and _is_messages(value["messages"])
    ):
        return chat_messages_to_string(value["messages"])
    try:
        return to_json_text(value, indent=2, name=name)
    except TypeError as exc:
        raise TypeError(
            f"cannot render `{name}` (a {type(value).__name__}) into the prompt: {exc}; pass "
            "strings, numbers, lists or dicts"
        ) from None


def _check_missing(spec: PromptSpec, needed: frozenset[str], values: Mapping[str, Any]) -> None:
    missing = [v for v in needed if v not in values and v not in spec.optional]
    if missing:
        raise _missing_error(missing)


def _missing_error(missing: Sequence[str]) -> ValueError:
    names = ", ".join(show(m) for m in sorted(missing))
    hints = [
        f"`{{{like}}}` for `{{{m}}}`"
        for m in sorted(missing)
        if (like := standard_field_like(m, aliases=True)) is not None
    ]
    hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
    return ValueError(
        f"the prompt needs {names} but the evaluator call did not pass "
        f"{'it' if len(missing) == 1 else 'them'}; call the evaluator with "
        + ", ".join(f"{m}=..." for m in sorted(missing))
        + hint
    )


def _render_template(
    spec: PromptSpec, values: Mapping[str, Any], attachments: Any
) -> list[dict[str, Any]]:
    assert spec.template is not None
    needed = spec.variables - {_ATTACHMENTS}
    _check_missing(spec, needed, values)
    rendered = {v: render_value(values[v], v) if v in values else "" for v in needed}
    has_placeholder = _ATTACHMENTS in spec.variables
    if attachments is None:
        if has_placeholder and _ATTACHMENTS not in spec.optional:
            raise _missing_error([_ATTACHMENTS])
        text = spec.template.format(**rendered, **({_ATTACHMENTS: ""} if has_placeholder else {}))
        return [{"role": "user", "content": text}]
    blocks = normalize_content_blocks(attachments)
    if has_placeholder:
        marker = "{" + _ATTACHMENTS + "}"
        before, _, after = spec.template.partition(marker)
        # Format each half separately; a second '{attachments}' in the rest renders empty.
        head = before.format(**rendered)
        tail = after.format(**rendered, **{_ATTACHMENTS: ""})
    else:
        head, tail = spec.template.format(**rendered), ""
    content: list[dict[str, Any]] = []
    if head.strip():
        content.append({"type": "text", "text": head})
    content.extend(blocks)
    if tail.strip():
        content.append({"type": "text", "text": tail})
    return [{"role": "user", "content": content}]


def append_text_to_last_user(messages: list[dict[str, Any]], text: str) -> bool:
    """Append ``text`` to the last user message (a new dict); False when there is none."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                new_content: Any = [*content, {"type": "text", "text": text}]
            else:
                new_content = f"{content}\n\n{text}" if content else text
            messages[i] = {**message, "content": new_content}
            return True
    return False


def _append_blocks_to_last_user(
    messages: list[dict[str, Any]], blocks: list[dict[str, Any]]
) -> None:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            parts = (
                [{"type": "text", "text": content}] if isinstance(content, str) and content else []
            )
            if isinstance(content, list):
                parts = list(content)
            message["content"] = parts + blocks
            return
    messages.append({"role": "user", "content": blocks})


def _render_runnable(spec: PromptSpec, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    _check_missing(spec, spec.variables, values)
    params: dict[str, Any] = {}
    for name, value in values.items():
        if spec.mustache and isinstance(value, (Mapping, list)) and not _is_messages(value):
            params[name] = value
        else:
            params[name] = render_value(value, name)
    prompt_value = spec.runnable.invoke(params)
    messages = prompt_value.to_messages() if hasattr(prompt_value, "to_messages") else prompt_value
    return normalize_to_openai_messages_list(list(messages))


def start_messages(
    spec: PromptSpec,
    *,
    inputs: Any,
    outputs: Any,
    reference_outputs: Any,
    extra: Mapping[str, Any],
    attachments: Any,
) -> Any:
    """The prompt's own messages for this call.

    Returns a list of OpenAI-style dicts, or, for an async callable prompt, an awaitable of its raw
    result (the async shell awaits it and then calls :func:`finalize_messages`).
    """
    if spec.kind == "callable":
        assert spec.fn is not None
        return spec.fn(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **extra)
    given = {"inputs": inputs, "outputs": outputs, "reference_outputs": reference_outputs, **extra}
    values = {name: value for name, value in given.items() if value is not None}
    if spec.kind == "template":
        return _render_template(spec, values, attachments)
    if attachments is not None and _ATTACHMENTS in spec.variables:
        # The blocks cannot live inside a template string: the placeholder renders empty and the
        # blocks join the last user message.
        values = {**values, _ATTACHMENTS: ""}
    messages = _render_runnable(spec, values)
    if attachments is not None:
        _append_blocks_to_last_user(messages, normalize_content_blocks(attachments))
    return messages


def _few_shot_block(example: Mapping[str, Any]) -> str:
    """One worked example (checked to be a dict with a 'score' by the judge's options)."""
    lines = ["<example>"]
    for key in ("inputs", "outputs", "reference_outputs"):
        if key in example and example[key] is not None:
            shown = render_value(example[key], f"few_shot_examples[...]['{key}']")
            lines.append(f"<{key}>\n{shown}\n</{key}>")
    if example.get("reasoning") is not None:
        lines.append(f"<reasoning>\n{example['reasoning']}\n</reasoning>")
    if "score" in example:
        lines.append(f"<score>{json.dumps(example['score'])}</score>")
    lines.append("</example>")
    return "\n".join(lines)


def few_shot_text(examples: Sequence[Mapping[str, Any]]) -> str:
    blocks = "\n\n".join(_few_shot_block(ex) for ex in examples)
    return (
        "Below are worked examples: material that was evaluated, the reasoning, and the score it "
        "received. Use them to calibrate your own judgement; do not evaluate them.\n\n" + blocks
    )


def finalize_messages(
    raw_messages: Any,
    *,
    system: str | None,
    few_shot_examples: Sequence[Mapping[str, Any]] | None,
    attachments: Any = None,
    from_callable: bool = False,
) -> list[dict[str, Any]]:
    """Normalise the prompt's messages, prepend ``system`` and append few-shot examples.

    Always returns new dicts; nothing from the caller is modified.
    """
    if from_callable:
        if inspect.isawaitable(raw_messages):
            raise TypeError(
                "the `prompt` callable returned an awaitable; async prompt callables work with "
                "create_async_llm_as_judge only"
            )
        messages = normalize_to_openai_messages_list(raw_messages)
        if not messages:
            raise ValueError("the `prompt` callable returned no messages")
        if attachments is not None:
            _append_blocks_to_last_user(messages, normalize_content_blocks(attachments))
    else:
        messages = [convert_to_openai_message(m) for m in raw_messages]
    if system is not None:
        messages.insert(0, {"role": "system", "content": system})
    if few_shot_examples and not append_text_to_last_user(
        messages, few_shot_text(few_shot_examples)
    ):
        raise ValueError(
            "few_shot_examples are appended to the last user message, but the prompt has none"
        )
    return messages


def _surrogate_path(value: Any, limit: int = 100_000) -> str | None:
    """Where ``value`` holds a lone surrogate (``"[0]['text']"``-style path), else ``None``.

    Walks dicts (keys and values), lists, tuples and LangChain messages iteratively, visiting each
    container once and at most ``limit`` items, so cyclic or very deep values cannot break it.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    seen: set[int] = set()
    while stack and limit > 0:
        limit -= 1
        item, path = stack.pop()
        if isinstance(item, str):
            if first_surrogate(item) is not None:
                return path
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Mapping):
            for key, sub in item.items():
                stack.append((key, f"{path} (a key)"))
                stack.append((sub, f"{path}[{show(key)}]"))
        elif isinstance(item, (list, tuple)):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))
        elif is_langchain_message(item):
            stack.append((getattr(item, "content", None), f"{path}.content"))
            stack.append((getattr(item, "tool_calls", None), f"{path}.tool_calls"))
    return None


def check_encodable(messages: list[dict[str, Any]], sources: Mapping[str, Any]) -> None:
    """Raise a ``ValueError`` naming the parameter when the request holds a lone surrogate.

    Lone surrogates (``"\\ud800"``, typically from bytes decoded with ``errors="surrogateescape"``)
    cannot be encoded as UTF-8, so no HTTP client can send them. ``sources`` maps parameter names
    to the values the messages were built from; the first one holding such a character is named.
    """
    if _surrogate_path(messages) is None:
        return
    for name, value in sources.items():
        path = _surrogate_path(value)
        if path is not None:
            where = f"`{name}{path}`" if path else f"`{name}`"
            break
    else:
        where = "the text of `prompt` (or of the messages it returned)"
    raise ValueError(
        f"{where} contains a lone surrogate code point (U+D800..U+DFFF), which cannot be encoded "
        "as UTF-8 and so cannot be sent to the judge model. Fix the text before calling the "
        "evaluator, e.g. text.encode('utf-8', 'replace').decode('utf-8'), or decode the original "
        "bytes without errors='surrogateescape'."
    )
