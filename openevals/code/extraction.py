"""Getting the code out of an LLM answer, shared by every code evaluator.

Three strategies, chosen with ``code_extraction_strategy``:

* ``"none"`` (default): the whole answer text is the code.
* ``"markdown_code_blocks"``: the bodies of the fenced code blocks in the answer (backtick or tilde
  fences, indented fences, info strings such as ``python title="x.py"``), skipping blocks tagged as
  shell sessions or JSON; several blocks are joined with a newline.
* ``"llm"``: a model is asked, through the judge pipeline (:mod:`openevals._judge`: structured
  output rungs, retries, repair, the batch run's cache and admission control, ``timeout``), for a
  structured ``{"code": ...}`` answer; an empty ``code`` means the answer holds no code.

Or pass your own ``code_extractor(outputs) -> str``. Everything here except the model call is pure;
:class:`CodeExtraction` validates the options once and offers a sync and an async shell.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from typing_extensions import TypedDict

from openevals._drivers import adrive, drive
from openevals._messages import (
    convert_to_openai_message,
    is_langchain_message,
    normalize_to_openai_messages_list,
    text_parts,
)
from openevals._repr import show
from openevals._text import check_text

__all__ = [
    "CODE_EXTRACTION_STRATEGIES",
    "EXTRACTION_SCHEMA",
    "SKIPPED_LANGUAGES",
    "CodeBlock",
    "CodeExtraction",
    "CodeExtractionStrategy",
    "ExtractCode",
    "Extraction",
    "NoCode",
    "extract_code_from_markdown",
    "extraction_messages",
    "extraction_tools",
    "iter_code_blocks",
    "outputs_to_text",
    "read_langchain_reply",
    "read_openai_completion",
]

CodeExtractionStrategy = Literal["none", "llm", "markdown_code_blocks"]
CODE_EXTRACTION_STRATEGIES: tuple[str, ...] = get_args(CodeExtractionStrategy)

SKIPPED_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "fish", "console", "terminal", "json"})
"""Fenced blocks tagged with one of these languages (any letter case) are not code to evaluate."""


class ExtractCode(TypedDict):
    """The code found in an answer (openevals 0.2.2's extraction tool; kept for imports)."""

    code: str


class NoCode(TypedDict):
    """An answer without code (openevals 0.2.2's extraction tool; kept for imports)."""

    no_code: bool


# --------------------------------------------------------------------------- outputs -> text


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_parts(content))
    raise TypeError(
        "message content must be a string or a list of content blocks, got "
        f"{type(content).__name__}"
    )


def outputs_to_text(outputs: Any) -> str:
    """The answer text of ``outputs``.

    Accepts a string, a message-like dict with ``content`` (``role`` optional), a LangChain message,
    or ``{"messages": [...]}`` (the last assistant message, or the last message when no message has
    the assistant role). Text content blocks are joined with newlines; other blocks are ignored.
    """
    if isinstance(outputs, str):
        return outputs
    if is_langchain_message(outputs):
        return _content_text(convert_to_openai_message(outputs).get("content"))
    if isinstance(outputs, Mapping):
        if "messages" in outputs and "content" not in outputs:
            messages = normalize_to_openai_messages_list(outputs)
            if not messages:
                raise ValueError(
                    "`outputs` is {'messages': []}: there is no message to read code from"
                )
            chosen = next(
                (m for m in reversed(messages) if m.get("role") == "assistant"), messages[-1]
            )
            return _content_text(chosen.get("content"))
        if "content" in outputs:
            return _content_text(outputs["content"])
        raise ValueError(
            "`outputs` is a dict without 'content' or 'messages' (keys: "
            f"{show(sorted(map(str, outputs)))}); pass the code as a string, a message "
            "{'role': 'assistant', 'content': ...}, or {'messages': [...]}"
        )
    raise TypeError(
        "`outputs` must be a string, a message dict with 'content', a LangChain message or "
        f"{{'messages': [...]}}; got {type(outputs).__name__}"
    )


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first frame outside ``openevals``."""
    here = inspect.currentframe()
    frame = here.f_back if here is not None else None  # the function that calls warnings.warn
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("openevals"):
        frame = frame.f_back
        level += 1
    return level


def _known_strategy(strategy: Any) -> str:
    """``strategy`` if it is a known strategy; an unknown string is treated as ``"none"`` (as 0.2.2
    does) with a DeprecationWarning. Raises TypeError for a value that is not a string."""
    if not isinstance(strategy, str):
        raise TypeError(
            f"`code_extraction_strategy` must be one of {list(CODE_EXTRACTION_STRATEGIES)}, "
            f"got {type(strategy).__name__} {show(strategy)}"
        )
    if strategy in CODE_EXTRACTION_STRATEGIES:
        return strategy
    warnings.warn(
        f"code_extraction_strategy={show(strategy)} is not one of "
        f"{list(CODE_EXTRACTION_STRATEGIES)}; "
        "it is treated as 'none' (the whole output is the code), as openevals 0.2.2 does. "
        "Unknown values will raise ValueError in a future release: pass 'none' instead.",
        DeprecationWarning,
        stacklevel=_caller_stacklevel(),
    )
    return "none"


# --------------------------------------------------------------------------- markdown blocks

_OPENING_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LANGUAGE = re.compile(r"[\w+#.\-]+")


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: its language tag (lower-cased, ``""`` if none), info string and body."""

    language: str
    info: str
    code: str


