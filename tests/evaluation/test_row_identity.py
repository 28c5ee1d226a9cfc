"""Row identity and resume checks, end to end (issue 40, items 1 and 3).

DataFrames without an ``id`` column -> ``evaluate(output=)`` -> files -> ``openevals compare``,
and a re-run after the outputs changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate
from openevals.cli import main
from openevals.data.row_ids import ID_RULE
from openevals.data.rows import load_rows

pd = pytest.importorskip("pandas")


def _frame(answers: list[str]) -> Any:
    return pd.DataFrame(
        {
            "inputs": [f"is {n} even?" for n in range(len(answers))],
            "outputs": answers,
            "reference_outputs": ["yes"] * len(answers),
        }
    )


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_changed_outputs_keep_their_ids_so_compare_pairs_every_row_and_the_gate_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v1, v2 = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl"
    first = evaluate(_frame(["yes"] * 30), ["exact_match"], output=v1, progress=False)
    second = evaluate(
        _frame(["no"] * 10 + ["yes"] * 20), ["exact_match"], output=v2, progress=False
    )
    assert first.aggregates["exact_match"]["mean"] == 1.0
    assert second.aggregates["exact_match"]["mean"] == pytest.approx(20 / 30)
    assert [r["id"] for r in first.rows] == [r["id"] for r in second.rows]
    assert _lines(v1)[0]["row_ids"] == ID_RULE

    assert main(["compare", str(v1), str(v2), "--fail-on-regression"]) == 1
    captured = capsys.readouterr()
    assert "exact_match: significant regression" in captured.err
    assert "only in" not in captured.out


def test_a_rerun_after_the_outputs_changed_scores_the_new_outputs(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    first = evaluate(_frame(["yes"] * 10), ["exact_match"], output=out, progress=False)
    assert first.aggregates["exact_match"]["mean"] == 1.0
    again = evaluate(_frame(["no"] * 10), ["exact_match"], output=out, progress=False)
    assert again.aggregates["exact_match"]["mean"] == 0.0, "never a score for other content"
    assert again.summary["pairs"]["resumed"] == 0
    assert again.summary["pairs"]["reevaluated"] == 10
    assert again.summary["reevaluated"] == {"row_changed": 10, "evaluator_changed": 0}
    # A third run with the same content resumes every pair of the second.
    third = evaluate(_frame(["no"] * 10), ["exact_match"], output=out, progress=False)
    assert third.summary["pairs"]["resumed"] == 10
    assert third.aggregates["exact_match"]["mean"] == 0.0
    # The file's last record per row is the one for the current content.
    last = {line["row_id"]: line for line in _lines(out) if line["kind"] == "row"}
    assert {line["outputs"] for line in last.values()} == {"no"}


def test_a_changed_evaluator_is_evaluated_again(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    rows = [{"outputs": "abc", "reference_outputs": "abd"}] * 4

    def close(*, outputs: str, reference_outputs: str) -> bool:
        return outputs[:2] == reference_outputs[:2]

    evaluate(rows, {"close": close}, output=out, progress=False)

    def close(*, outputs: str, reference_outputs: str) -> bool:  # type: ignore[no-redef]
        return outputs == reference_outputs  # same name, other code

    again = evaluate(rows, {"close": close}, output=out, progress=False)
    assert again.summary["reevaluated"] == {"row_changed": 0, "evaluator_changed": 4}
    assert again.aggregates["close"]["mean"] == 0.0


def test_repeated_examples_are_told_apart_by_order_and_user_ids_are_kept(tmp_path: Path) -> None:
    same = {"inputs": "q", "outputs": "a", "reference_outputs": "a"}
    result = evaluate([same, same, same], ["exact_match"], progress=False)
    ids = [r["id"] for r in result.rows]
    assert ids[1:] == [f"{ids[0]}.2", f"{ids[0]}.3"]
    assert load_rows([{"id": "case-7", **same}])[0].id == "case-7"


def test_a_file_written_under_the_old_rule_is_refused_with_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "old.jsonl"
    old = [
        {"kind": "run", "row_id": "", "evaluators": ["exact_match"], "group_by": None},
        {"kind": "eval", "row_id": "0f0f0f0f0f0f0f0f", "index": 0, "evaluator": "exact_match"},
    ]
    out.write_text("".join(json.dumps(line) + "\n" for line in old), encoding="utf-8")
    with pytest.raises(ValueError, match=r"earlier version of openevals.*new file"):
        evaluate([{"outputs": "a"}], ["exact_match"], output=out, progress=False)


def test_columnar_ids_equal_per_row_ids_across_blocks_and_spills(tmp_path: Path) -> None:
    from openevals.evaluation import store

    rows = [{"inputs": n % 700, "outputs": "x", "reference_outputs": "x"} for n in range(2500)]
    per_row = [r.id for r in load_rows(rows)]
    spill = store.SPILL_AFTER
    store.SPILL_AFTER = 1024  # parts past the first block go to the temporary file
    try:
        result = evaluate(rows, ["exact_match"], progress=False)
        assert [r["id"] for r in result.rows] == per_row
        assert [r["id"] for r in result.rows[::-1]] == per_row[::-1]
    finally:
        store.SPILL_AFTER = spill
    out = tmp_path / "out.jsonl"
    evaluate(rows, ["exact_match"], output=out, progress=False)
    assert [line["row_id"] for line in _lines(out) if line["kind"] == "row"] == per_row


def test_a_block_taking_the_per_row_code_numbers_repeats_after_the_columnar_blocks() -> None:
    rows: list[dict[str, Any]] = [
        {"inputs": "q", "outputs": "x", "reference_outputs": "x"} for _ in range(1500)
    ]
    # That block goes row by row.
    rows[1200] = {"Question": "other", "Actual answer": "x", "Reference answer": "x"}
    rows.append({"inputs": "q", "outputs": "y", "reference_outputs": "x"})
    result = evaluate(rows, ["exact_match"], progress=False)
    ids = [r["id"] for r in result.rows]
    assert ids == [r.id for r in load_rows(rows)]
    assert ids[-1] == f"{ids[0]}.1500"


def test_compare_says_when_unpaired_rows_look_like_changed_examples_and_the_gate_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openevals.comparison import compare
    from openevals.comparison.paired import assert_no_regression

    v1, v2 = tmp_path / "v1.jsonl", tmp_path / "v2.jsonl"
    evaluate(_frame(["yes"] * 30), ["exact_match"], output=v1, progress=False)
    changed = _frame(["yes"] * 30)
    changed.loc[:9, "reference_outputs"] = "no"  # 10 examples changed: new ids
    evaluate(changed, ["exact_match"], output=v2, progress=False)

    comparison = compare(v1, v2)
    assert comparison.rows_paired == 20 and comparison.unpaired_same_inputs == 10
    assert any("same inputs" in note and "stable `id`" in note for note in comparison.notes)

    assert main(["compare", str(v1), str(v2), "--fail-on-regression"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "20 of 60 rows (33%) are not paired" in err
    assert "--allow-unpaired" in err
    allowed = ["--fail-on-regression", "--allow-unpaired", "0.4"]
    assert main(["compare", str(v1), str(v2), *allowed]) == 0  # the 20 paired rows agree
    with pytest.raises(ValueError, match="are not paired"):
        assert_no_regression(v1, v2)
    assert_no_regression(v1, v2, fail_on_regression=False)  # no gate asked for: no refusal


def test_compare_says_it_does_not_read_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from openevals.comparison import compare

    result = evaluate(_frame(["yes"] * 3), ["exact_match"], progress=False)
    table = result.to_parquet(tmp_path / "run.parquet")
    with pytest.raises(ValueError, match="is a Parquet file; compare reads the JSONL"):
        compare(table, result)


def test_nested_keys_of_mixed_types_get_ids_on_both_paths() -> None:
    rows = [{"inputs": {1: "a", "b": 2}, "outputs": {3: "x", "y": 4}, "reference_outputs": "x"}] * 3
    per_row = [r.id for r in load_rows(rows)]
    assert per_row[1] == f"{per_row[0]}.2" and all(r.problem is None for r in load_rows(rows))
    result = evaluate(rows, ["exact_match"], progress=False)
    assert [r["id"] for r in result.rows] == per_row
