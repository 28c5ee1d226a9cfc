"""``score_weighting="logprobs"`` (G-Eval) and the ``openevals.llm.init_chat_model`` patch point."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any
from unittest.mock import MagicMock, patch

import pytest
from langchain_core.language_models.chat_models import BaseChatModel

from openevals._judge.errors import JudgeLogprobsError
from openevals._judge.samples import weighted_score
from openevals._judge.schema import default_score_schema
from openevals.llm import (
    _create_llm_as_judge_scorer,
    create_async_llm_as_judge,
    create_llm_as_judge,
)
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

BOOL = default_score_schema(continuous=False, choices=None, use_reasoning=True)
FIVE = default_score_schema(continuous=False, choices=[1, 2, 3, 4, 5], use_reasoning=True)


def _judge(server: FakeOpenAIServer, **kw: Any) -> Any:
    return create_llm_as_judge(
        prompt="{outputs}", judge=openai_client(server), model="m", score_weighting="logprobs", **kw
    )


def test_boolean_score_is_the_probability_of_true(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "it is true that it passes", "score": True})
    fake_openai.queue_logprobs({"true": 0.8, "false": 0.2})
    result = _judge(fake_openai)(outputs="x")
    body = fake_openai.last_chat_body
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and "tools" not in body
    assert result["score"] == pytest.approx(0.8)
    assert result["comment"] == "it is true that it passes"
    probabilities = result["metadata"]["score_probabilities"]
    assert probabilities == pytest.approx({"true": 0.8, "false": 0.2})
    assert result["metadata"]["score_weighting"] == "logprobs"


async def test_choices_are_probability_weighted(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "good", "score": 4})
    fake_openai.queue_logprobs({"4": 0.6, "5": 0.3, "3": 0.05, "x": 0.05})
    judge = create_async_llm_as_judge(
        prompt="{outputs}",
        judge=async_openai_client(fake_openai),
        model="m",
        choices=[1, 2, 3, 4, 5],
        score_weighting="logprobs",
    )
    result = await judge(outputs="x")
    assert result["score"] == pytest.approx((4 * 0.6 + 5 * 0.3 + 3 * 0.05) / 0.95)
    assert set(result["metadata"]["score_probabilities"]) == {"3", "4", "5"}


def test_weighted_samples_are_averaged(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "a", "score": True})
    fake_openai.queue_chat(json={"reasoning": "b", "score": False})
    fake_openai.queue_logprobs({"true": 0.9, "false": 0.1})
    fake_openai.queue_logprobs({"false": 0.7, "true": 0.3})
    result = _judge(fake_openai, samples=2)(outputs="x")
    assert fake_openai.last_chat_body["n"] == 2
    assert result["score"] == pytest.approx(0.6)
    assert result["metadata"]["samples"] == pytest.approx([0.9, 0.3])
    assert result["metadata"]["std"] == pytest.approx(0.3)


@pytest.mark.parametrize("is_async", [False, True])
async def test_server_without_logprobs_raises(
    fake_openai: FakeOpenAIServer, is_async: bool
) -> None:
    fake_openai.omit_logprobs = True
    fake_openai.queue_chat(json={"reasoning": "a", "score": True})
    with pytest.raises(JudgeLogprobsError, match="does not return `logprobs`"):
        if is_async:
            judge = create_async_llm_as_judge(
                prompt="{outputs}",
                judge=async_openai_client(fake_openai),
                model="m",
                score_weighting="logprobs",
            )
            await judge(outputs="x")
        else:
            _judge(fake_openai)(outputs="x")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"judge": "chat_model"}, "runs through LangChainBackend"),
        ({"model": "anthropic:claude-x"}, "runs through LangChainBackend"),
        ({"model": "openai:gpt-x", "structured_output_kwargs": {"strict": True}}, "LangChain"),
        ({"model": "openai:gpt-x", "continuous": True}, "cannot be combined with `continuous"),
        ({"model": "openai:gpt-x", "output_schema": {"type": "object"}}, "`output_schema`"),
        ({"model": "openai:gpt-x", "choices": [0, 0.5, 1]}, "whole numbers from 0 to 999"),
        ({"model": "openai:gpt-x", "choices": [1, 5000]}, "whole numbers from 0 to 999"),
    ],
)
def test_weighting_that_cannot_work_fails_at_creation(
    options: dict[str, Any], message: str, fake_openai: FakeOpenAIServer
) -> None:
    if options.get("judge") == "chat_model":
        options = {"judge": chat_model(fake_openai)}
    with pytest.raises(ValueError, match=message):
        create_llm_as_judge(prompt="{outputs}", score_weighting="logprobs", **options)


def _entry(token: str, alternatives: dict[str, float]) -> dict[str, Any]:
    return {
        "token": token,
        "logprob": math.log(alternatives.get(token, 1.0)),
        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alternatives.items()],
    }


def test_weighted_score_reads_the_score_token_not_the_reasoning() -> None:
    tokens = ['{"', "reasoning", '":', ' "', "true", " story", '",', ' "', "score", '":', " false"]
    content = [_entry(t, {}) for t in tokens[:-1]] + [
        _entry(" false", {" false": 0.75, " true": 0.25})
    ]
    score, probabilities = weighted_score(BOOL, {"content": content})
    assert score == pytest.approx(0.25)
    assert probabilities == pytest.approx({"true": 0.25, "false": 0.75})


@pytest.mark.parametrize(
    ("logprobs", "message"),
    [
        (None, "carries none"),
        ({"content": []}, "carries none"),
        ({"content": [_entry("no score here", {})]}, "do not spell a JSON 'score'"),
        ({"content": [_entry('"score": ', {}), _entry("maybe", {"maybe": 1.0})]}, "spells a valid"),
    ],
)
def test_weighted_score_errors(logprobs: Any, message: str) -> None:
    with pytest.raises(JudgeLogprobsError, match=message):
        weighted_score(FIVE, logprobs)


# --------------------------------------------------------------------------- init_chat_model


def _mock_judge(answer: dict[str, Any]) -> MagicMock:
    mock_judge = MagicMock(spec=BaseChatModel)
    mock_judge.with_structured_output.return_value.invoke.return_value = answer
    return mock_judge


def test_patched_init_chat_model_resolves_model_strings() -> None:
    scorer = _create_llm_as_judge_scorer(
        prompt="Evaluate: {outputs}", model="google_genai:gemini-2.0-flash"
    )
    with patch("openevals.llm.init_chat_model") as mock_init:
        mock_init.return_value = _mock_judge({"score": True, "reasoning": "ok"})
        assert scorer(outputs="two images") == (True, "ok", None)
    mock_init.assert_called_once_with(model="google_genai:gemini-2.0-flash")
    call = mock_init.return_value.with_structured_output.return_value.invoke.call_args
    messages = call[0][0]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    assert messages[0]["content"] == "Evaluate: two images"


def test_patched_init_chat_model_with_attachments() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    evaluator = create_llm_as_judge(
        prompt="Evaluate this image: {outputs}\n{attachments}", model="openai:gpt-6-luna"
    )
    with patch("openevals.llm.init_chat_model") as mock_init:
        mock_init.return_value = _mock_judge({"score": False, "reasoning": "blurry"})
        result = evaluator(
            outputs="a fruit bowl", attachments={"mime_type": "image/png", "data": png}
        )
    assert result["score"] is False and result["comment"] == "blurry"
    call = mock_init.return_value.with_structured_output.return_value.invoke.call_args
    content = call[0][0][0]["content"]
    assert content[0]["type"] == "text"
    assert content[1]["type"] == "image" and content[1]["base64"] == png.split(",")[1]


def test_unpatched_model_strings_resolve_as_before(fake_openai: FakeOpenAIServer) -> None:
    import openevals.llm
    from openevals._judge.resolve import init_chat_model

    assert openevals.llm.init_chat_model is init_chat_model
    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    with patch.dict("os.environ", {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fake_openai.base_url}):
        judge = create_llm_as_judge(prompt="{outputs}", model="openai:gpt-test")
        assert judge(outputs="x")["score"] is True
    assert type(judge_backend(judge)).__name__ == "OpenAIClientBackend"


def judge_backend(evaluator: Any) -> Any:
    from openevals._judge.shell import judge_core

    return judge_core(evaluator).backend


def test_init_chat_model_is_lazy() -> None:
    code = (
        "import sys, openevals.llm as m; assert callable(m.init_chat_model); "
        "print(sorted(k for k in sys.modules if k.startswith(('langchain', 'openai'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
