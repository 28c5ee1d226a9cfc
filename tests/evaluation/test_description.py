"""``describe_evaluator``: the one place that looks inside evaluators, and what the runner reads."""

from __future__ import annotations

import asyncio
import functools
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import EvaluatorSpec, build_evaluator, evaluate
from openevals.evaluation.description import (
    EvaluatorDescription,
    describe_evaluator,
    display_name,
)
from openevals.exact import exact_match, exact_match_async
from openevals.json import create_json_match_evaluator
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.string.levenshtein import levenshtein_distance
from openevals.testing import FakeOpenAIServer, chat_model, openai_client

REPO = Path(__file__).resolve().parents[2]
ROWS = [{"outputs": "a", "reference_outputs": "a"}, {"outputs": "b", "reference_outputs": "a"}]


def test_deterministic_evaluators_are_pure_and_judge_free() -> None:
    for fn in (exact_match, levenshtein_distance, functools.partial(exact_match)):
        info = describe_evaluator(fn)
        assert info.pure and not info.uses_judge and not info.is_async, fn
    for name in ("recall:k=3", "ndcg", "mrr", "trajectory_match"):
        assert describe_evaluator(build_evaluator(name).evaluator).pure, name
    asynchronous = describe_evaluator(exact_match_async)
    assert asynchronous.is_async and not asynchronous.pure


def test_unknown_callables_are_neither_pure_nor_judges() -> None:
    def custom(*, outputs: Any, **kwargs: Any) -> bool:
        return bool(outputs)

    class Scorer:
        async def __call__(self, **kwargs: Any) -> float:
            return 1.0

    assert describe_evaluator(custom) == EvaluatorDescription()
    assert describe_evaluator(Scorer()) == EvaluatorDescription(is_async=True)
    # JSON match is deterministic, but pairing long lists is not cheap: it is not run inline.
    assert describe_evaluator(create_json_match_evaluator()) == EvaluatorDescription(
        run_name="json_match_evaluator"
    )


def test_judges_report_run_name_key_and_model() -> None:
    by_string = create_llm_as_judge(
        prompt="Is {outputs} right?", feedback_key="correct", model="openai:gpt-4.1-mini"
    )
    info = describe_evaluator(by_string)
    assert info == EvaluatorDescription(
        run_name="llm_as_correct_judge",
        feedback_keys=("correct",),
        model="gpt-4.1-mini",
        uses_judge=True,
    )
    with FakeOpenAIServer() as server:
        client = create_llm_as_judge(prompt="{outputs}", judge=openai_client(server), model="m-1")
        langchain = create_async_llm_as_judge(prompt="{outputs}", judge=chat_model(server))
    assert describe_evaluator(client).model == "m-1"
    assert describe_evaluator(client).feedback_keys == ("score",)
    described = describe_evaluator(langchain)
    assert described.is_async and described.uses_judge and described.model == "gpt-test"


def test_json_match_with_a_rubric_uses_a_judge() -> None:
    graded = create_json_match_evaluator(rubric={"tone": "is it polite"}, model="openai:gpt-x")
    info = describe_evaluator(graded)
    assert info.uses_judge and not info.pure


def test_info_a_user_attaches_is_what_the_runner_reads() -> None:
    from openevals._contract import EvaluatorInfo, attach_info

    def evaluator(**kwargs: Any) -> dict[str, Any]:
        usage = {"input_tokens": 1000, "output_tokens": 0, "total_tokens": 1000}
        return {"key": "k", "score": 1, "metadata": {"usage": usage}}

    attached = EvaluatorInfo(run_name="mine", model="my-model", pure=True)
    attach_info(evaluator, attached)
    expected = EvaluatorDescription(run_name="mine", model="my-model", pure=True)
    assert describe_evaluator(evaluator) == expected
    assert describe_evaluator(functools.partial(evaluator)) == expected
    assert display_name(evaluator) == "mine"

    threads: list[str] = []

    def spy(**kwargs: Any) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return evaluator(**kwargs)

    attach_info(spy, attached)
    result = evaluate(ROWS, [spy], prices={"my-model": (2.0, 0.0)}, progress=False)
    # The runner takes the model (and so the cost) and the inline decision from the description.
    info = result.summary["evaluators"]["spy"]
    assert info["model"] == "my-model"
    assert info["cost_usd"] == pytest.approx(2 * 1000 * 2.0 / 1e6)
    assert all(e["model"] == "my-model" for r in result.rows for e in r["evaluations"].values())
    assert threads and all(name == "openevals-evaluate" for name in threads)


def test_generic_function_names_fall_back_to_the_run_name() -> None:
    judge = create_llm_as_judge(prompt="{outputs}", feedback_key="tone", model="openai:gpt-x")
    assert display_name(judge) == "llm_as_tone_judge"
    assert display_name(exact_match) == "exact_match"
    assert display_name(lambda **kw: 1) == "<lambda>"

    def _private(**kwargs: Any) -> int:
        return 1

    assert display_name(_private) == "private"
    assert display_name(functools.partial(_private)) == "private"


def test_registry_inline_flags_come_from_the_description() -> None:
    for name in ("exact_match", "levenshtein_distance", "recall", "ndcg", "trajectory_match"):
        assert build_evaluator(name).inline is True, name
    assert build_evaluator("json_match").inline is False
    spec = build_evaluator("llm:CORRECTNESS_PROMPT", model="openai:gpt-x")
    assert spec.inline is False


def test_inline_evaluators_run_on_the_loop_thread_and_others_in_the_pool() -> None:
    seen: dict[str, str] = {}

    def record(name: str) -> Any:
        def evaluator(**kwargs: Any) -> bool:
            seen[name] = threading.current_thread().name
            return True

        return evaluator

    evaluate(
        ROWS[:1],
        {
            "inline": EvaluatorSpec(record("inline"), inline=True),
            "pooled": EvaluatorSpec(record("pooled")),
        },
        progress=False,
    )
    assert seen["inline"] == "openevals-evaluate"
    assert seen["pooled"].startswith("openevals-eval_")


def test_only_the_description_module_reads_evaluator_internals() -> None:
    """No other module of the runner, the CLI or the report reads ``.core`` / ``_backend``."""
    private = re.compile(r"""\.core\b|["']core["']|_backend\b|\._model\b|_PURE_MODULES""")
    files = [*sorted((REPO / "openevals" / "evaluation").glob("*.py")), REPO / "openevals/cli.py"]
    offenders = [
        f"{path.name}:{n}"
        for path in files
        if path.name != "description.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert offenders == []


def test_async_judges_are_described_without_being_called() -> None:
    judge = create_async_llm_as_judge(prompt="{outputs}", model="openai:gpt-4o")
    info = describe_evaluator(judge)
    assert info.is_async and info.model == "gpt-4o" and info.uses_judge
    assert asyncio.iscoroutinefunction(judge)


def test_the_contract_info_is_what_the_runner_reads() -> None:
    from openevals._contract import EvaluatorInfo, make_evaluator

    info = EvaluatorInfo(run_name="contracted", feedback_keys=("k",), model="m-1", pure=True)
    evaluator = make_evaluator(lambda **kw: 1.0, info)
    description = describe_evaluator(evaluator)
    assert description == EvaluatorDescription(
        run_name="contracted", feedback_keys=("k",), model="m-1", pure=True, uses_judge=False
    )
    # Without the info the same function is described as unknown (neither pure nor a judge).
    assert describe_evaluator(lambda **kw: 1.0).pure is False