def _language_of(info: str) -> str:
    stripped = info.strip().lstrip("{").lstrip(".")
    match = _LANGUAGE.match(stripped)
    return match.group(0).lower() if match else ""


def _closing_fence_start(line: str, char: str, length: int) -> int | None:
    """Where a closing fence starts on ``line`` (0 for a fence-only line), or None."""
    stripped = line.strip()
    if len(stripped) >= length and stripped == char * len(stripped):
        return 0
    # A fence glued to the end of the last code line: "print(1)```".
    escaped = re.escape(char)
    glued = re.search(rf"(?<!{escaped}){escaped}{{{length},}}[ \t]*$", line)
    return glued.start() if glued else None


def _dedent(line: str, width: int) -> str:
    """``line`` without the blanks of its first ``width`` characters (a fence's indentation)."""
    head = line[:width]
    return line[len(head) - len(head.lstrip(" \t")) :]


def iter_code_blocks(text: str) -> Iterator[CodeBlock]:
    """Yield every fenced code block of a Markdown text, in order.

    Fences are 3+ backticks or tildes, possibly indented (the indentation is removed from the body
    lines); the closing fence uses the same character, is at least as long as the opening one,
    and may be glued to the end of the last code line. An unclosed block runs to the end of the
    text. A backtick "fence" whose info string contains a backtick is inline code, not a block.
    """
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = _OPENING_FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence, info = opening.group("fence"), opening.group("info")
        char = fence[0]
        if char == "`" and "`" in info:
            i += 1
            continue
        indent = len(opening.group("indent"))
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            line = lines[j]
            cut = _closing_fence_start(line, char, len(fence))
            if cut is not None:
                if cut > 0:
                    body.append(_dedent(line[:cut].rstrip(" \t"), indent))
                break
            body.append(_dedent(line, indent))
            j += 1
        yield CodeBlock(language=_language_of(info), info=info.strip(), code="\n".join(body))
        i = j + 1


def extract_code_from_markdown(text: str) -> str | None:
    """The code of all fenced blocks not tagged with a :data:`SKIPPED_LANGUAGES` language.

    Each block's code ends with a newline and blocks are joined with ``"\\n"`` (as 0.2.2 does). Returns None when there is no such block, or when all of them
    are empty.
    """
    # Each body keeps the newline that ends its last line, as 0.2.2 returns it; bodies are
    # joined with "\n", so consecutive blocks are separated by a blank line.
    bodies = [
        f"{b.code}\n" if b.code else ""
        for b in iter_code_blocks(text)
        if b.language not in SKIPPED_LANGUAGES
    ]
    code = "\n".join(bodies)
    return code if code.strip() else None


# --------------------------------------------------------------------------- extraction results


@dataclass(frozen=True)
class Extraction:
    """The result of extracting code: the code, or None with the metadata explaining the failure."""

    code: str | None
    metadata: dict[str, Any] | None = None

    @classmethod
    def failed(cls, **details: Any) -> Extraction:
        return cls(None, {"code_extraction_failed": True, **details})

    def failure_score(self) -> tuple[bool, None, dict[str, Any]]:
        """What the evaluator returns when nothing could be extracted: ``(False, None, metadata)``."""
        return False, None, dict(self.metadata or {"code_extraction_failed": True})


def _from_extractor(value: Any) -> Extraction:
    if value is None:
        return Extraction.failed()
    if not isinstance(value, str):
        raise TypeError(
            "`code_extractor` must return the code as a string (or None when there is no code); "
            f"it returned {type(value).__name__}"
        )
    return Extraction(value)


# --------------------------------------------------------------------------- LLM strategy


EXTRACTION_SCHEMA: dict[str, Any] = {
    "title": "extracted_code",
    "description": "The solution code found in the answer.",
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": (
                "The solution code copied verbatim, without Markdown fences or prose; an empty "
                "string when the answer contains no solution code."
            ),
        }
    },
    "required": ["code"],
    "additionalProperties": False,
}
"""The structured answer the extraction model gives (one judge call)."""


