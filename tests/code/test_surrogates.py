"""Lone surrogates in the code evaluators: which sinks refuse them, and which pass them through."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openevals._text import LoneSurrogateError
from openevals.code.base import (
    _create_async_base_code_evaluator,
    _create_base_code_evaluator,
    checked_code,
)

CODE = "x = 1\ns = 'a\udcff'\n"


def test_checked_code_refuses_surrogates_only_for_a_sink() -> None:
    assert checked_code(CODE, "outputs", None) is CODE
    assert checked_code("x = '\U0001f600'", "outputs", "mypy") == "x = '\U0001f600'"
    with pytest.raises(
        LoneSurrogateError,
        match=r"^`outputs\[2\]` contains a lone surrogate code point U\+DCFF at index 12 "
        r"\(line 2, column 7\) of its code; .* for mypy\. ",
    ):
        checked_code(CODE, "outputs[2]", "mypy")


def test_custom_scorers_receive_surrogate_code_unchanged() -> None:
    """A scorer of your own decides what to do with such code: it gets exactly what was extracted
    (an in-memory comparison, for instance, needs no UTF-8)."""
    seen: list[str] = []

    def scorer(*, outputs: str, **_: Any) -> bool:
        seen.append(outputs)
        return True

    sync = _create_base_code_evaluator(scorer=scorer, run_name="r", feedback_key="k")
    asynchronous = _create_async_base_code_evaluator(scorer=scorer, run_name="r", feedback_key="k")
    assert sync(outputs=CODE)["score"] is True  # type: ignore[index]
    assert asyncio.run(asynchronous(outputs=CODE))["score"] is True  # type: ignore[index]
    assert seen == [CODE, CODE]


def test_llm_extraction_refuses_surrogates_even_for_custom_scorers() -> None:
    """The extraction model is a sink of its own: the request body is UTF-8 JSON."""

    class NeverCalled:
        def bind_tools(self, tools: Any, **_: Any) -> Any:
            return self

        def invoke(self, *_: Any, **__: Any) -> Any:
            raise AssertionError("the model must not be called")

        async def ainvoke(self, *_: Any, **__: Any) -> Any:
            raise AssertionError("the model must not be called")

    evaluator = _create_base_code_evaluator(
        scorer=lambda **_: True,
        code_extraction_strategy="llm",
        client=NeverCalled(),
        run_name="r",
        feedback_key="k",
    )
    with pytest.raises(LoneSurrogateError, match=r"of its text; .* for the code-extraction model"):
        evaluator(outputs={"role": "assistant", "content": CODE})
