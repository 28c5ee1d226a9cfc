"""Data without outputs, no target: refused before any call when an evaluator requires them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import openevals
from openevals.evaluation import EvaluatorSpec
from openevals.exact import exact_match

ROWS = [
    {"inputs": "2 + 2", "reference_outputs": "4"},
    {"inputs": "3 + 3", "reference_outputs": "6"},
]
CALLS: list[str] = []


def needs_outputs(*, inputs: Any, outputs: Any) -> bool:
    CALLS.append("needs_outputs")
    return outputs is not None


def inputs_only(*, inputs: Any) -> bool:
    CALLS.append("inputs_only")
    return isinstance(inputs, str)


def optional_outputs(*, inputs: Any = None, outputs: Any = None) -> bool:
    CALLS.append("optional_outputs")
    return outputs is None


@pytest.fixture(autouse=True)
def _calls() -> None:
    CALLS.clear()


def _hf() -> Any:
    datasets = pytest.importorskip("datasets")
    return datasets.Dataset.from_pandas(pd.DataFrame(ROWS))


def _parquet(tmp_path: Path) -> str:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path)
    return str(path)


MAKERS: dict[str, Callable[[Path], Any]] = {
    "list": lambda _: [dict(r) for r in ROWS],
    "tuple": lambda _: tuple(dict(r) for r in ROWS),
    "pandas": lambda _: pd.DataFrame(ROWS),
    "polars": lambda _: pl.DataFrame(ROWS),
    "arrow": lambda _: pa.Table.from_pylist(ROWS),
    "parquet": _parquet,
    "hf": lambda _: _hf(),
}


@pytest.mark.parametrize("kind", MAKERS)
@pytest.mark.parametrize("evaluator", [exact_match, needs_outputs])
def test_refused_before_any_call(kind: str, evaluator: Any, tmp_path: Path) -> None:
    data = MAKERS[kind](tmp_path)
    with pytest.raises(ValueError) as info:
        openevals.evaluate(data, [evaluator, inputs_only], progress=False)
    message = str(info.value)
    assert "'outputs'" in message and "target=" in message
    assert evaluator.__name__ in message and "inputs_only" not in message
    assert CALLS == []


def test_async_run_is_refused_the_same_way() -> None:
    with pytest.raises(ValueError, match=r"no 'outputs'.*target="):
        asyncio.run(openevals.aevaluate(pd.DataFrame(ROWS), [needs_outputs], progress=False))
    assert CALLS == []


@pytest.mark.parametrize("kind", MAKERS)
def test_evaluators_that_do_not_require_outputs_still_run(kind: str, tmp_path: Path) -> None:
    result = openevals.evaluate(
        MAKERS[kind](tmp_path), [inputs_only, optional_outputs], progress=False
    )
    assert result.aggregates["inputs_only"]["mean"] == 1.0
    assert result.aggregates["optional_outputs"]["mean"] == 1.0
    assert sorted(CALLS) == ["inputs_only"] * 2 + ["optional_outputs"] * 2


def test_a_target_provides_the_outputs() -> None:
    def target(inputs: str) -> str:
        a, _, b = inputs.partition(" + ")
        return str(int(a) + int(b))

    result = openevals.evaluate(pd.DataFrame(ROWS), [exact_match], target=target, progress=False)
    assert result.aggregates["exact_match"]["mean"] == 1.0


def test_outputs_mapped_from_another_column_are_not_missing() -> None:
    frame = pd.DataFrame([{**r, "answer": r["reference_outputs"]} for r in ROWS])
    spec = EvaluatorSpec(evaluator=exact_match, fields={"outputs": "answer"})
    result = openevals.evaluate(frame, [spec], progress=False)
    assert result.aggregates["exact_match"]["mean"] == 1.0


def test_graphrag_answer_column_counts_as_outputs() -> None:
    rows = [{"Question": "q", "Actual answer": "a", "Reference answer": "a"}]
    for data in (rows, pd.DataFrame(rows)):
        result = openevals.evaluate(data, [exact_match], progress=False)
        assert result.aggregates["exact_match"]["mean"] == 1.0


def test_a_list_where_some_rows_have_outputs_runs_with_row_errors() -> None:
    rows = [{"inputs": "a", "outputs": "x", "reference_outputs": "x"}, ROWS[0]]
    result = openevals.evaluate(rows, [exact_match], progress=False)
    statuses = [row["evaluations"]["exact_match"]["status"] for row in result.rows]
    assert statuses == ["success", "error"]
