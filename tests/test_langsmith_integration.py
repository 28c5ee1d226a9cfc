"""LangSmith integration, proven offline against the installed ``langsmith`` release.

* tracing: evaluator runs reach a fake LangSmith API on 127.0.0.1 (``tests/fakes/fake_langsmith``)
  with the evaluator's name, inputs and results; with tracing off nothing is sent;
* ``evaluate()`` machinery: our evaluators wrapped the README way go through
  ``DynamicRunEvaluator`` / ``evaluate(..., upload_results=False)`` and come out as
  ``EvaluationResult(s)``;
* the pytest plugin: an inner pytest session with ``@pytest.mark.langsmith`` tests logs one piece of
  feedback per result (key, score, comment) through ``langsmith.testing.log_feedback``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langsmith import Client, traceable, tracing_context
from langsmith.evaluation import evaluate
from langsmith.evaluation.evaluator import (
    DynamicRunEvaluator,
    EvaluationResult,
    run_evaluator,
)
from langsmith.schemas import Example, Run

from openevals.exact import exact_match, exact_match_async
from openevals.string.levenshtein import levenshtein_distance
from openevals.types import EvaluatorResult
from openevals.utils import _arun_evaluator, _run_evaluator
from tests.fakes.fake_langsmith import FakeLangSmith

REPO = Path(__file__).resolve().parents[1]
_LS_ENV_PREFIXES = ("LANGSMITH_", "LANGCHAIN_")


@pytest.fixture(scope="module")
def _server() -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as server:
        yield server


@pytest.fixture(scope="module")
def _client(_server: FakeLangSmith) -> Client:
    return Client(api_url=_server.url, api_key="dummy-key")


@pytest.fixture
def fake_ls(_server: FakeLangSmith, _client: Client) -> FakeLangSmith:
    _client.flush()
    _server.reset()
    return _server


@pytest.fixture
def ls_client(fake_ls: FakeLangSmith, _client: Client) -> Client:
    return _client


def _subprocess_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_LS_ENV_PREFIXES)}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def _runs_named(fake: FakeLangSmith, name: str) -> list[dict[str, Any]]:
    return [r for r in fake.posted_runs() if r.get("name") == name]


# --------------------------------------------------------------------------- tracing


def test_traced_exact_match_reaches_langsmith(fake_ls: FakeLangSmith, ls_client: Client) -> None:
    with tracing_context(client=ls_client, enabled=True, project_name="openevals-tests"):
        result = exact_match(outputs={"a": 1}, reference_outputs={"a": 1}, inputs="ignored")
    ls_client.flush()

    assert result == {"key": "exact_match", "score": True, "comment": None, "metadata": None}
    (run,) = _runs_named(fake_ls, "exact_match")
    assert run["inputs"] == {"outputs": {"a": 1}, "reference_outputs": {"a": 1}}
    assert run["outputs"] == result
    assert run["session_name"] == "openevals-tests"
    assert run.get("error") in (None, "")


async def test_traced_async_evaluator_reaches_langsmith(
    fake_ls: FakeLangSmith, ls_client: Client
) -> None:
    with tracing_context(client=ls_client, enabled=True, project_name="p"):
        result = await exact_match_async(outputs="x", reference_outputs="y")
    ls_client.flush()

    assert result["score"] is False
    (run,) = _runs_named(fake_ls, "exact_match")
    assert run["outputs"] == result
    assert run["inputs"] == {"outputs": "x", "reference_outputs": "y"}


def test_traced_multi_key_results_and_parent_metadata(
    fake_ls: FakeLangSmith, ls_client: Client
) -> None:
    @traceable(name="my_eval_pipeline")
    def pipeline() -> list[EvaluatorResult]:
        return _run_evaluator(  # type: ignore[return-value]
            run_name="claims_check",
            scorer=lambda **kw: {
                "supported": {"score": 0.5, "reasoning": "1 of 2", "metadata": {"claims": 2}},
                "cited": True,
            },
            feedback_key="unused",
            outputs="answer",
        )

    with tracing_context(client=ls_client, enabled=True, project_name="p"):
        results = pipeline()
    ls_client.flush()

    (child,) = _runs_named(fake_ls, "claims_check")
    assert child["outputs"] == {"output": results}
    assert [r["key"] for r in results] == ["supported", "cited"]
    # The enclosing run is annotated: evaluator name, framework and result metadata.
    (parent,) = _runs_named(fake_ls, "my_eval_pipeline")
    metadata = parent["extra"]["metadata"]
    assert metadata["__ls_evaluator"] == "claims_check"
    assert metadata["__ls_framework"] == "openevals"
    assert metadata["__ls_language"] == "python"
    assert metadata["claims"] == 2
    assert child["trace_id"] == parent["trace_id"]


def test_traced_scorer_error_is_recorded_and_reraised(
    fake_ls: FakeLangSmith, ls_client: Client
) -> None:
    def scorer() -> float:
        raise ZeroDivisionError("bad input")

    with (
        tracing_context(client=ls_client, enabled=True, project_name="p"),
        pytest.raises(ZeroDivisionError, match="bad input"),
    ):
        _run_evaluator(run_name="failing_eval", scorer=scorer, feedback_key="k")
    ls_client.flush()
    (run,) = _runs_named(fake_ls, "failing_eval")
    assert "ZeroDivisionError" in run["error"]


def test_tracing_disabled_context_sends_nothing(fake_ls: FakeLangSmith, ls_client: Client) -> None:
    with tracing_context(client=ls_client, enabled=False):
        assert exact_match(outputs=1, reference_outputs=1)["score"] is True
        assert levenshtein_distance(outputs="ab", reference_outputs="ab")["score"] == 1.0
    ls_client.flush()
    assert fake_ls.posted_runs() == []


_ENV_SCRIPT = """
import json, sys
from openevals import exact_match
result = exact_match(outputs={"a": [1, 2]}, reference_outputs={"a": [1, 2]})
if "langsmith.run_helpers" in sys.modules:
    from langsmith.run_trees import get_cached_client
    get_cached_client().flush()
