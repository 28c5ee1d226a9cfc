"""``EvaluatorInfo`` is the only description of an evaluator: what the runner, the CLI and the
report read (through ``info_of``), with async-ness and partial unwrapping decided in _contract."""

from __future__ import annotations

import asyncio
import functools
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from openevals._contract import (
    EvaluatorInfo,
    display_name,
    info_of,
    is_async_callable,
    unwrap,
)
from openevals.evaluation import Budget, EvaluatorSpec, build_evaluator, evaluate
from openevals.exact import exact_match, exact_match_async
from openevals.json import create_json_match_evaluator
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.string.levenshtein import levenshtein_distance
from openevals.testing import FakeOpenAIServer, chat_model, openai_client

REPO = Path(__file__).resolve().parents[2]
ROWS = [{"outputs": "a", "reference_outputs": "a"}, {"outputs": "b", "reference_outputs": "a"}]


def test_deterministic_evaluators_are_pure_and_judge_free() -> None:
    for fn in (exact_match, levenshtein_distance, functools.partial(exact_match)):
        info = info_of(fn)
        assert info is not None and info.pure and not info.judge and not info.is_async, fn
        assert not is_async_callable(fn)
    for name in ("recall:k=3", "ndcg", "mrr", "trajectory_match"):
        described = info_of(build_evaluator(name).evaluator)
        assert described is not None and described.pure, name
    asynchronous = info_of(exact_match_async)
    assert asynchronous is not None and asynchronous.is_async and not asynchronous.pure
    assert is_async_callable(exact_match_async)
    assert is_async_callable(functools.partial(functools.partial(exact_match_async)))


def test_unknown_callables_are_neither_pure_nor_judges() -> None:
    def custom(*, outputs: Any, **kwargs: Any) -> bool:
        return bool(outputs)

    class Scorer:
        async def __call__(self, **kwargs: Any) -> float:
            return 1.0

    assert info_of(custom) is None and not is_async_callable(custom)
    assert info_of(Scorer()) is None and is_async_callable(Scorer())
    assert is_async_callable(functools.partial(Scorer()))
    # JSON match is deterministic, but pairing long lists is not cheap: it is not run inline.
    assert info_of(create_json_match_evaluator()) == EvaluatorInfo(run_name="json_match_evaluator")


def test_judges_report_run_name_key_and_model() -> None:
    by_string = create_llm_as_judge(
        prompt="Is {outputs} right?", feedback_key="correct", model="openai:gpt-4.1-mini"
    )
    info = info_of(by_string)
    assert info is not None
    assert (info.run_name, info.feedback_keys, info.model, info.judge, info.pure) == (
        "llm_as_correct_judge",
        ("correct",),
        "gpt-4.1-mini",
        True,
        False,
    )
    with FakeOpenAIServer() as server:
        client = create_llm_as_judge(prompt="{outputs}", judge=openai_client(server), model="m-1")
        langchain = create_async_llm_as_judge(prompt="{outputs}", judge=chat_model(server))
    client_info = info_of(client)
    assert client_info is not None
    assert client_info.model == "m-1" and client_info.feedback_keys == ("score",)
    described = info_of(langchain)
    assert described is not None
    assert described.is_async and described.judge and described.model == "gpt-test"


def test_json_match_with_a_rubric_uses_a_judge() -> None:
    graded = create_json_match_evaluator(rubric={"tone": "is it polite"}, model="openai:gpt-x")
    info = info_of(graded)
    assert info is not None and info.judge and not info.pure


def test_info_a_user_attaches_is_what_the_runner_reads() -> None:
    from openevals._contract import attach_info

    def evaluator(**kwargs: Any) -> dict[str, Any]:
        usage = {"input_tokens": 1000, "output_tokens": 0, "total_tokens": 1000}
        return {"key": "k", "score": 1, "metadata": {"usage": usage}}

    attached = EvaluatorInfo(run_name="mine", model="my-model", pure=True)
    attach_info(evaluator, attached)
    assert info_of(evaluator) is attached
    assert info_of(functools.partial(evaluator)) is attached
    assert display_name(evaluator) == "mine"

    threads: list[str] = []

    def spy(**kwargs: Any) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        return evaluator(**kwargs)

    attach_info(spy, attached)
    result = evaluate(ROWS, [spy], budget=Budget(prices={"my-model": (2.0, 0.0)}), progress=False)
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


def test_no_runner_module_reads_evaluator_internals() -> None:
    """No other module of the runner, the CLI or the report reads ``.core`` / ``_backend``."""
    # (``openevals.comparison.core`` is a module path, not a judge's core.)
    private = re.compile(
        r"""(?<!comparison)\.core\b|["']core["']|_backend\b|\._model\b|_PURE_MODULES"""
    )
    files = [*sorted((REPO / "openevals" / "evaluation").glob("*.py")), REPO / "openevals/cli.py"]
    offenders = [
        f"{path.name}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if private.search(line)
    ]
    assert offenders == []


def test_async_judges_are_described_without_being_called() -> None:
    judge = create_async_llm_as_judge(prompt="{outputs}", model="openai:gpt-4o")
    info = info_of(judge)
    assert info is not None and info.is_async and info.model == "gpt-4o" and info.judge
    assert asyncio.iscoroutinefunction(judge)


def test_the_contract_info_is_what_the_runner_reads() -> None:
    from openevals._contract import make_evaluator

    info = EvaluatorInfo(run_name="contracted", feedback_keys=("k",), model="m-1", pure=True)
    evaluator = make_evaluator(lambda **kw: 1.0, info)
    assert info_of(evaluator) is info
    # Without the info the same function is unknown (no info: neither pure nor a judge).
    assert info_of(lambda **kw: 1.0) is None


def test_unwrap_returns_the_target_and_its_partials() -> None:
    bound = functools.partial(exact_match, outputs=1)
    assert unwrap(bound) == (exact_match, [bound])
    assert unwrap(exact_match) == (exact_match, [])


def test_async_ness_and_partials_are_decided_only_in_the_contract() -> None:
    """No module outside ``_contract.py`` (and the judge internals, owned elsewhere) looks
    through ``functools.partial`` or asks ``inspect`` whether an evaluator is a coroutine."""
    pattern = re.compile(r"iscoroutinefunction|isinstance\([^)]*functools\.partial")
    allowed = {"_contract.py", "testing/sandbox.py", "code/extraction.py"}
    offenders = [
        f"{relative}:{n}"
        for path in sorted((REPO / "openevals").rglob("*.py"))
        if (relative := path.relative_to(REPO / "openevals").as_posix()) not in allowed
        and not relative.startswith("_judge/")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []
    assert not (REPO / "openevals" / "evaluation" / "description.py").exists()
