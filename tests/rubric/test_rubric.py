"""The multi-criteria rubric judge against the fake OpenAI server."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from openevals import create_async_rubric_judge, create_rubric_judge
from openevals.evaluation import evaluate
from openevals.llm import JudgeOutputError
from openevals.rubric import Criterion, calibrate_rubric
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

CRITERIA: dict[str, Any] = {
    "correct": "The answer is factually correct.",
    "polite": {"description": "The tone is polite.", "kind": "continuous"},
    "detail": {"description": "How detailed the answer is.", "choices": [0, 0.5, 1]},
}
GOOD = {"reasoning": "Right, kind, brief.", "correct": True, "polite": 0.9, "detail": 0.5}


def _judge(server: FakeOpenAIServer, **options: Any) -> Any:
    return create_rubric_judge(
        criteria=CRITERIA, judge=openai_client(server), model="gpt-test", **options
    )


def _user_text(body: dict[str, Any]) -> str:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content)
    return str(content)


def test_one_call_grades_every_criterion(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json=GOOD)
    criteria = copy.deepcopy(CRITERIA)
    results = _judge(fake_openai)(inputs="2+2?", outputs="4", reference_outputs="4")
    assert len(fake_openai.chat_requests) == 1
    assert [(r["key"], r["score"]) for r in results] == [
        ("correct", True),
        ("polite", 0.9),
        ("detail", 0.5),
    ]
    assert {r["comment"] for r in results} == {"Right, kind, brief."}
    usage = results[0]["metadata"]["usage"]
    assert usage["total_tokens"] > 0
    assert all(r["metadata"]["usage"] == usage for r in results)
    body = fake_openai.last_chat_body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["reasoning", "correct", "polite", "detail"]
    assert schema["properties"]["detail"]["enum"] == [0.0, 0.5, 1.0]
    text = _user_text(body)
    assert "- correct (boolean): The answer is factually correct." in text
    assert "- polite (continuous): The tone is polite." in text
    assert "- detail (choices: one of 0, 0.5, 1): How detailed the answer is." in text
    assert "<output>\n4\n</output>" in text
    assert criteria == CRITERIA


@pytest.mark.parametrize(
    "bad",
    [
        {"reasoning": "r", "correct": True, "polite": 0.9},  # omits a criterion
        {**GOOD, "concise": True},  # adds an unknown one
        {**GOOD, "correct": "yes"},  # wrong kind
        {**GOOD, "polite": 1.5},  # out of range
        {**GOOD, "detail": 0.25},  # not one of the choices
        {**GOOD, "polite": True},  # a boolean for a continuous criterion (was scored 1.0)
        {**GOOD, "detail": True},  # a boolean for a choices criterion (was scored 1.0)
        {**GOOD, "detail": False},  # (was scored 0.0)
    ],
    ids=[
        "omitted",
        "unknown",
        "wrong-kind",
        "out-of-range",
        "not-a-choice",
        "bool-continuous",
        "bool-choice",
        "false-choice",
    ],
)
def test_bad_answers_raise_after_one_repair(fake_openai: FakeOpenAIServer, bad: dict) -> None:
    fake_openai.set_default_chat(json=bad)
    judge = _judge(fake_openai)
    with pytest.raises(JudgeOutputError, match="repair"):
        judge(outputs="4")
    assert len(fake_openai.chat_requests) == 2  # the answer, then the one repair request


def test_repaired_answer_is_used(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "correct": True})
    fake_openai.queue_chat(json=GOOD)
    results = _judge(fake_openai)(outputs="4")
    assert [r["score"] for r in results] == [True, 0.9, 0.5]
    repair = _user_text(fake_openai.last_chat_body)
    assert "polite" in repair


def test_async_twin_with_a_callers_async_client(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(json=GOOD)
    judge = create_async_rubric_judge(
        criteria=CRITERIA, judge=async_openai_client(fake_openai), model="gpt-test"
    )
    sync = _judge(fake_openai)(outputs="4")

    async def run() -> Any:
        first = await judge(outputs="4")
        fake_openai.set_default_chat(json={"reasoning": "r"})
        with pytest.raises(JudgeOutputError):
            await judge(outputs="4")
        return first

    assert asyncio.run(run()) == sync


def test_langchain_chat_model_and_model_string(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.set_default_chat(json={"reasoning": "ok", "short": False})
    judge = create_rubric_judge(
        criteria={"short": "Under ten words."}, judge=chat_model(fake_openai)
    )
    assert judge(outputs="x")[0] == {
        "key": "short",
        "score": False,
        "comment": "ok",
        "metadata": judge(outputs="x")[0]["metadata"],
    }
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    owned = create_rubric_judge(criteria={"short": "Under ten words."}, model="openai:gpt-test")
    assert owned(outputs="x")[0]["score"] is False


def test_samples_vote_per_criterion(fake_openai: FakeOpenAIServer) -> None:
    for polite, correct, detail in ((0.6, True, 1), (0.9, False, 1), (0.9, True, 0)):
        fake_openai.queue_chat(
            json={"reasoning": "r", "correct": correct, "polite": polite, "detail": detail}
        )
    fake_openai.set_default_chat(json=GOOD)
    results = _judge(fake_openai, samples=3)(outputs="4")
    by_key = {r["key"]: r for r in results}
    assert by_key["correct"]["score"] is True
    assert by_key["polite"]["score"] == pytest.approx(0.8)
    assert by_key["detail"]["score"] == 1.0
    assert sorted(by_key["polite"]["metadata"]["samples"]) == [0.6, 0.9, 0.9]


def test_attachments_and_few_shot_examples_reach_the_request(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json=GOOD)
    judge = _judge(
        fake_openai,
        prompt="Grade {outputs} on:\n{criteria}\n{attachments}",
        few_shot_examples=[
            {"inputs": "1+1?", "outputs": "2", "score": True, "reasoning": "correct"}
        ],
        system="Be strict.",
    )
    judge(outputs="4", attachments="https://example.com/chart.png")
    body = fake_openai.last_chat_body
    assert body["messages"][0] == {"role": "system", "content": "Be strict."}
    content = body["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}} in content
    assert "1+1?" in _user_text(body)


def test_batch_runner_and_its_cache(fake_openai: FakeOpenAIServer, tmp_path: Any) -> None:
    fake_openai.set_default_chat(json=GOOD)
    data = [{"inputs": f"q{i}", "outputs": f"a{i}"} for i in range(4)]
    judge = _judge(fake_openai)
    cache = tmp_path / "cache.sqlite"
    first = evaluate(data, [judge], cache=cache, progress=False)
    assert len(fake_openai.chat_requests) == 4
    for row in first.rows:
        (evaluation,) = row["evaluations"].values()
        assert [r["key"] for r in evaluation["results"]] == ["correct", "polite", "detail"]
    second = evaluate(data, [judge], cache=cache, progress=False)
    assert len(fake_openai.chat_requests) == 4  # every answer came from the cache
    assert [r["evaluations"] for r in second.rows] != []
    fake_openai.set_default_chat(json={"reasoning": "r"})
    failed = evaluate(data[:1], [_judge(fake_openai)], progress=False)
    (evaluation,) = failed.rows[0]["evaluations"].values()
    assert evaluation["error"] is not None and evaluation["results"] == []


def test_calibration_gives_one_report_per_criterion(fake_openai: FakeOpenAIServer) -> None:
    answers = [
        {"reasoning": "r", "correct": True, "polite": 0.9, "detail": 1},
        {"reasoning": "r", "correct": False, "polite": 0.2, "detail": 0},
        {"reasoning": "r", "correct": True, "polite": 0.5, "detail": 0.5},
        {"reasoning": "r", "correct": False, "polite": 0.9, "detail": 1},
    ]

    def responder(request: Any) -> Any:
        text = _user_text(request.body if hasattr(request, "body") else request)
        for i in range(4):
            if f"<output>\nanswer {i}\n</output>" in text:
                return {"json": answers[i]}
        return None

    fake_openai.set_responder(responder)
    data = [
        {
            "outputs": f"answer {i}",
            "human_correct": [True, False, True, True][i],
            "human_polite": [1.0, 0.0, 0.5, 0.9][i],
        }
        for i in range(4)
    ]
    judge = _judge(fake_openai)
    reports = calibrate_rubric(
        data,
        judge,
        labels={"correct": "human_correct", "polite": "human_polite"},
        progress=False,
        resamples=50,
    )
    assert set(reports) == {"correct", "polite"}
    assert reports["correct"].feedback_key == "correct"
    assert reports["correct"].agreement.accuracy.value == pytest.approx(0.75)
    assert reports["polite"].judge_scores == "continuous"
    assert len(fake_openai.chat_requests) == 4  # one model call per row for both reports
    with pytest.raises(ValueError, match="does not grade"):
        calibrate_rubric(data, judge, labels={"tone": "human_polite"})


@pytest.mark.parametrize(
    ("criteria", "error", "words"),
    [
        ({}, ValueError, "at least one"),
        ("correct", TypeError, "`criteria` must be a dict"),
        ({"reasoning": "x"}, ValueError, "other than 'reasoning'"),
        ({"has space": "x"}, ValueError, "identifiers"),
        ({"a": ""}, ValueError, "description"),
        ({"a": {"description": "x", "kind": "scale"}}, ValueError, "kind"),
        ({"a": {"description": "x", "choices": [1]}}, ValueError, "two or more"),
        ({"a": {"description": "x", "choices": [0, float("nan")]}}, ValueError, "finite"),
        ({"a": {"description": "x", "choices": [0, float("inf")]}}, ValueError, "finite"),
        ({"a": {"description": "x", "kind": "boolean", "choices": [0, 1]}}, ValueError, "choices"),
        ({"a": {"description": "x", "weight": 2}}, ValueError, "unknown fields"),
        ({"a": 3}, TypeError, r"criteria\['a'\]"),
    ],
)
def test_bad_criteria_raise_at_creation(criteria: Any, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        create_rubric_judge(criteria=criteria, model="openai:gpt-test")


def test_criterion_objects_and_missing_outputs(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"reasoning": "r", "a": 1})
    judge = create_rubric_judge(
        criteria=[Criterion("a", "desc", "choices", (1.0, 2.0))],
        judge=openai_client(fake_openai),
        model="gpt-test",
    )
    assert judge(outputs="x")[0]["score"] == 1.0
    with pytest.raises(ValueError, match="needs `outputs`"):
        judge(inputs="only inputs")


# ------------------------------------------------------------------ use_reasoning, score_weighting

GRADED: dict[str, Any] = {
    "correct": "The answer is factually correct.",
    "stars": {"description": "Overall quality.", "choices": [1, 2, 3, 4, 5]},
}


def test_use_reasoning_false_drops_the_reasoning_field(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"correct": True, "polite": 0.5, "detail": 1})
    results = _judge(fake_openai, use_reasoning=False)(outputs="4")
    schema = fake_openai.last_chat_body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["correct", "polite", "detail"]
    assert "reasoning" not in schema["properties"]
    assert [(r["key"], r["score"], r["comment"]) for r in results] == [
        ("correct", True, None),
        ("polite", 0.5, None),
        ("detail", 1.0, None),
    ]


def test_async_use_reasoning_false(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(json={"correct": False})
    judge = create_async_rubric_judge(
        criteria={"correct": "Correct."},
        judge=async_openai_client(fake_openai),
        model="gpt-test",
        use_reasoning=False,
    )
    (result,) = asyncio.run(judge(outputs="5"))
    assert result["score"] is False and result["comment"] is None


def test_logprobs_weight_every_criterion(fake_openai: FakeOpenAIServer) -> None:
    judge = create_rubric_judge(
        criteria=GRADED, judge=openai_client(fake_openai), model="m", score_weighting="logprobs"
    )
    fake_openai.queue_chat(json={"reasoning": "fine", "correct": True, "stars": 4})
    fake_openai.queue_logprobs({"4": 0.6, "5": 0.3, "3": 0.1})
    correct, stars = judge(outputs="x")
    body = fake_openai.last_chat_body
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and "tools" not in body
    assert correct["score"] == pytest.approx(1.0)  # `true` was the only alternative
    assert correct["metadata"]["score_probabilities"] == pytest.approx({"true": 1, "false": 0})
    assert stars["score"] == pytest.approx(4 * 0.6 + 5 * 0.3 + 3 * 0.1)
    assert stars["metadata"]["score_probabilities"] == pytest.approx({"3": 0.1, "4": 0.6, "5": 0.3})
    assert stars["metadata"]["score_weighting"] == "logprobs"
    assert stars["comment"] == "fine" and "usage" in stars["metadata"]
    fake_openai.queue_chat(json={"reasoning": "hm", "correct": True, "stars": 2})
    fake_openai.queue_logprobs({"true": 0.7, "false": 0.3})
    correct, stars = judge(outputs="x")
    assert correct["score"] == pytest.approx(0.7) and stars["score"] == pytest.approx(2.0)


def test_async_logprobs_average_the_samples(fake_openai: FakeOpenAIServer) -> None:
    judge = create_async_rubric_judge(
        criteria={"correct": "Correct."},
        judge=async_openai_client(fake_openai),
        model="m",
        score_weighting="logprobs",
        samples=2,
    )
    fake_openai.max_choices = 1  # one completion per request: the two samples are two requests
    for p in (0.9, 0.5):
        fake_openai.queue_chat(json={"reasoning": "r", "correct": True})
        fake_openai.queue_logprobs({"true": p, "false": 1 - p})
    (result,) = asyncio.run(judge(outputs="x"))
    assert result["score"] == pytest.approx(0.7)
    assert result["metadata"]["samples"] == pytest.approx([0.9, 0.5])
    assert len(result["metadata"]["score_probabilities"]) == 2


@pytest.mark.parametrize(
    ("criteria", "options", "error", "words"),
    [
        (CRITERIA, {"score_weighting": "logprobs"}, ValueError, "criterion 'polite' is continuous"),
        (
            {"detail": {"description": "d", "choices": [0, 0.5, 1]}},
            {"score_weighting": "logprobs"},
            ValueError,
            "the choices of criterion 'detail'",
        ),
        (GRADED, {"score_weighting": "probs"}, ValueError, "must be None or 'logprobs'"),
        (GRADED, {"use_reasoning": "no"}, TypeError, "`use_reasoning` must be True or False"),
    ],
)
def test_weighting_and_reasoning_options_are_checked_at_creation(
    fake_openai: FakeOpenAIServer, criteria: Any, options: dict, error: type, words: str
) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(")):
        create_rubric_judge(
            criteria=criteria, judge=openai_client(fake_openai), model="m", **options
        )
    assert fake_openai.chat_requests == []


def test_logprobs_refuse_a_langchain_judge(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="does not return them"):
        create_rubric_judge(
            criteria=GRADED, judge=chat_model(fake_openai), score_weighting="logprobs"
        )
