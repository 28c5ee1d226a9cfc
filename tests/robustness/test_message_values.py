"""Bad option values that are deep, cyclic or huge get a short error naming the parameter.

Issue 27, item 3: every message that shows a value the caller passed builds it with the bounded,
iterative ``openevals._repr.show``. Before, ``{value!r}`` raised ``RecursionError`` for a
2,000-deep list or dict while the message was being built, and copied a 10 MB string into it.

For each family (evaluate()/run options, calibrate labels, compare and pairwise systems, judge
options, embeddings, rubric, JSON match, text metrics, ranking metrics, the testing kit, the CLI),
each bad value below must give the family's own ``TypeError``/``ValueError`` (never
``RecursionError``), name the parameter, stay under 2,000 characters, come back promptly, and
leave the value as it was. Async twins are tried too.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openevals._repr import show

pytestmark = pytest.mark.usefixtures("tracing_off")

DEPTH = 2_000
HUGE = 10_000_000
MAX_MESSAGE = 2_000
PROMPT = "Grade {outputs}"
MODEL = "openai:gpt-4o-mini"


def deep_list() -> Any:
    value: Any = "a"
    for _ in range(DEPTH):
        value = [value]
    return value


def deep_dict() -> Any:
    value: Any = {"a": 1}
    for _ in range(DEPTH):
        value = {"k": value}
    return value


def cyclic_list() -> Any:
    value: list[Any] = [1]
    value.append(value)
    return value


def cyclic_dict() -> Any:
    value: dict[str, Any] = {"a": 1}
    value["self"] = value
    return value


def huge_str() -> Any:
    return "x" * HUGE


BAD: dict[str, Callable[[], Any]] = {
    "deep-list": deep_list,
    "deep-dict": deep_dict,
    "cyclic-list": cyclic_list,
    "cyclic-dict": cyclic_dict,
    "10MB-str": huge_str,
}
ALL = tuple(BAD)
NOT_STR = ("deep-list", "deep-dict", "cyclic-list", "cyclic-dict")
NOT_MAPPING = ("deep-list", "cyclic-list", "10MB-str")


@dataclass(frozen=True)
class Case:
    """``call(value)`` must raise ``error`` whose message matches ``param``."""

    id: str
    call: Callable[[Any], Any]
    error: type[Exception]
    param: str
    values: tuple[str, ...] = ALL


def run(value: Any) -> Any:
    return asyncio.run(value) if asyncio.iscoroutine(value) else value


ROWS = [
    {"inputs": "q1", "outputs": "a", "reference_outputs": "a", "label": True},
    {"inputs": "q2", "outputs": "b", "reference_outputs": "a", "label": False},
]


def scorer(*, outputs: Any = None, reference_outputs: Any = None, **_: Any) -> Any:
    return {"key": "same", "score": outputs == reference_outputs}


def evaluate(**options: Any) -> Any:
    import openevals

    return openevals.evaluate(ROWS, [scorer], progress=False, **options)


def aevaluate(**options: Any) -> Any:
    import openevals

    return openevals.aevaluate(ROWS, [scorer], progress=False, **options)


def local_engine(eval_timeout: Any) -> Any:
    from openevals.evaluation import LocalEngine

    return LocalEngine(eval_timeout=eval_timeout)


def ray_engine(**options: Any) -> Any:
    from openevals.evaluation import RayEngine

    return RayEngine(**options)


def batch_metrics(**options: Any) -> Any:
    from openevals.evaluation import BatchMetrics

    return BatchMetrics([scorer], **options)


def budget(**options: Any) -> Any:
    from openevals.evaluation import Budget

    return Budget(**options)


def calibrate(**options: Any) -> Any:
    from openevals.calibration import calibrate

    return calibrate(ROWS, scorer, progress=False, **options)


def acalibrate(**options: Any) -> Any:
    from openevals.calibration import acalibrate

    return acalibrate(ROWS, scorer, progress=False, **options)


_RUN: list[Any] = []


def a_run() -> Any:
    if not _RUN:
        _RUN.append(evaluate())
    return _RUN[0]


def compare(**options: Any) -> Any:
    from openevals.comparison import compare

    return compare(a_run(), a_run(), **options)


def acompare(**options: Any) -> Any:
    from openevals.comparison import acompare

    return acompare(a_run(), a_run(), **options)


def judge(**options: Any) -> Any:
    from openevals.llm import create_llm_as_judge

    return create_llm_as_judge(prompt=PROMPT, model=MODEL, **options)


def ajudge(**options: Any) -> Any:
    from openevals.llm import create_async_llm_as_judge

    return create_async_llm_as_judge(prompt=PROMPT, model=MODEL, **options)


def rubric(criterion: Any, is_async: bool = False) -> Any:
    from openevals.rubric import create_async_rubric_judge, create_rubric_judge

    factory = create_async_rubric_judge if is_async else create_rubric_judge
    return factory(criteria={"a": criterion}, model=MODEL)


def json_match(is_async: bool = False, **options: Any) -> Any:
    from openevals.json import create_async_json_match_evaluator, create_json_match_evaluator

    factory = create_async_json_match_evaluator if is_async else create_json_match_evaluator
    return factory(**options)


def bleu(is_async: bool = False, **options: Any) -> Any:
    from openevals.text import create_async_bleu_evaluator, create_bleu_evaluator

    return (create_async_bleu_evaluator if is_async else create_bleu_evaluator)(**options)


def rouge(**options: Any) -> Any:
    from openevals.text import create_rouge_evaluator

    return create_rouge_evaluator(**options)


def recall(is_async: bool = False, **options: Any) -> Any:
    from openevals.rag import create_async_recall_evaluator, create_recall_evaluator

    return (create_async_recall_evaluator if is_async else create_recall_evaluator)(**options)


def retrieval(**options: Any) -> Any:
    from openevals.rag import create_retrieval_evaluator

    return create_retrieval_evaluator(k=3, **options)


def embedding(is_async: bool = False, **options: Any) -> Any:
    from openevals.string import (
        create_async_embedding_similarity_evaluator,
        create_embedding_similarity_evaluator,
    )

    factory = (
        create_async_embedding_similarity_evaluator
        if is_async
        else create_embedding_similarity_evaluator
    )
    return factory(**options)


def local_embeddings(**options: Any) -> Any:
    from openevals.embeddings import LocalEmbeddings

    return LocalEmbeddings(**options)


def reply(**options: Any) -> Any:
    from openevals.testing import Reply

    return Reply(**options)


def fake_server(**options: Any) -> Any:
    from openevals.testing import FakeOpenAIServer

    return FakeOpenAIServer(**options)


def cassette(tmp: Path, mode: Any) -> Any:
    from openevals.testing import Cassette

    return Cassette(tmp / "judge.json", mode=mode)


CASES = [
    # ------------------------------------------------------------------ evaluate() / run options
    Case("evaluate-concurrency", lambda v: evaluate(concurrency=v), ValueError, "concurrency"),
    Case("evaluate-batch_size", lambda v: batch_metrics(batch_size=v), ValueError, "batch_size"),
    Case("evaluate-engine", lambda v: evaluate(engine=v), ValueError, "engine"),
    Case("evaluate-eval_timeout", lambda v: local_engine(v), TypeError, "eval_timeout"),
    Case("evaluate-accumulate", lambda v: batch_metrics(accumulate=v), TypeError, "accumulate"),
    Case("evaluate-budget", lambda v: evaluate(budget=v), TypeError, "budget"),
    Case("evaluate-max_cost", lambda v: budget(max_cost=v), TypeError, "max_cost"),
    Case("evaluate-group_by", lambda v: evaluate(group_by=v), TypeError, "group_by", NOT_STR),
    Case(
        "evaluate-ray_connect_timeout",
        lambda v: ray_engine(connect_timeout=v),
        ValueError,
        "connect_timeout",
    ),
    Case("aevaluate-concurrency", lambda v: aevaluate(concurrency=v), ValueError, "concurrency"),
    Case(
        "aevaluate-eval_timeout",
        lambda v: aevaluate(engine=local_engine(v)),
        TypeError,
        "eval_timeout",
    ),
    # ------------------------------------------------------------------ calibrate: labels, options
    Case("calibrate-label", lambda v: calibrate(label=v), TypeError, "`label`", NOT_STR),
    Case("calibrate-label_type", lambda v: calibrate(label_type=v), ValueError, "`label_type`"),
    Case("calibrate-choices", lambda v: calibrate(choices=v), TypeError, "`choices`"),
    Case(
        "calibrate-choice",
        lambda v: calibrate(choices=[True, v], label_type="categorical"),
        TypeError,
        "`choices`",
        NOT_STR,
    ),
    Case(
        "calibrate-label_map",
        lambda v: calibrate(label_map=v),
        TypeError,
        "`label_map`",
        NOT_MAPPING,
    ),
    Case("calibrate-tolerance", lambda v: calibrate(tolerance=v), ValueError, "`tolerance`"),
    Case("calibrate-seed", lambda v: calibrate(seed=v), TypeError, "`seed`"),
    Case("calibrate-resamples", lambda v: calibrate(resamples=v), ValueError, "`resamples`"),
    Case("calibrate-confidence", lambda v: calibrate(confidence=v), ValueError, "`confidence`"),
    Case("acalibrate-tolerance", lambda v: acalibrate(tolerance=v), ValueError, "`tolerance`"),
    # ------------------------------------------------------------------ compare / pairwise systems
    Case("compare-alpha", lambda v: compare(alpha=v), TypeError, "`alpha`"),
    Case("compare-min_effect", lambda v: compare(min_effect=v), TypeError, "`min_effect`"),
    Case("compare-seed", lambda v: compare(seed=v), TypeError, "`seed`"),
    Case("compare-test", lambda v: compare(test=v), TypeError, "`test`", NOT_STR),
    Case("compare-test-text", lambda v: compare(test=v), ValueError, "`test`", ("10MB-str",)),
    Case("compare-resamples", lambda v: compare(resamples=v), TypeError, "`resamples`"),
    Case("compare-max_rows", lambda v: compare(max_rows=v), TypeError, "`max_rows`"),
    Case("compare-judge", lambda v: compare(judge=v), TypeError, "`judge`"),
    Case("compare-keys", lambda v: compare(keys=v), TypeError, "`keys`", NOT_MAPPING),
    Case(
        "compare-lower_is_better",
        lambda v: compare(lower_is_better=v),
        TypeError,
        "`lower_is_better`",
        NOT_MAPPING,
    ),
    Case("acompare-alpha", lambda v: acompare(alpha=v), TypeError, "`alpha`"),
    Case("evaluate-systems", lambda v: evaluate(systems=v), TypeError, "systems"),
    # ------------------------------------------------------------------ judge options
    Case(
        "judge-feedback_key", lambda v: judge(feedback_key=v), ValueError, "`feedback_key`", NOT_STR
    ),
    Case("judge-choices", lambda v: judge(choices=[0.0, v]), TypeError, "`choices`"),
    Case("judge-timeout", lambda v: judge(timeout=v), TypeError, "`timeout`"),
    Case("judge-max_retries", lambda v: judge(max_retries=v), ValueError, "`max_retries`"),
    Case(
        "judge-score_weighting", lambda v: judge(score_weighting=v), ValueError, "`score_weighting`"
    ),
    Case("ajudge-timeout", lambda v: ajudge(timeout=v), TypeError, "`timeout`"),
    Case("ajudge-choices", lambda v: ajudge(choices=[0.0, v]), TypeError, "`choices`"),
    # ------------------------------------------------------------------ embeddings
    Case("embeddings-model", lambda v: embedding(model=v), ValueError, "`model`", ("10MB-str",)),
    Case(
        "async-embeddings-model",
        lambda v: embedding(True, model=v),
        ValueError,
        "`model`",
        ("10MB-str",),
    ),
    Case("local-batch_size", lambda v: local_embeddings(batch_size=v), ValueError, "`batch_size`"),
    Case(
        "local-num_threads", lambda v: local_embeddings(num_threads=v), ValueError, "`num_threads`"
    ),
    # ------------------------------------------------------------------ rubric
    Case(
        "rubric-kind",
        lambda v: rubric({"description": "d", "kind": v}),
        ValueError,
        r"`criteria\['a'\]\['kind'\]`",
    ),
    Case(
        "rubric-choices",
        lambda v: rubric({"description": "d", "kind": "choices", "choices": v}),
        ValueError,
        r"`criteria\['a'\]\['choices'\]`",
    ),
    Case(
        "async-rubric-kind",
        lambda v: rubric({"description": "d", "kind": v}, is_async=True),
        ValueError,
        r"`criteria\['a'\]\['kind'\]`",
    ),
    # ------------------------------------------------------------------ JSON match
    Case("json-aggregator", lambda v: json_match(aggregator=v), ValueError, "`aggregator`"),
    Case(
        "json-list_aggregator",
        lambda v: json_match(list_aggregator=v),
        ValueError,
        "`list_aggregator`",
    ),
    Case("json-exclude_keys", lambda v: json_match(exclude_keys=v), TypeError, "`exclude_keys`"),
    Case("json-rubric", lambda v: json_match(rubric={"a": v}), TypeError, "`rubric`", NOT_STR),
    Case(
        "async-json-aggregator",
        lambda v: json_match(True, aggregator=v),
        ValueError,
        "`aggregator`",
    ),
    # ------------------------------------------------------------------ text metrics
    Case("bleu-tokenize", lambda v: bleu(tokenize=v), ValueError, "`tokenize`"),
    Case("bleu-smooth_method", lambda v: bleu(smooth_method=v), ValueError, "`smooth_method`"),
    Case("bleu-smooth_value", lambda v: bleu(smooth_value=v), TypeError, "`smooth_value`"),
    Case("rouge-types", lambda v: rouge(rouge_types=[v]), ValueError, "`rouge_types`"),
    Case("async-bleu-tokenize", lambda v: bleu(True, tokenize=v), ValueError, "`tokenize`"),
    # ------------------------------------------------------------------ ranking metrics
    Case("recall-k", lambda v: recall(k=v), TypeError, "`k`"),
    Case(
        "recall-feedback_key",
        lambda v: recall(k=3, feedback_key=v),
        TypeError,
        "`feedback_key`",
        NOT_STR,
    ),
    Case("retrieval-metrics", lambda v: retrieval(metrics=[v]), ValueError, "`metrics`"),
    Case("async-recall-k", lambda v: recall(True, k=v), TypeError, "`k`"),
    # ------------------------------------------------------------------ testing kit
    Case("reply-status", lambda v: reply(status=v), TypeError, "`status`"),
    Case("reply-delay", lambda v: reply(delay=v), TypeError, "`delay`"),
    Case("server-models", lambda v: fake_server(models=v), TypeError, "`models`", NOT_MAPPING),
]


@pytest.mark.parametrize(
    ("case", "kind"),
    [pytest.param(case, kind, id=f"{case.id}-{kind}") for case in CASES for kind in case.values],
)
def test_a_bad_value_gives_a_short_error_naming_the_parameter(case: Case, kind: str) -> None:
    value = BAD[kind]()
    before = show(value, 1_000)
    start = time.perf_counter()
    with pytest.raises(case.error) as info:
        run(case.call(value))
    elapsed = time.perf_counter() - start
    message = str(info.value)
    assert re.search(case.param, message), message
    assert len(message) < MAX_MESSAGE, len(message)
    assert elapsed < 30, elapsed  # no hang
    assert show(value, 1_000) == before  # nothing the caller passed is mutated


@pytest.mark.parametrize("kind", ALL)
def test_a_bad_cassette_mode_is_named(tmp_path: Path, kind: str) -> None:
    with pytest.raises(ValueError, match="`mode`") as info:
        cassette(tmp_path, BAD[kind]())
    assert len(str(info.value)) < MAX_MESSAGE


# --------------------------------------------------------------------------- the CLI

DATA = '{"inputs": "q", "outputs": "a", "reference_outputs": "a", "label": true}\n'


def label_judge(
    *, inputs: Any = None, outputs: Any = None, reference_outputs: Any = None, **_: Any
) -> Any:
    return {"key": "judge", "score": outputs == reference_outputs}


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from openevals.cli import main

    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 30
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert len(err) < MAX_MESSAGE, len(err)
    return err


@pytest.mark.parametrize(
    "spec", [lambda: huge_str(), lambda: huge_str() + ":f", lambda: "openevals:" + huge_str()]
)
def test_cli_a_huge_evaluator_spec_is_named_briefly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: Callable[[], str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(DATA, encoding="utf-8")
    err = cli(["run", str(data), "--evaluator", spec()], capsys)
    assert "evaluator" in err


def test_cli_a_huge_judge_function_is_named_briefly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(DATA, encoding="utf-8")
    err = cli(["calibrate", str(data), "--judge-function", huge_str()], capsys)
    assert "--judge-function" in err


def test_cli_a_huge_module_path_is_named_briefly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(DATA, encoding="utf-8")
    err = cli(["calibrate", str(data), "--judge-function", "y" * 5_000 + ".py:f"], capsys)
    assert "--judge-function: no such file 'yyy" in err


def test_cli_a_huge_text_label_is_shown_briefly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    big = '{"inputs": "q", "outputs": "a", "reference_outputs": "a", "label": "%s"}\n'
    data.write_text(big % huge_str() + big % "b", encoding="utf-8")
    judge_spec = f"{__name__}:label_judge"
    err = cli(["calibrate", str(data), "--judge-function", judge_spec, "--no-progress"], capsys)
    assert "'label'" in err


# --------------------------------------------------------------------------- evaluate() data


def deep_tuple() -> Any:
    value: Any = "a"
    for _ in range(DEPTH):
        value = (value,)
    return value


def test_a_deep_non_string_field_name_is_shown_briefly() -> None:
    # A batch run records such a row as an error row (issue 43) instead of raising.
    row = {"inputs": "q", "outputs": "a", "reference_outputs": "a", deep_tuple(): 1}
    result = evaluate_rows([row])
    (evaluation,) = result.rows[0]["evaluations"].values()
    assert evaluation["error"]["type"] == "RowDataError"
    assert "non-string field name" in evaluation["error"]["message"]
    assert len(evaluation["error"]["message"]) < MAX_MESSAGE


def test_a_deep_dataframe_column_name_is_shown_briefly() -> None:
    pd = pytest.importorskip("pandas")
    columns = {"inputs": ["q"], "outputs": ["a"], "reference_outputs": ["a"], deep_tuple(): [1]}
    frame = pd.DataFrame(columns)
    with pytest.raises(TypeError, match="column names must be strings") as info:
        evaluate_rows(frame)
    assert len(str(info.value)) < MAX_MESSAGE


@pytest.mark.parametrize("kind", ALL)
def test_a_bad_wide_flag_is_named(kind: str) -> None:
    result = evaluate()
    with pytest.raises(TypeError, match="wide must be True or False") as info:
        result.to_pandas(wide=BAD[kind]())
    assert len(str(info.value)) < MAX_MESSAGE


def test_a_huge_langsmith_option_is_shown_briefly() -> None:
    with pytest.raises(ValueError, match="unknown option") as info:
        evaluate_rows("langsmith://dataset?" + huge_str() + "=1")
    assert len(str(info.value)) < MAX_MESSAGE


def evaluate_rows(data: Any) -> Any:
    import openevals

    return openevals.evaluate(data, [scorer], progress=False)


@pytest.mark.parametrize("kind", ALL)
def test_a_batch_metric_returning_a_bad_value_is_recorded_briefly(kind: str) -> None:
    value = BAD[kind]()

    def metric(columns: dict[str, list[Any]]) -> Any:
        return {"m": value}

    result = evaluate(batch_metrics=[metric])
    [error] = result.summary["batch_metric_errors"]
    assert error["type"] == "TypeError"
    assert "batch metric 'metric' returned" in error["message"]
    assert "for 'm'" in error["message"]
    assert len(error["message"]) < MAX_MESSAGE


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_huge_embedding_model_name_is_named_briefly(
    is_async: bool, openai_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openevals import _embed_calls
    from openevals.embeddings import EmbeddingServerError

    monkeypatch.setitem(_embed_calls.BACKOFF, "initial", 0.0)
    for _ in range(_embed_calls.MAX_RETRIES + 1):
        openai_env.queue_embeddings(status=500)
    evaluator = embedding(is_async, model="openai:" + huge_str())
    with pytest.raises(EmbeddingServerError, match=r"^embedding model 'openai:xxx") as info:
        run(evaluator(outputs="a", reference_outputs="b"))
    assert len(str(info.value)) < MAX_MESSAGE


# --------------------------------------------------------------------------- result comments


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_graph_turn_comment_shows_every_node_and_deep_nodes_briefly(is_async: bool) -> None:
    from openevals.graph_trajectory import (
        graph_trajectory_strict_match,
        graph_trajectory_strict_match_async,
    )

    match = graph_trajectory_strict_match_async if is_async else graph_trajectory_strict_match
    nodes = list("abcdefgh")
    result = run(
        match(
            outputs={"steps": [[*nodes[:7], deep_list()]]},
            reference_outputs={"steps": [nodes]},
        )
    )
    assert result["score"] is False
    comment = result["comment"]
    assert "'g', [[[[[...]]]]]] vs reference ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']" in comment
    assert len(comment) < MAX_MESSAGE


def test_a_server_error_body_is_kept_short_whatever_its_shape() -> None:
    from openevals._judge.errors import snippet

    assert snippet({"error": "x"}) == repr(repr({"error": "x"}))
    for kind in ALL:
        text = snippet(BAD[kind]())
        assert len(text) < 700
    assert "characters in all" in snippet(huge_str())
    assert "characters in all" not in snippet(deep_list())


def test_a_rubric_verdict_missing_a_key_names_that_key_among_many() -> None:
    from openevals.json._scoring import _check_verdict
    from openevals.json._types import RubricRequest

    keys = [f"key{i}" for i in range(10)]
    request = RubricRequest(
        index=0,
        outputs=dict.fromkeys(keys, 1),
        reference_outputs=dict.fromkeys(keys, 1),
        criteria=dict.fromkeys(keys, "same"),
    )
    verdicts: dict[Any, Any] = {k: 1.0 for k in keys[:-1]}
    verdicts[deep_tuple()] = 1.0
    with pytest.raises(ValueError, match=r"missing \['key9'\], not in the rubric \[\(\(\(") as info:
        _check_verdict(request, verdicts)
    assert len(str(info.value)) < MAX_MESSAGE


# --------------------------------------------------------------------------- lists of unknown keys


def failures_with(max_drop: Any) -> Any:
    from openevals.comparison import compare
    from openevals.comparison.gate import failures

    return failures(compare(a_run(), a_run()), max_drop=max_drop)


def reference_metric(**options: Any) -> Any:
    from openevals.text import reference_batch_metric

    return reference_batch_metric("bleu", **options)


def calibrate_columns(key: str) -> Any:
    from openevals.calibration import calibrate

    rows = [{"inputs": "q", "outputs": "a", key: 1}, {"inputs": "r", "outputs": "b", key: 2}]
    return calibrate(rows, scorer, progress=False)


UNKNOWN_KEY_CASES = [
    pytest.param(lambda k: compare(keys=[k]), "`keys` names", id="compare-keys"),
    pytest.param(lambda k: compare(judge_options={k: 1}), "`judge_options`", id="judge_options"),
    pytest.param(lambda k: failures_with({k: 0.1}), "`max_drop` names", id="gate-max_drop"),
    pytest.param(
        lambda k: rubric({"description": "d", k: 1}), "has unknown fields", id="rubric-fields"
    ),
    pytest.param(lambda k: reference_metric(**{k: 1}), "does not take", id="reference-metric"),
    pytest.param(calibrate_columns, "no row has a label", id="calibrate-columns"),
]


@pytest.mark.parametrize(("call", "named"), UNKNOWN_KEY_CASES)
def test_a_huge_unknown_key_is_listed_briefly(call: Callable[[str], Any], named: str) -> None:
    with pytest.raises(ValueError, match=named) as info:
        run(call(huge_str()))
    assert len(str(info.value)) < MAX_MESSAGE
