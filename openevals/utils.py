"""The one wrapper every evaluator returns through, plus shared message helpers.

``_run_evaluator`` / ``_arun_evaluator`` call a scorer and map what it returns to
:class:`~openevals.types.EvaluatorResult` dicts. When LangSmith tracing is switched on by the
environment (or an ambient traced run exists) the scorer runs as a traced child run named
``run_name``; inside a ``@pytest.mark.langsmith`` test every result is logged as feedback. When
neither is the case no LangSmith code is imported and the wrapper costs a few microseconds.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

from openevals._attachments import attachment_to_content_block, normalize_content_blocks
from openevals._messages import (
    chat_messages_to_string,
    convert_to_openai_message,
    normalize_final_app_outputs_as_string,
    normalize_to_openai_messages_list,
)
from openevals._repr import show
from openevals.types import EvaluatorResult

__all__ = [
    "_arun_evaluator",
    "_arun_evaluator_untyped",
    "_attachment_to_content_block",
    "_chat_completion_messages_to_string",
    "_convert_to_openai_message",
    "_normalize_content_blocks",
    "_normalize_final_app_outputs_as_string",
    "_normalize_to_openai_messages_list",
    "_process_score",
    "_run_evaluator",
    "_run_evaluator_untyped",
]

# Public-release-compatible private names used by custom evaluators and later modules.
_convert_to_openai_message = convert_to_openai_message
_normalize_to_openai_messages_list = normalize_to_openai_messages_list
_chat_completion_messages_to_string = chat_messages_to_string
_normalize_final_app_outputs_as_string = normalize_final_app_outputs_as_string
_attachment_to_content_block = attachment_to_content_block
_normalize_content_blocks = normalize_content_blocks

ResultOrResults = EvaluatorResult | list[EvaluatorResult]


# --------------------------------------------------------------------------- result mapping


def _result(key: str, score: Any, comment: Any = None, metadata: Any = None) -> EvaluatorResult:
    return {"key": key, "score": score, "comment": comment, "metadata": metadata}


def _is_result_dict(value: Any) -> bool:
    return isinstance(value, Mapping) and "key" in value and "score" in value


def _process_score(key: str, value: Any) -> EvaluatorResult:
    """Map one entry of a multi-key scorer dict to a result (public-release semantics)."""
    if isinstance(value, Mapping):
        if "score" not in value:
            raise ValueError(
                f"the scorer's value for feedback key {show(key)} is a dict without a 'score' "
                f"entry (got keys {show(sorted(value))}); return a scalar, or a dict with 'score' "
                "and optional 'reasoning' and 'metadata'"
            )
        comment = value.get("reasoning", value.get("comment"))
        result = _result(key, value["score"], comment, value.get("metadata"))
        if value.get("source_run_id") is not None:
            result["source_run_id"] = value["source_run_id"]
        return result
    return _result(key, value)


def _to_results(feedback_key: str, score: Any) -> ResultOrResults:
    """Map what a scorer returned to one result or a list of results.

    * scalar (bool, number, str, None, ...) -> one result with ``comment=None``
    * ``(score, comment)`` or ``(score, comment, metadata)`` -> one result
    * ``{key: value, ...}`` -> one result per key (``feedback_key`` unused); a list value yields one
      result per element under that key
    * a list of ``EvaluatorResult``-shaped dicts -> those results (copied)
    """
    if isinstance(score, tuple):
        if len(score) == 2:
            return _result(feedback_key, score[0], score[1])
        if len(score) == 3:
            return _result(feedback_key, score[0], score[1], score[2])
        raise ValueError(
            f"a scorer for {show(feedback_key)} returned a tuple of length {len(score)}; expected "
            "(score, comment) or (score, comment, metadata)"
        )
    if isinstance(score, Mapping):
        results: list[EvaluatorResult] = []
        for key, value in score.items():
            if isinstance(value, list):
                results.extend(_process_score(key, item) for item in value)
            else:
                results.append(_process_score(key, value))
        return results
    if isinstance(score, list) and score and all(_is_result_dict(r) for r in score):
        out: list[EvaluatorResult] = []
        for r in score:
            res = _result(r["key"], r["score"], r.get("comment"), r.get("metadata"))
            if r.get("source_run_id") is not None:
                res["source_run_id"] = r["source_run_id"]
            out.append(res)
        return out
    return _result(feedback_key, score)


def _as_list(results: ResultOrResults) -> list[EvaluatorResult]:
    return results if isinstance(results, list) else [results]


# --------------------------------------------------------------------------- LangSmith switches


_env_tracing: bool | None = None
"""What the environment said about tracing at its one read (``None``: not read yet)."""


def _read_tracing_env() -> bool:
    """LangSmith's rule for the tracing variables: ``*_TRACING_V2`` when set to anything but
    blanks, else ``*_TRACING`` (``LANGSMITH_`` before ``LANGCHAIN_``), on when exactly ``true``."""
    for name in ("TRACING_V2", "TRACING"):
        for namespace in ("LANGSMITH", "LANGCHAIN"):
            value = os.environ.get(f"{namespace}_{name}")
            if value is not None and value.strip():
                return value == "true"
    return False


def _env_tracing_on() -> bool:
    """Whether the environment switches LangSmith tracing on, read once per process and kept,
    as LangSmith keeps its own reads (``langsmith.utils.get_env_var`` is cached): a variable
    set after the first evaluator call is not seen until :func:`_reread_tracing_env`. Once
    LangSmith is loaded, :func:`_tracing_active` asks LangSmith instead."""
    global _env_tracing
    if _env_tracing is None:
        _env_tracing = _read_tracing_env()
    return _env_tracing


def _reread_tracing_env() -> None:
    """Forget the kept read of the tracing variables (the next call reads them again)."""
    global _env_tracing
    _env_tracing = None


def _langsmith_test_case() -> Any:
    """The active ``@pytest.mark.langsmith`` test case, if any (never imports the testing module).

    LangSmith has no public way to ask this; like the public 0.2.2 release, this reads the
    ``_TEST_CASE`` context variable of ``langsmith.testing._internal``, and degrades to "no test
    case" if a LangSmith release renames it (tests/contract/test_private_access.py lists it)."""
    internal = sys.modules.get("langsmith.testing._internal")
    if internal is None:
        return None
    var = getattr(internal, "_TEST_CASE", None)
    return var.get() if var is not None else None


