"""Every judge evaluator is built by the evaluator contract and describes itself with its info;
no ``.core`` attribute, and no module outside ``openevals/_judge`` reads a judge's privates."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from openevals._contract import info_of
from openevals._judge.shell import judge_core
from openevals.code.llm import create_async_code_llm_as_judge, create_code_llm_as_judge
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
from openevals.pairwise import create_async_pairwise_llm_as_judge, create_pairwise_llm_as_judge
from openevals.rag import llm_metrics
from openevals.testing import FakeOpenAIServer, chat_model
from openevals.trajectory.llm import (
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)

PACKAGE = Path(__file__).resolve().parents[2] / "openevals"

CASES: list[tuple[Any, dict[str, Any], str, tuple[str, ...], bool]] = [
    (create_llm_as_judge, {"prompt": "{outputs}"}, "llm_as_judge", ("score",), False),
    (create_async_llm_as_judge, {"prompt": "{outputs}"}, "llm_as_judge", ("score",), True),
    (
        create_llm_as_judge,
        {"prompt": "{outputs}", "feedback_key": "tone"},
        "llm_as_tone_judge",
        ("tone",),
        False,
    ),
    (
        create_trajectory_llm_as_judge,
        {},
        "llm_as_trajectory_accuracy_judge",
        ("trajectory_accuracy",),
        False,
    ),
    (
        create_async_trajectory_llm_as_judge,
        {},
        "llm_as_trajectory_accuracy_judge",
        ("trajectory_accuracy",),
        True,
    ),
    (
        create_code_llm_as_judge,
        {"prompt": "{outputs}"},
        "code_llm_as_judge",
        ("code_correctness",),
        False,
    ),
    (
        create_async_code_llm_as_judge,
        {"prompt": "{outputs}"},
        "code_llm_as_judge",
        ("code_correctness",),
        True,
    ),
    (
        create_pairwise_llm_as_judge,
        {},
        "pairwise_llm_as_judge",
        ("pairwise_preference",),
        False,
    ),
    (
        create_async_pairwise_llm_as_judge,
        {},
        "pairwise_llm_as_judge",
        ("pairwise_preference",),
        True,
    ),
    (
        llm_metrics.create_answer_correctness_evaluator,
        {},
        "answer_correctness",
        ("answer_recall", "answer_precision", "answer_f1"),
        False,
    ),
    (
        llm_metrics.create_async_faithfulness_evaluator,
        {},
        "faithfulness",
        ("faithfulness",),
        True,
    ),
    (
        llm_metrics.create_context_relevance_evaluator,
        {},
        "context_relevance",
        ("context_relevance",),
        False,
    ),
    (
        llm_metrics.create_async_answer_relevancy_evaluator,
        {},
        "answer_relevancy",
        ("answer_relevancy",),
        True,
    ),
]


@pytest.mark.parametrize(("factory", "extra", "run_name", "keys", "is_async"), CASES)
@pytest.mark.parametrize("how", ["model_string", "chat_model"])
def test_every_judge_evaluator_carries_its_info(
    factory: Any,
    extra: dict[str, Any],
    run_name: str,
    keys: tuple[str, ...],
    is_async: bool,
    how: str,
    fake_openai: FakeOpenAIServer,
) -> None:
    if how == "model_string":
        evaluator = factory(model="openai:gpt-4.1-mini", **extra)
        label = "gpt-4.1-mini"
    else:
        evaluator = factory(judge=chat_model(fake_openai, model="gpt-test-mini"), **extra)
        label = "gpt-test-mini"
    info = info_of(evaluator)
    assert info is not None
    assert (info.run_name, info.feedback_keys, info.model) == (run_name, keys, label)
    assert info.judge is True and info.pure is False and info.is_async is is_async
    assert not hasattr(evaluator, "core")
    assert judge_core(evaluator).feedback_key  # the core is still reachable, through _judge
    # The runner reads this info (info_of), not the evaluator's insides.


def test_info_model_label_does_not_resolve_a_model_string() -> None:
    evaluator = create_llm_as_judge(prompt="{outputs}", model="openai:gpt-4o")
    assert info_of(evaluator).model == "gpt-4o"  # type: ignore[union-attr]
    assert judge_core(evaluator)._backend is None


def test_judge_core_of_a_foreign_callable_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not an LLM-as-judge evaluator"):
        judge_core(lambda **kw: 1)


def test_no_module_outside_judge_reads_judge_privates() -> None:
    private = re.compile(r"\.core\b\s*=|evaluator\.core\b|\._backend\b|\._model\b")
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith("_judge/"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if private.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []


def test_no_module_imports_llm_privates() -> None:
    pattern = re.compile(r"from openevals\.llm import .*\b_\w+")
    offenders = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if pattern.search(path.read_text())
    ]
    assert offenders == []
