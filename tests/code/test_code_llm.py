"""Code LLM-as-judge: extraction first, then the judge core (fake OpenAI server)."""

from __future__ import annotations

import asyncio

from openevals.code.llm import create_async_code_llm_as_judge, create_code_llm_as_judge
from openevals.prompts import (
    CODE_CORRECTNESS_PROMPT,
    CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
)
from openevals.testing import FakeOpenAIServer, chat_model, openai_client

INPUTS = "Rewrite the code below to be async:\n\n```python\ndef f():\n    return 1\n```\n"
OUTPUTS = (
    "Here you go:\n\n```python\nasync def f():\n    process = await subprocess.run(['x'])\n"
    "    return process\n```\n"
)
VERDICT = "It still awaits subprocess.run, which is synchronous. Thus, the score should be: false."


def _user(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")


def test_readme_example_with_markdown_extraction(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": VERDICT, "score": False})
    judge = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT,
        judge=chat_model(fake_openai),
        code_extraction_strategy="markdown_code_blocks",
    )
    result = judge(inputs=INPUTS, outputs=OUTPUTS)
    assert result["key"] == "code_correctness"
    assert result["score"] is False and result["comment"] == VERDICT
    text = _user(fake_openai.last_chat_body)
    assert "async def f():" in text and "Here you go" not in text  # only the code is judged


def test_extraction_failure_skips_the_judge(fake_openai: FakeOpenAIServer) -> None:
    judge = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT,
        judge=chat_model(fake_openai),
        code_extraction_strategy="markdown_code_blocks",
    )
    result = judge(inputs=INPUTS, outputs="I cannot write that code.")
    assert result["score"] is False
    assert result["metadata"] == {"code_extraction_failed": True}
    assert fake_openai.chat_requests == []


def test_async_with_reference_and_openai_client(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "matches the reference", "score": 0.9})
    judge = create_async_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT_WITH_REFERENCE_OUTPUTS,
        judge=openai_client(fake_openai),
        model="gpt-test",
        continuous=True,
        feedback_key="",
    )
    result = asyncio.run(
        judge(
            inputs="Write f",
            outputs="def f():\n    return 1\n",
            reference_outputs="def f(): return 1",
        )
    )
    assert result["key"] == "code_correctness"  # an empty key falls back to the default
    assert result["score"] == 0.9
    assert "def f(): return 1" in _user(fake_openai.last_chat_body)


def test_custom_extractor(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    judge = create_code_llm_as_judge(
        prompt=CODE_CORRECTNESS_PROMPT,
        judge=chat_model(fake_openai),
        code_extractor=lambda outputs: outputs["code"],
    )
    assert judge(inputs="x", outputs={"code": "print(1)"})["score"] is True
    assert "print(1)" in _user(fake_openai.last_chat_body)