def _tracing_active() -> bool:
    """Is LangSmith tracing on? LangSmith's own answer once its tracing code is loaded (its
    ``tracing_context``, a traced function around the call, ``configure``, and its cached read
    of the environment, which ``langsmith.utils.get_env_var.cache_clear()`` renews); before
    that nothing but the environment can switch it on (:func:`_env_tracing_on`)."""
    if "langsmith.run_helpers" not in sys.modules:
        return _env_tracing if _env_tracing is not None else _env_tracing_on()
    from langsmith import utils as ls_utils

    return bool(ls_utils.tracing_is_enabled())


ResultHook = Callable[[str, dict[str, Any], Any], None]

result_hook: ContextVar[ResultHook | None] = ContextVar("openevals_result_hook", default=None)
"""Set by the pytest plugin (:mod:`openevals.testing.plugin`) for the duration of a test that logs
feedback: ``hook(run_name, call_kwargs, results)`` sees what every evaluator returned. Unset, it
costs one ``ContextVar.get`` per call, on the path that already checks for LangSmith."""


def _needs_langsmith() -> bool:
    """Whether a call must leave the inlined fast path: LangSmith tracing or a LangSmith test
    case is on, or a test logs feedback through :data:`result_hook`."""
    return result_hook.get() is not None or _langsmith_test_case() is not None or _tracing_active()


def _traced_run_id() -> Any:
    """The id (a UUID) of the LangSmith run being traced around this call, or ``None``."""
    if "langsmith.run_helpers" not in sys.modules:
        return None  # nothing traces without it loaded: skip the lookup
    from langsmith.run_helpers import get_current_run_tree

    run_tree = get_current_run_tree()
    return None if run_tree is None else run_tree.id


def _traced() -> bool:
    return _langsmith_test_case() is not None or _tracing_active()


def _report(run_name: str, kwargs: dict[str, Any], out: Any) -> Any:
    hook = result_hook.get()
    if hook is not None:
        hook(run_name, kwargs, out)
    return out


def _annotate_ambient_run(
    run_name: str,
    results: list[EvaluatorResult],
    in_test: bool,
    kw: Any,
    ls_framework: str = "openevals",
) -> None:
    from langsmith.run_helpers import get_current_run_tree

    run_tree = get_current_run_tree()
    if run_tree is None:
        return
    additions: dict[str, Any] = {}
    for r in results:
        if isinstance(r.get("metadata"), Mapping):
            additions.update(cast(Mapping[str, Any], r["metadata"]))
    additions["__ls_framework"] = ls_framework
    additions["__ls_evaluator"] = run_name
    additions["__ls_language"] = "python"
    # ``RunTree.metadata`` is a read-only view of ``extra["metadata"]`` in current langsmith
    # releases; update it in place instead of assigning.
    add_metadata = getattr(run_tree, "add_metadata", None)
    if callable(add_metadata):
        add_metadata(additions)
    else:
        run_tree.metadata.update(additions)
    if in_test:
        inputs, reference = kw.get("inputs"), kw.get("reference_outputs")
        if inputs is not None or reference is not None:
            run_tree.inputs = {"inputs": inputs, "reference_outputs": reference}


def _log_feedback(results: list[EvaluatorResult]) -> None:
    from langsmith import testing as t

    for r in results:
        t.log_feedback(key=r["key"], score=r["score"], comment=r.get("comment"))


# --------------------------------------------------------------------------- runners


