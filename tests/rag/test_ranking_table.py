"""The public ranking functions agree with the metric table, and their signatures are real."""

from __future__ import annotations

import asyncio
import inspect
import typing

import pytest

from openevals.rag import _ranking_metrics as table
from openevals.rag import ranking
from tests.rag.fresh_python import assert_runs_in_fresh_python

POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
KEYWORD = inspect.Parameter.KEYWORD_ONLY


def expected(options: tuple[table.Option, ...], returns: str, lists: bool = False) -> list[tuple]:
    params = []
    if lists:
        params += [
            ("retrieved_lists", POSITIONAL, inspect.Parameter.empty, "Sequence[Any]"),
            ("reference_lists", POSITIONAL, inspect.Parameter.empty, "Sequence[Any]"),
        ]
    params += [(o.name, KEYWORD, o.default, o.annotation) for o in options]
    return [*params, ("return", None, None, returns)]


def actual(fn: typing.Callable[..., object]) -> list[tuple]:
    signature = inspect.signature(fn)
    params = [(p.name, p.kind, p.default, p.annotation) for p in signature.parameters.values()]
    return [*params, ("return", None, None, signature.return_annotation)]


@pytest.mark.parametrize("spec", table.METRICS, ids=lambda s: s.name)
def test_every_metric_has_exactly_the_signatures_of_its_table_row(spec: table.MetricSpec) -> None:
    sync = getattr(ranking, f"create_{spec.name}_evaluator")
    twin = getattr(ranking, f"create_async_{spec.name}_evaluator")
    batch = getattr(ranking, f"{spec.name}_batch")
    assert actual(sync) == expected(table.factory_options(spec), "SimpleEvaluator")
    assert actual(twin) == expected(table.factory_options(spec), "SimpleAsyncEvaluator")
    assert actual(batch) == expected(table.batch_options(spec), "BatchScores", lists=True)


def test_the_suite_takes_every_metric_option() -> None:
    options = table.suite_options()
    assert actual(ranking.create_retrieval_evaluator) == expected(options, "SimpleEvaluator")
    assert actual(ranking.create_async_retrieval_evaluator) == expected(
        options, "SimpleAsyncEvaluator"
    )
    names = [o.name for o in options]
    assert names == [
        "metrics",
        "k",
        "mode",
        "denominator",
        "normalize_by",
        "key",
        "empty_reference",
    ]


def test_every_public_function_is_covered_by_the_table() -> None:
    functions = {n for n in ranking.__all__ if inspect.isfunction(getattr(ranking, n))}
    covered = {"create_retrieval_evaluator", "create_async_retrieval_evaluator"}
    for spec in table.METRICS:
        covered |= {
            f"create_{spec.name}_evaluator",
            f"create_async_{spec.name}_evaluator",
            f"{spec.name}_batch",
        }
    assert functions == covered


def test_choices_come_from_the_literal_aliases() -> None:
    by_name = {o.name: o for spec in table.METRICS for o in spec.options}
    assert by_name["mode"].choices == typing.get_args(ranking.RecallMode)
    assert by_name["denominator"].choices == typing.get_args(ranking.PrecisionDenominator)
    assert by_name["normalize_by"].choices == (
        "relevant",
        "retrieved_relevant",
        "all_relevant",
    )
    assert table.EMPTY_REFERENCE.choices == typing.get_args(ranking.EmptyReference)


def test_type_hints_resolve_for_every_public_function() -> None:
    # The twins carry real annotations too (type checkers, IDEs, `inspect.signature` users).
    for name in ranking.__all__:
        fn = getattr(ranking, name)
        if inspect.isfunction(fn):
            hints = typing.get_type_hints(fn)
            assert "return" in hints
    hints = typing.get_type_hints(ranking.create_async_recall_evaluator)
    assert hints["return"] is ranking.SimpleAsyncEvaluator
    assert hints["mode"] == ranking.RecallMode


def test_option_names_can_be_read_from_the_signatures() -> None:
    # What openevals/evaluation/registry.py needs to derive allowed options.
    for spec in table.METRICS:
        factory = getattr(ranking, f"create_{spec.name}_evaluator")
        names = tuple(inspect.signature(factory).parameters)
        assert names == tuple(o.name for o in table.factory_options(spec))


def test_docstrings_are_written_from_the_table() -> None:
    for spec in table.METRICS:
        doc = getattr(ranking, f"create_{spec.name}_evaluator").__doc__
        assert doc.startswith(spec.summary)
        assert spec.formula in doc
        for option in table.factory_options(spec):
            assert f"    {option.name}" in doc
        twin_doc = getattr(ranking, f"create_async_{spec.name}_evaluator").__doc__
        assert twin_doc.startswith("Async twin of")
        assert spec.summary in twin_doc
        batch_doc = getattr(ranking, f"{spec.name}_batch").__doc__
        assert "BatchScores" in batch_doc
        assert "feedback_key" not in batch_doc
    assert "all_relevant" in ranking.create_average_precision_evaluator.__doc__


def test_async_twins_are_named_and_bind_like_their_sync_factory() -> None:
    twin = ranking.create_async_ndcg_evaluator
    assert twin.__name__ == "create_async_ndcg_evaluator"
    assert twin.__module__ == "openevals.rag.ranking"
    with pytest.raises(TypeError):
        twin(3)  # keyword-only, like the sync factory
    with pytest.raises(TypeError, match="unexpected keyword"):
        twin(mode="single_hit")  # ndcg takes no mode
    evaluator = ranking.create_async_recall_evaluator(k=1, mode="single_hit")
    assert inspect.iscoroutinefunction(evaluator)
    result = asyncio.run(evaluator(outputs=["a", "b"], reference_outputs=["b", "c"]))
    assert result["key"] == "recall@1"
    assert result["score"] == 0.0
    assert evaluator.__module__ == "openevals.rag.ranking"


def test_option_errors_are_the_same_for_factories_twins_and_batch_forms() -> None:
    for make in (
        lambda **o: ranking.create_average_precision_evaluator(**o),
        lambda **o: ranking.create_async_average_precision_evaluator(**o),
        lambda **o: ranking.average_precision_batch([["a"]], [["a"]], **o),
    ):
        with pytest.raises(ValueError, match="`normalize_by` must be one of"):
            make(normalize_by="R")
        with pytest.raises(TypeError, match="`k` must be a positive int"):
            make(k="3")


def test_importing_and_per_item_scoring_load_no_numpy() -> None:
    code = (
        "import sys\n"
        "import openevals, openevals.rag\n"
        "from openevals.rag import create_retrieval_evaluator, create_ndcg_evaluator\n"
        "create_retrieval_evaluator(k=[1, 3])(outputs=['a', 'b'], reference_outputs=['a'])\n"
        "assert 'numpy' not in sys.modules, 'per-item scoring loaded numpy'\n"
        "from openevals.rag import recall_batch\n"
        "assert 'numpy' not in sys.modules, 'importing a batch form loaded numpy'\n"
        "recall_batch([['a']], [['a']])\n"
        "assert 'numpy' in sys.modules\n"
    )
    assert_runs_in_fresh_python(code)
