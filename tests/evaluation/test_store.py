"""The row store of a batch run: parts in memory and in a temporary file, read as one sequence
(issues 22 and 25: a million-row run keeps its memory bounded)."""

from __future__ import annotations

import json
import math
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals import evaluate, exact_match, levenshtein_distance
from openevals.data.encoding import encode
from openevals.evaluation import blocks, store
from openevals.evaluation.blocks import ColumnBlock, EvalColumn, _EvalLines
from openevals.evaluation.records import Recorder
from openevals.evaluation.store import ResultRows, RowStore


def _rows(start: int, count: int) -> list[dict[str, Any]]:
    return [{"id": str(i), "index": i, "evaluations": {}} for i in range(start, start + count)]


def test_parts_past_the_budget_go_to_the_file_and_read_back_in_order() -> None:
    rows = RowStore(spill_after=5)
    rows.add_rows(_rows(0, 4))
    rows.add_rows(_rows(4, 4))  # over the budget: spilled
    rows.add_rows(_rows(8, 3))
    view = rows.view()
    assert len(view) == 11 == len(rows)
    assert [r["index"] for r in view] == list(range(11))
    assert view[9]["id"] == "9" and view[-1]["index"] == 10
    assert [r["index"] for r in view[3:9:2]] == [3, 5, 7]
    assert view == _rows(0, 11) and view != _rows(0, 10)
    with pytest.raises(IndexError, match="out of range"):
        view[11]
    with pytest.raises(TypeError, match="int or slice"):
        view["a"]  # type: ignore[call-overload]
    assert pickle.loads(pickle.dumps(view)) == _rows(0, 11)
    assert repr(view).startswith("[{")


def test_loose_rows_are_sorted_and_merged() -> None:
    rows = RowStore()
    for rec in reversed(_rows(0, 3)):
        rows.add(rec)  # type: ignore[arg-type]
    assert [r["index"] for r in rows.view()] == [0, 1, 2]
    rows.add_rows(_rows(3, 2))
    assert [r["index"] for r in rows.view()] == [0, 1, 2, 3, 4]


def test_in_memory_blocks_are_built_once() -> None:
    result = evaluate([{"outputs": "a", "reference_outputs": "a"}] * 3, [exact_match])
    first = result.rows[0]
    assert result.rows[0] is first
    assert next(iter(result.rows)) is first


def test_a_run_larger_than_the_budget_gives_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    data = [
        {"outputs": f"a {i % 3}", "reference_outputs": f"a {i % 2}", "topic": str(i % 4)}
        for i in range(50)
    ]
    kept = evaluate(data, [exact_match, levenshtein_distance], progress=False)
    monkeypatch.setattr(store, "SPILL_AFTER", 7)
    monkeypatch.setattr(blocks, "BLOCK_ROWS", 4)
    spilled = evaluate(data, [exact_match, levenshtein_distance], progress=False)
    assert isinstance(spilled.rows, ResultRows)

    def strip(rows: Any) -> list[Any]:
        out = []
        for rec in rows:
            rec = json.loads(encode(rec))
            for entry in rec["evaluations"].values():
                entry.pop("elapsed_sec")
            out.append(rec)
        return out

    assert strip(spilled.rows) == strip(kept.rows)
    assert spilled.aggregates == kept.aggregates
    assert len(spilled.rows[10:20]) == 10


SCORES = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
)
COMMENTS = st.one_of(st.none(), st.text(max_size=8), st.just({"x": 1}))


@settings(max_examples=300, deadline=None)
@given(
    score=SCORES,
    comment=COMMENTS,
    key=st.text(max_size=6),
    row_id=st.text(max_size=6),
    name=st.text(max_size=6),
    model=st.one_of(st.none(), st.text(max_size=4), st.sampled_from(["{", "}", "{}", "{0}"])),
    elapsed=st.floats(allow_nan=True, allow_infinity=True),
    cached=st.booleans(),
    error=st.booleans(),
    order=st.booleans(),
)
def test_eval_lines_written_as_text_equal_the_record_encoder(
    score: Any,
    comment: Any,
    key: str,
    row_id: str,
    name: str,
    model: str | None,
    elapsed: float,
    cached: bool,
    error: bool,
    order: bool,
) -> None:
    result = {"key": key, "score": score, "comment": comment, "metadata": None}
    if order:
        result = {"score": score, "key": key, "comment": comment, "metadata": None}
    column = EvalColumn(results=[[result]], elapsed=[elapsed])
    if error:
        column.errors[0] = {"type": "ValueError", "message": 'bad "value" é'}
        column.results = [[]]
    block = ColumnBlock(
        start=3,
        records=[{"outputs": "x"}],
        ids=[row_id],
        names=[name],
        models=[model],
        columns=[column],
        cached=cached,
        fingerprints=["0123456789abcdef"],
    )
    text = _EvalLines(block, 0).line(
        0, row_id, json.encoder.encode_basestring(row_id), 3, "fedcba9876543210"
    )
    fps = {"evaluator_fp": "0123456789abcdef", "row_fp": "fedcba9876543210"}
    expected = encode(Recorder.eval_line(row_id, 3, name, block.evaluation(0, 0), **fps))
    assert text == expected
    if not (isinstance(score, float) and not math.isfinite(score)):
        assert json.loads(text)["index"] == 3


def test_rows_finishing_out_of_order_are_kept_in_order_and_spill() -> None:
    rows = RowStore(spill_after=3)
    order = [2, 0, 1, 5, 3, 4, 9, 6, 8, 7]
    for index in order:
        rows.add({"id": str(index), "index": index, "evaluations": {}})  # type: ignore[typeddict-item]
        assert len(rows) == order.index(index) + 1
    view = rows.view()
    assert [r["index"] for r in view] == list(range(10))


def test_rows_ahead_of_a_missing_one_are_still_returned_in_order() -> None:
    rows = RowStore()
    for index in (0, 3, 2):
        rows.add({"id": str(index), "index": index, "evaluations": {}})  # type: ignore[typeddict-item]
    assert [r["index"] for r in rows.view()] == [0, 2, 3]


async def _judge_like(*, outputs: Any, reference_outputs: Any, **_: Any) -> dict[str, Any]:
    """An async scorer flagged as a judge: the per-row path (not the columnar one)."""
    import asyncio

    await asyncio.sleep(0.001 if int(outputs.split()[1]) % 3 == 0 else 0)
    return {"key": "judged", "score": outputs == reference_outputs}


def test_a_judge_run_larger_than_the_budget_keeps_its_rows_in_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from openevals._contract import EvaluatorInfo, attach_info

    judge = attach_info(_judge_like, EvaluatorInfo(run_name="judged", judge=True, is_async=True))
    data = [{"outputs": f"a {i}", "reference_outputs": f"a {i % 7}"} for i in range(3_000)]
    kept = evaluate(data, [judge, exact_match], progress=False, concurrency=8)
    assert isinstance(kept.rows, list)
    monkeypatch.setattr(store, "SPILL_AFTER", 500)
    spilled = evaluate(data, [judge, exact_match], progress=False, concurrency=8)
    assert isinstance(spilled.rows, ResultRows)  # was a plain list on this path
    assert [r["index"] for r in spilled.rows] == list(range(3_000))
    assert [r["evaluations"]["judge_like"]["results"] for r in spilled.rows] == [
        r["evaluations"]["judge_like"]["results"] for r in kept.rows
    ]
    assert spilled.aggregates == kept.aggregates