@contextlib.contextmanager
def _tracing(
    run_name: str, raw: bool, ls_framework: str, kwargs: dict[str, Any]
) -> Iterator[Callable[[Any], Any]]:
    """The scope of one traced call: inside a ``@pytest.mark.langsmith`` test, the feedback run
    that results are logged to. Yields ``finish(out)``, which annotates the ambient run with the
    results (``out``) and, in a LangSmith test, logs every result as feedback."""
    in_test = _langsmith_test_case() is not None

    def finish(out: Any) -> Any:
        results = [] if raw else _as_list(out)
        _annotate_ambient_run(run_name, results, in_test, kwargs, ls_framework)
        if in_test and results:
            _log_feedback(results)
        return out

    if not in_test:
        yield finish
        return
    from langsmith import testing as t

    with t.trace_feedback(name=run_name):
        yield finish


def _score_untraced(
    scorer: Callable[..., Any], feedback_key: str, raw: bool, kwargs: dict[str, Any]
) -> Any:
    """The fast path of every evaluator call (no tracing, no feedback hook): call the scorer and
    map its value to results (or pass it through raw). Shared with :mod:`openevals._contract`."""
    value = scorer(**kwargs)
    return value if raw else _to_results(feedback_key, value)


async def _ascore_untraced(
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    feedback_key: str,
    raw: bool,
    kwargs: dict[str, Any],
) -> Any:
    """Async twin of :func:`_score_untraced`; awaits the scorer's value when it is awaitable."""
    value = scorer(**kwargs)
    if inspect.isawaitable(value):
        value = await value
    return value if raw else _to_results(feedback_key, value)


def _run_evaluator_untyped(
    *,
    run_name: str,
    scorer: Callable[..., Any],
    feedback_key: str,
    return_raw_outputs: bool = False,
    ls_framework: str = "openevals",
    **kwargs: Any,
) -> Any:
    """Run ``scorer(**kwargs)`` and map its return value to results (or pass it through raw)."""
    if not _traced():
        out = _score_untraced(scorer, feedback_key, return_raw_outputs, kwargs)
        return _report(run_name, kwargs, out)
    from langsmith import traceable

    # The traced run covers scoring and result mapping, so its outputs are the results.
    def score(**kw: Any) -> Any:
        return _score_untraced(scorer, feedback_key, return_raw_outputs, kw)

    with _tracing(run_name, return_raw_outputs, ls_framework, kwargs) as finish:
        out = finish(traceable(name=run_name)(score)(**kwargs))
    return _report(run_name, kwargs, out)


async def _arun_evaluator_untyped(
    *,
    run_name: str,
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    feedback_key: str,
    return_raw_outputs: bool = False,
    ls_framework: str = "openevals",
    **kwargs: Any,
) -> Any:
    """Async twin of :func:`_run_evaluator_untyped`; the scorer may be sync or async."""
    if not _traced():
        out = await _ascore_untraced(scorer, feedback_key, return_raw_outputs, kwargs)
        return _report(run_name, kwargs, out)
    from langsmith import traceable

    async def score(**kw: Any) -> Any:
        return await _ascore_untraced(scorer, feedback_key, return_raw_outputs, kw)

    with _tracing(run_name, return_raw_outputs, ls_framework, kwargs) as finish:
        out = finish(await traceable(name=run_name)(score)(**kwargs))
    return _report(run_name, kwargs, out)


def _run_evaluator(
    *,
    run_name: str,
    scorer: Callable[..., Any],
    feedback_key: str,
    ls_framework: str = "openevals",
    **kwargs: Any,
) -> ResultOrResults:
    """Call ``scorer(**kwargs)`` and return :class:`EvaluatorResult` dict(s).

    The scorer may return a bool or number, ``(score, comment)``, ``(score, comment, metadata)``,
    a dict of feedback key -> value for multi-key evaluators, or a list of result dicts.
    Exceptions raised by the scorer propagate unchanged.
    """
    return cast(
        ResultOrResults,
        _run_evaluator_untyped(
            run_name=run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            ls_framework=ls_framework,
            **kwargs,
        ),
    )


async def _arun_evaluator(
    *,
    run_name: str,
    scorer: Callable[..., Any] | Callable[..., Awaitable[Any]],
    feedback_key: str,
    ls_framework: str = "openevals",
    **kwargs: Any,
) -> ResultOrResults:
    """Async twin of :func:`_run_evaluator`; awaits the scorer when it returns an awaitable."""
    return cast(
        ResultOrResults,
        await _arun_evaluator_untyped(
            run_name=run_name,
            scorer=scorer,
            feedback_key=feedback_key,
            ls_framework=ls_framework,
            **kwargs,
        ),
    )


if not TYPE_CHECKING:  # the names 0.2.2 bound here by importing them (openevals/_incidental.py)
    from openevals._incidental import incidental

    __getattr__ = incidental(__name__)