def extraction_messages(text: str) -> list[dict[str, str]]:
    """The system and user messages asking a model to extract the code of ``text``."""
    from openevals.prompts.code import LLM_EXTRACTION_SYSTEM_PROMPT, LLM_EXTRACTION_USER_PROMPT

    return [
        {"role": "system", "content": LLM_EXTRACTION_SYSTEM_PROMPT},
        {"role": "user", "content": LLM_EXTRACTION_USER_PROMPT.format(outputs=text)},
    ]


def _function_tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    parameters = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def extraction_tools() -> list[dict[str, Any]]:
    """The extraction tools (``ExtractCode`` / ``NoCode``, as in openevals 0.2.2), in OpenAI
    function-tool format (new dicts). Kept for importers; the ``"llm"`` strategy now asks for a
    structured answer (:data:`EXTRACTION_SCHEMA`)."""
    code = {
        "type": "string",
        "description": "The extracted code, without Markdown fences or prose.",
    }
    return [
        _function_tool(
            "ExtractCode",
            "Return the source code contained in the answer, exactly as written.",
            {"code": code},
        ),
        _function_tool(
            "NoCode",
            "Report that the answer contains no source code.",
            {"no_code": {"type": "boolean"}},
        ),
    ]


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return None
    return value


def _read_tool_calls(calls: list[tuple[str, Any]], reply_text: str) -> Extraction:
    pieces: list[str] = []
    said_no_code = False
    for name, raw_args in calls:
        args = _arguments(raw_args)
        if name == "ExtractCode" and isinstance(args, Mapping):
            code = args.get("code")
            if isinstance(code, str) and code.strip():
                pieces.append(code)
        elif name == "NoCode":
            said_no_code = True
    if pieces:
        return Extraction("\n".join(pieces))
    if said_no_code:
        return Extraction.failed()
    return Extraction.failed(extraction_reply=reply_text)


def read_langchain_reply(message: Any) -> Extraction:
    """Read a 0.2.2-style tool-call answer (``ExtractCode`` / ``NoCode``) from a LangChain
    ``AIMessage`` (kept for importers; see :func:`extraction_tools`)."""
    calls = [
        (str(c.get("name")), c.get("args")) for c in getattr(message, "tool_calls", None) or []
    ]
    try:
        text = _content_text(getattr(message, "content", ""))
    except TypeError:
        text = str(getattr(message, "content", ""))
    if not text:
        invalid = getattr(message, "invalid_tool_calls", None) or []
        text = "\n".join(str(c.get("args", "")) for c in invalid if isinstance(c, Mapping))
    return _read_tool_calls(calls, text)


def read_openai_completion(completion: Any) -> Extraction:
    """Read a 0.2.2-style tool-call answer from an OpenAI chat completion (kept for
    importers; see :func:`extraction_tools`)."""
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return Extraction.failed(extraction_reply="")
    message = choices[0].message
    functions = [getattr(c, "function", None) for c in getattr(message, "tool_calls", None) or []]
    calls = [(str(getattr(f, "name", "")), getattr(f, "arguments", None)) for f in functions]
    text = getattr(message, "content", None) or ""
    if not text and calls:
        text = "\n".join(str(args) for _, args in calls)
    return _read_tool_calls(calls, text)


def _extraction_prompt(*, outputs: Any = None, **_: Any) -> list[dict[str, str]]:
    return extraction_messages(str(outputs))


def _is_openai_client(obj: Any) -> bool:
    completions = getattr(getattr(obj, "chat", None), "completions", None)
    return callable(getattr(completions, "create", None))


def _extraction_judge(model: str | None, client: Any, timeout: float | None) -> Any:
    """The judge core that answers the extraction question.

    Built without the sync/async rule: one extraction serves a sync or an async evaluator, and
    :meth:`CodeExtraction.extract` refuses an async client when it is called.
    """
    from openevals._judge.options import FactorySpec
    from openevals._judge.shell import build_core

    spec = FactorySpec("code_extraction", ("judge", "model", "timeout"), is_async=True)
    return build_core(
        spec,
        {"judge": client, "model": model, "timeout": timeout},
        run_name="extract_code",
        prompt=_extraction_prompt,
        feedback_key="code",
        output_schema=EXTRACTION_SCHEMA,
    )


def _from_answer(answer: Any) -> Extraction:
    code = answer.get("code") if isinstance(answer, Mapping) else None
    if isinstance(code, str) and code.strip():
        return Extraction(code)
    return Extraction.failed()


