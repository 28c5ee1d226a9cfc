"""Scripted judges: real judges (the whole judge pipeline, a real OpenAI client) whose model is the
fake server answering from a script, so a test knows every verdict in advance."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from openevals._repr import show

if TYPE_CHECKING:
    from openevals.testing.server import FakeOpenAIServer

__all__ = ["scripted_judge"]

_PROMPT = "Question: {inputs}\nAnswer: {outputs}\nGrade the answer."


def _answer(item: Any, index: int) -> dict[str, Any]:
    if isinstance(item, Mapping):
        if "score" not in item:
            raise ValueError(
                f"`answers[{index}]` must hold a 'score' (and optionally 'reasoning'); got "
                f"{show(sorted(item))}"
            )
        return {"reasoning": "scripted", **item}
    if isinstance(item, (bool, int, float)) and not isinstance(item, str):
        return {"reasoning": "scripted", "score": item}
    raise TypeError(
        f"`answers[{index}]` must be a score (bool or number) or a dict with 'score' and "
        f"'reasoning'; got {type(item).__name__}"
    )


def scripted_judge(
    server: FakeOpenAIServer,
    *answers: Any,
    prompt: Any = _PROMPT,
    use_async: bool = False,
    model: str = "gpt-test",
    **options: Any,
) -> Any:
    """An LLM-as-judge on ``server`` that answers ``answers`` in order, one per call.

    Each answer is a score (``True``, ``0.8``) or a dict with ``score`` and ``reasoning``. Once the
    script is used up, further calls get the server's default reply (so a test that calls more
    often than it scripted fails loudly with a judge output error). ``options`` go to
    :func:`openevals.llm.create_llm_as_judge` (``continuous=True``, ``choices=[...]``,
    ``feedback_key=...``); ``use_async=True`` builds the async judge.
    """
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
    from openevals.testing.server import async_openai_client, openai_client

    scripted = [_answer(item, i) for i, item in enumerate(answers)]
    for answer in scripted:
        server.queue_chat(json=answer)
    create: Callable[..., Any] = create_async_llm_as_judge if use_async else create_llm_as_judge
    client = (async_openai_client if use_async else openai_client)(server, max_retries=0)
    return create(prompt=prompt, judge=client, model=model, **options)