print(json.dumps({"result": result, "run_helpers": "langsmith.run_helpers" in sys.modules}))
"""


def _run_env_script(fake: FakeLangSmith, **env: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _ENV_SCRIPT],
        env=_subprocess_env(LANGSMITH_ENDPOINT=fake.url, LANGSMITH_API_KEY="dummy-key", **env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_tracing_switched_on_by_environment(fake_ls: FakeLangSmith) -> None:
    out = _run_env_script(fake_ls, LANGSMITH_TRACING="true", LANGSMITH_PROJECT="env-project")
    assert out["run_helpers"] is True
    (run,) = _runs_named(fake_ls, "exact_match")
    assert run["outputs"] == out["result"]
    assert run["outputs"]["score"] is True
    assert run["session_name"] == "env-project"
    assert run["inputs"] == {"outputs": {"a": [1, 2]}, "reference_outputs": {"a": [1, 2]}}


def test_tracing_off_in_environment_sends_nothing_and_loads_no_tracer(
    fake_ls: FakeLangSmith,
) -> None:
    out = _run_env_script(fake_ls, LANGSMITH_TRACING="false")
    assert out["result"]["score"] is True
    assert out["run_helpers"] is False
    assert fake_ls.requests == []


# --------------------------------------------------------------------------- evaluate() machinery


def _run_and_example(
    outputs: dict[str, Any], reference: dict[str, Any], inputs: dict[str, Any]
) -> tuple[Run, Example]:
    now = dt.datetime.now(dt.timezone.utc)
    run = Run(
        id=uuid.uuid4(),
        name="target",
        start_time=now,
        run_type="chain",
        inputs=inputs,
        outputs=outputs,
        trace_id=uuid.uuid4(),
    )
    example = Example(
        id=uuid.uuid4(),
        dataset_id=uuid.uuid4(),
        inputs=inputs,
        outputs=reference,
        created_at=now,
    )
    return run, example


def wrapped_exact_match(
    inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
) -> Any:
    return exact_match(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs)


def wrapped_multi_key(
    inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
) -> Any:
    def scorer(*, outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> dict[str, Any]:
        answer, expected = outputs["answer"], reference_outputs["answer"]
        return {
            "correct": {"score": answer == expected, "reasoning": f"{answer!r} vs {expected!r}"},
            "length_ratio": round(len(answer) / max(len(expected), 1), 2),
        }

    return _run_evaluator(
        run_name="multi_key",
        scorer=scorer,
        feedback_key="unused",
        outputs=outputs,
        reference_outputs=reference_outputs,
    )


def wrapped_json_like(
    inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
) -> Any:
    """A json_match-shaped evaluator: one result per key, ``json_match:{key}``, sorted."""

    def scorer(
        *, outputs: dict[str, Any], reference_outputs: dict[str, Any]
    ) -> list[dict[str, Any]]:
        return [
            {
                "key": f"json_match:{key}",
                "score": float(outputs.get(key) == reference_outputs.get(key)),
                "comment": None
                if outputs.get(key) == reference_outputs.get(key)
                else f"{key} differs",
            }
            for key in sorted(set(outputs) | set(reference_outputs))
        ]

    return _run_evaluator(
        run_name="json_match_evaluator",
        scorer=scorer,
        feedback_key="json_match",
        outputs=outputs,
        reference_outputs=reference_outputs,
    )


def test_dynamic_run_evaluator_single_result() -> None:
    run, example = _run_and_example({"answer": "4"}, {"answer": "4"}, {"q": "2+2"})
    evaluator = run_evaluator(wrapped_exact_match)
    assert isinstance(evaluator, DynamicRunEvaluator)
    result = evaluator.evaluate_run(run, example)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score, result.comment) == ("exact_match", True, None)

    run, example = _run_and_example({"answer": "5"}, {"answer": "4"}, {"q": "2+2"})
    result = evaluator.evaluate_run(run, example)
    assert isinstance(result, EvaluationResult)
    assert (result.key, result.score) == ("exact_match", False)


def test_dynamic_run_evaluator_multi_key_results() -> None:
    run, example = _run_and_example({"answer": "four"}, {"answer": "4"}, {"q": "2+2"})
    out = run_evaluator(wrapped_multi_key).evaluate_run(run, example)
    assert isinstance(out, dict)
    got = [(r.key, r.score, r.comment) for r in out["results"]]
    assert got == [("correct", False, "'four' vs '4'"), ("length_ratio", 4.0, None)]


def test_dynamic_run_evaluator_list_of_results() -> None:
    run, example = _run_and_example(
        {"name": "Ada", "year": 1815, "city": "London"},
        {"name": "Ada", "year": 1816, "city": "London"},
        {"q": "who?"},
    )
    out = run_evaluator(wrapped_json_like).evaluate_run(run, example)
    assert isinstance(out, dict)
    got = [(r.key, r.score, r.comment) for r in out["results"]]
    assert got == [
        ("json_match:city", 1.0, None),
        ("json_match:name", 1.0, None),
        ("json_match:year", 0.0, "year differs"),
    ]


async def test_async_dynamic_run_evaluator() -> None:
    async def wrapped(
        inputs: dict[str, Any], outputs: dict[str, Any], reference_outputs: dict[str, Any]
    ) -> Any:
        async def scorer(*, outputs: Any, reference_outputs: Any) -> tuple[bool, str]:
            return outputs == reference_outputs, "compared"

        first = await exact_match_async(outputs=outputs, reference_outputs=reference_outputs)
        second = await _arun_evaluator(
            run_name="async_check",
            scorer=scorer,
            feedback_key="async_check",
            outputs=outputs,
            reference_outputs=reference_outputs,
        )
        return [first, second]

    run, example = _run_and_example({"answer": "4"}, {"answer": "4"}, {"q": "2+2"})
    evaluator = run_evaluator(wrapped)
    assert evaluator.is_async
    out = await evaluator.aevaluate_run(run, example)
    got = [(r.key, r.score, r.comment) for r in out["results"]]
    assert got == [("exact_match", True, None), ("async_check", True, "compared")]


def test_evaluator_run_is_traced_with_metadata_when_tracing_on(
    fake_ls: FakeLangSmith, ls_client: Client
) -> None:
    run, example = _run_and_example({"answer": "4"}, {"answer": "4"}, {"q": "2+2"})
    with tracing_context(client=ls_client, enabled=True, project_name="evaluators"):
        result = run_evaluator(wrapped_exact_match).evaluate_run(run, example)
    ls_client.flush()
    assert isinstance(result, EvaluationResult)
    assert result.score is True

    (outer,) = _runs_named(fake_ls, "wrapped_exact_match")
    assert outer["extra"]["metadata"]["__ls_evaluator"] == "exact_match"
    assert outer["extra"]["metadata"]["__ls_framework"] == "openevals"
    assert str(outer["id"]) == str(result.source_run_id)
    (inner,) = _runs_named(fake_ls, "exact_match")
    assert inner["outputs"]["score"] is True


def test_evaluate_end_to_end_without_upload(fake_ls: FakeLangSmith, ls_client: Client) -> None:
    now = dt.datetime.now(dt.timezone.utc)
    cases = [("2+2", "4"), ("3+3", "7"), ("10-1", "9")]
    examples = [
        Example(
            id=uuid.uuid4(),
            dataset_id=uuid.uuid4(),
            inputs={"q": q},
            outputs={"answer": a},
            created_at=now,
        )
        for q, a in cases
    ]

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"answer": {"2+2": "4", "3+3": "6", "10-1": "9"}[inputs["q"]]}

    with warnings.catch_warnings():  # langsmith flags upload_results as beta
        warnings.simplefilter("ignore")
        results = evaluate(
            target,
            data=examples,
            evaluators=[wrapped_exact_match, wrapped_multi_key],
            upload_results=False,
            client=ls_client,
            max_concurrency=0,
        )
    rows = sorted(results, key=lambda row: row["example"].inputs["q"])
    by_q = {
        row["example"].inputs["q"]: {r.key: r.score for r in row["evaluation_results"]["results"]}
        for row in rows
    }
    assert by_q == {
        "10-1": {"exact_match": True, "correct": True, "length_ratio": 1.0},
        "2+2": {"exact_match": True, "correct": True, "length_ratio": 1.0},
        "3+3": {"exact_match": False, "correct": False, "length_ratio": 1.0},
    }
    assert fake_ls.posted_runs() == []


# --------------------------------------------------------------------------- pytest plugin

_INNER_CONFTEST = """
import json
import os