class CodeExtraction:
    """Validated extraction options plus the sync (:meth:`extract`) and async (:meth:`aextract`) shells.

    Validation (at creation): an unknown strategy string is treated as ``"none"`` with a
    DeprecationWarning (as 0.2.2 accepts it); a ``code_extractor`` together with a strategy
    other than ``"none"``, or strategy ``"llm"`` without ``model`` or ``client`` raise
    ``ValueError``. ``client`` may be a LangChain chat model or an OpenAI-style client
    (``client.chat.completions.create``, then ``model`` names the model); ``model`` alone is a
    ``"provider:model"`` string resolved on first use. ``timeout`` bounds each request of the
    ``"llm"`` strategy (as the judges' ``timeout=``).
    """

    def __init__(
        self,
        *,
        strategy: str = "none",
        code_extractor: Callable[[Any], Any] | None = None,
        model: str | None = None,
        client: Any = None,
        timeout: float | None = None,
    ) -> None:
        strategy = _known_strategy(strategy)
        if code_extractor is not None:
            if not callable(code_extractor):
                raise TypeError(
                    "`code_extractor` must be a function taking `outputs` and returning the code, "
                    f"got {type(code_extractor).__name__}"
                )
            if strategy != "none":
                raise ValueError(
                    f"`code_extractor` replaces the extraction strategy; got both a code_extractor "
                    f"and code_extraction_strategy={show(strategy)}. Pass only one of them."
                )
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(
                f"`model` must be a non-empty 'provider:model' string, got {show(model)}"
            )
        self.strategy = strategy
        self.code_extractor = code_extractor
        self.model = model
        self.client = client
        self._judge: Any = None
        if strategy == "llm":
            from openevals._judge.resolve import looks_like_chat_model

            if model is None and client is None:
                raise ValueError(
                    "code_extraction_strategy='llm' needs a model: pass `model` (e.g. "
                    "'openai:gpt-4.1-mini') or `client` (a LangChain chat model)"
                )
            if client is not None and not looks_like_chat_model(client):
                if not _is_openai_client(client):
                    raise TypeError(
                        "`client` must be a LangChain chat model (with invoke / ainvoke) or an "
                        f"OpenAI-style client (client.chat.completions.create); got "
                        f"{type(client).__name__}"
                    )
                if model is None:
                    raise ValueError(
                        "an OpenAI-style `client` needs `model`, the model name to call (e.g. "
                        "'gpt-4.1-mini')"
                    )
            self._judge = _extraction_judge(model, client, timeout)

    def flow(
        self, outputs: Any, parameter: str, *, is_async: bool
    ) -> Generator[Callable[[], Any], Any, Extraction]:
        """Extract the code of ``outputs`` (errors name it as ``parameter``): a flow whose steps
        are the calls to make (the extractor's, the model's), run by :func:`perform` through
        :mod:`openevals._drivers`; the async driver awaits what a step returns."""
        if self.code_extractor is not None:
            value = yield functools.partial(self.code_extractor, outputs)
            if inspect.isawaitable(value):
                if inspect.iscoroutine(value):
                    value.close()
                raise TypeError(
                    "`code_extractor` returned an awaitable; async extractors need the async "
                    "evaluator (create_async_...)"
                )
            return _from_extractor(value)
        text = outputs_to_text(outputs)
        if self.strategy == "none":
            return Extraction(text)
        if self.strategy == "markdown_code_blocks":
            code = extract_code_from_markdown(text)
            return Extraction(code) if code is not None else Extraction.failed()
        # The request body is UTF-8 JSON: refuse text it cannot carry before calling the model.
        check_text(text, parameter, of="its text", sink="the code-extraction model")
        if not is_async and self._judge.has_async_client:
            raise TypeError(
                "an async OpenAI client was passed as `client` to a sync evaluator; use the "
                "async evaluator or openai.OpenAI()"
            )
        from openevals._judge.shell import Ask, JudgeCall, aask, ask

        step = Ask((JudgeCall(outputs=text),))
        (outcome,) = yield functools.partial(aask if is_async else ask, self._judge, step)
        return _from_answer(outcome.value)

    def extract(self, outputs: Any, *, parameter: str = "outputs") -> Extraction:
        """Extract the code of ``outputs`` (blocking); errors name it as ``parameter``."""
        return drive(self.flow(outputs, parameter, is_async=False), perform)

    async def aextract(self, outputs: Any, *, parameter: str = "outputs") -> Extraction:
        """Extract the code of ``outputs``; the extractor and the model are awaited if async."""
        return await adrive(self.flow(outputs, parameter, is_async=True), perform)


def perform(step: Callable[[], Any]) -> Any:
    """Perform one step of a code flow (:meth:`CodeExtraction.flow`): make the call it holds."""
    return step()