import langsmith.testing as t
from langsmith.testing import _internal

_real_log_feedback = t.log_feedback


def _recording_log_feedback(*args, **kwargs):
    record = {
        "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
        "key": kwargs.get("key"),
        "score": kwargs.get("score"),
        "comment": kwargs.get("comment"),
        "in_test_case": _internal._TEST_CASE.get() is not None,
    }
    with open(os.environ["FEEDBACK_LOG"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\\n")
    return _real_log_feedback(*args, **kwargs)


t.log_feedback = _recording_log_feedback
"""

_INNER_TESTS = '''
import pytest
from langsmith import testing as t

from openevals.exact import exact_match, exact_match_async
from openevals.utils import _run_evaluator


def create_correctness_evaluator():
    """Stands in for create_llm_as_judge(prompt=CORRECTNESS_PROMPT, feedback_key="correctness")."""

    def evaluator(*, inputs, outputs, reference_outputs, **kwargs):
        def scorer(*, inputs, outputs, reference_outputs):
            same = ("increased" in outputs) == ("increased" in reference_outputs)
            return same, "direction of change " + ("matches" if same else "differs")

        return _run_evaluator(
            run_name="llm_as_correctness_judge",
            scorer=scorer,
            feedback_key="correctness",
            inputs=inputs,
            outputs=outputs,
            reference_outputs=reference_outputs,
        )

    return evaluator


correctness_evaluator = create_correctness_evaluator()


@pytest.mark.langsmith
def test_correctness():
    inputs = "How much has the price of doodads changed in the past year?"
    outputs = "Doodads have increased in price by 10% in the past year."
    reference_outputs = "The price of doodads has decreased by 50% in the past year."
    t.log_inputs({"question": inputs})
    t.log_outputs({"answer": outputs})
    t.log_reference_outputs({"answer": reference_outputs})

    result = correctness_evaluator(
        inputs=inputs, outputs=outputs, reference_outputs=reference_outputs
    )
    assert result["key"] == "correctness"
    assert result["score"] is False


@pytest.mark.langsmith
def test_exact():
    assert exact_match(outputs={"a": 1}, reference_outputs={"a": 1})["score"] is True


@pytest.mark.langsmith
async def test_exact_async():
    assert (await exact_match_async(outputs=1, reference_outputs=2))["score"] is False


@pytest.mark.langsmith
def test_multi_key():
    results = _run_evaluator(
        run_name="multi",
        scorer=lambda: {"precision": {"score": 0.5, "reasoning": "1 of 2"}, "recall": 1.0},
        feedback_key="unused",
    )
    assert [r["key"] for r in results] == ["precision", "recall"]
'''

_EXPECTED_FEEDBACK = [
    ("test_correctness", "correctness", False, "direction of change differs"),
    ("test_exact", "exact_match", True, None),
    ("test_exact_async", "exact_match", False, None),
    ("test_multi_key", "precision", 0.5, "1 of 2"),
    ("test_multi_key", "recall", 1.0, None),
]


def _run_inner_session(
    tmp_path: Path, **env: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(_INNER_CONFTEST))
    (tmp_path / "test_inner_langsmith.py").write_text(textwrap.dedent(_INNER_TESTS))
    log = tmp_path / "feedback.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            "-p",
            "no:hypothesispytest",
            "-p",
            "no:anyio",
            "test_inner_langsmith.py",
        ],
        cwd=tmp_path,
        env=_subprocess_env(FEEDBACK_LOG=str(log), **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, records


def test_pytest_plugin_logs_every_result_as_feedback(
    tmp_path: Path, fake_ls: FakeLangSmith
) -> None:
    proc, records = _run_inner_session(
        tmp_path,
        LANGSMITH_TRACING="true",
        LANGSMITH_API_KEY="dummy-key",
        LANGSMITH_ENDPOINT=fake_ls.url,
        # langsmith only re-sends inputs set after a run was posted when this is off.
        LANGSMITH_EXCLUDE_INPUTS_ON_PATCH="false",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "4 passed" in proc.stdout

    # 1. langsmith.testing.log_feedback was called once per result, inside the test case.
    got = sorted((r["test"].split("::")[-1], r["key"], r["score"], r["comment"]) for r in records)
    assert got == sorted(_EXPECTED_FEEDBACK)
    assert all(r["in_test_case"] for r in records)

    # 2. ...and the feedback really left the process: the fake API received it with comments.
    sent = [
        (f["key"], f["score"], f.get("comment")) for f in fake_ls.feedback() if f["key"] != "pass"
    ]
    assert sorted(sent, key=repr) == sorted(
        ((k, s, c) for _, k, s, c in _EXPECTED_FEEDBACK), key=repr
    )
    passes = [f for f in fake_ls.feedback() if f["key"] == "pass"]
    assert [f["score"] for f in passes] == [1, 1, 1, 1]

    # 3. The evaluator ran as a feedback trace with the test's inputs and openevals metadata.
    judge_runs = [
        r
        for r in _runs_named(fake_ls, "llm_as_correctness_judge")
        if r.get("session_name") == "evaluators"
    ]
    assert judge_runs, "no evaluator trace was posted"
    annotated = [
        r for r in judge_runs if (r.get("extra") or {}).get("metadata", {}).get("__ls_evaluator")
    ]
    assert annotated
    assert annotated[0]["inputs"] == {
        "inputs": "How much has the price of doodads changed in the past year?",
        "reference_outputs": "The price of doodads has decreased by 50% in the past year.",
    }


def test_pytest_plugin_with_tracking_disabled(tmp_path: Path, fake_ls: FakeLangSmith) -> None:
    proc, records = _run_inner_session(
        tmp_path,
        LANGSMITH_TEST_TRACKING="false",
        LANGSMITH_API_KEY="dummy-key",
        LANGSMITH_ENDPOINT=fake_ls.url,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "4 passed" in proc.stdout
    # With tracking disabled the plugin opens no test case, so (like the public release) we log
    # no feedback and nothing is sent anywhere; the evaluators still return their results.
    assert records == []
    assert fake_ls.requests == []


# --------------------------------------------------------------------------- judge model calls


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.usefixtures("openai_env")
def test_judge_from_model_string_traces_its_llm_call(
    fake_ls: FakeLangSmith,
    ls_client: Client,
    fake_openai: Any,
    use_async: bool,
) -> None:
    """``model="openai:..."`` judges call the SDK directly; with tracing on the call is an llm run."""
    import asyncio

    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge

    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    factory = create_async_llm_as_judge if use_async else create_llm_as_judge
    judge = factory(prompt="Rate {outputs}", model="openai:gpt-test", feedback_key="quality")
    with tracing_context(client=ls_client, enabled=True, project_name="p"):
        out = judge(outputs="x")
        result = asyncio.run(out) if use_async else out
    ls_client.flush()

    assert result["score"] is True
    (llm_run,) = _runs_named(fake_ls, "ChatOpenAI")
    assert llm_run["run_type"] == "llm"
    assert llm_run["inputs"]["messages"] == [{"role": "user", "content": "Rate x"}]
    (judge_run,) = _runs_named(fake_ls, "llm_as_quality_judge")
    assert llm_run["trace_id"] == judge_run["trace_id"]
    assert "test-key" not in json.dumps(fake_ls.posted_runs())


@pytest.mark.usefixtures("openai_env")
def test_judge_model_call_is_not_traced_when_tracing_is_off(
    fake_ls: FakeLangSmith, fake_openai: Any
) -> None:
    from openevals.llm import create_llm_as_judge

    fake_openai.queue_chat(json={"reasoning": "fine", "score": False})
    judge = create_llm_as_judge(prompt="Rate {outputs}", model="openai:gpt-test")
    assert judge(outputs="x")["score"] is False
    assert fake_ls.posted_runs() == []


# --------------------------------------------------------------------------- evaluators passed unchanged


def _feedback(out: Any) -> list[tuple[str, Any]]:
    if isinstance(out, dict):  # EvaluationResults is a TypedDict of EvaluationResult objects
        results = out["results"]
    else:
        results = out.results if hasattr(out, "results") else [out]
    return [(r.key, r.score) for r in results]


def test_our_evaluators_passed_unchanged_to_run_evaluator(fake_openai: Any) -> None:
    """LangSmith's evaluate() wraps evaluators with run_evaluator; ours need no wrapper."""
    from openevals import (
        create_llm_as_judge,
        create_trajectory_match_evaluator,
        levenshtein_distance,
    )
    from openevals.code.mypy import create_mypy_evaluator
    from openevals.json import create_json_match_evaluator
    from openevals.testing import chat_model

    run, example = _run_and_example({"a": 1, "b": 2}, {"a": 1, "b": 3}, {"q": "x"})
    assert _feedback(run_evaluator(exact_match).evaluate_run(run, example)) == [
        ("exact_match", False)
    ]
    assert _feedback(run_evaluator(levenshtein_distance).evaluate_run(run, example))[0][0] == (
        "levenshtein_distance"
    )
    json_eval = create_json_match_evaluator()
    assert _feedback(run_evaluator(json_eval).evaluate_run(run, example)) == [
        ("json_match:a", 1),
        ("json_match:b", 0),
    ]

    call = {"function": {"name": "search", "arguments": '{"q": "x"}'}}
    trajectory = {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}
    run, example = _run_and_example(trajectory, trajectory, {"q": "x"})
    trajectory_eval = create_trajectory_match_evaluator(trajectory_match_mode="unordered")
    assert _feedback(run_evaluator(trajectory_eval).evaluate_run(run, example)) == [
        ("trajectory_unordered_match", True)
    ]

    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    judge = create_llm_as_judge(
        prompt="{inputs} {outputs}", feedback_key="quality", judge=chat_model(fake_openai)
    )
    assert _feedback(run_evaluator(judge).evaluate_run(run, example)) == [("quality", True)]

    # Code evaluators are callable objects rather than functions; LangSmith takes them too.
    run, example = _run_and_example({"code": "x: int = 1\n"}, {}, {})
    mypy_eval = create_mypy_evaluator(code_extractor=lambda outputs: outputs["code"])
    assert _feedback(run_evaluator(mypy_eval).evaluate_run(run, example)) == [
        ("mypy_succeeded", True)
    ]


async def test_async_evaluator_passed_unchanged_to_arun() -> None:
    run, example = _run_and_example({"a": 1}, {"a": 1}, {"q": "x"})
    evaluator = run_evaluator(exact_match_async)
    result = await evaluator.aevaluate_run(run, example)
    assert _feedback(result) == [("exact_match", True)]


# --------------------------------------------------------------------------- source_run_id


def _json_match_traced_run(fake: FakeLangSmith) -> dict[str, Any]:
    (run,) = [r for r in fake.posted_runs() if "json_match" in str(r.get("name"))]
    return run


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_json_match_results_link_to_the_traced_run(
    fake_ls: FakeLangSmith, ls_client: Client, is_async: bool
) -> None:
    """0.2.2 (upstream PR #125): under tracing, per-key JSON match results carry
    ``source_run_id``, the traced run that scored them; aggregated results carry none."""
    from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator

    outputs, reference = {"a": 1, "b": 2}, {"a": 1, "b": 3}
    with tracing_context(client=ls_client, enabled=True, project_name="p"):
        if is_async:
            results = await create_async_json_match_evaluator()(
                outputs=outputs, reference_outputs=reference
            )
            summary = await create_async_json_match_evaluator(aggregator="average")(
                outputs=outputs, reference_outputs=reference
            )
        else:
            results = create_json_match_evaluator()(outputs=outputs, reference_outputs=reference)
            summary = create_json_match_evaluator(aggregator="average")(
                outputs=outputs, reference_outputs=reference
            )
    ls_client.flush()
    assert [(r["key"], r["score"]) for r in results] == [
        ("json_match:a", 1.0),
        ("json_match:b", 0.0),
    ]
    run_ids = {str(r["source_run_id"]) for r in results}
    traced = {str(r["id"]) for r in fake_ls.posted_runs() if "json_match" in str(r.get("name"))}
    assert len(run_ids) == 1 and run_ids <= traced
    assert [r.get("source_run_id") for r in summary] == [None]


def test_json_match_results_have_no_source_run_id_untraced() -> None:
    from openevals.json import create_json_match_evaluator

    results = create_json_match_evaluator()(outputs={"a": 1}, reference_outputs={"a": 1})
    assert results == [{"key": "json_match:a", "score": 1.0, "comment": None, "metadata": None}]
