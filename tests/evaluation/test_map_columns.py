"""Column mapping on the data side: map_columns (issue 40, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openevals import evaluate, map_columns
from openevals.data.rows import load_rows

RAGAS = [
    {"question": "2+2?", "answer": "4", "ground_truth": "4", "contexts": ["math"]},
    {"question": "3+3?", "answer": "7", "ground_truth": "6", "contexts": ["math"]},
]


def _scores(data: object) -> list[bool]:
    result = evaluate(data, ["exact_match"], progress=False)
    return [r["evaluations"]["exact_match"]["results"][0]["score"] for r in result.rows]


def test_a_dict_mapping_renames_lists_files_and_nests_dotted_targets(tmp_path: Path) -> None:
    columns = {
        "question": "inputs.question",
        "answer": "outputs",
        "ground_truth": "reference_outputs",
    }
    assert _scores(map_columns(RAGAS, columns)) == [True, False]
    rows = load_rows(map_columns(RAGAS, columns))
    assert rows[0].fields == {
        "inputs": {"question": "2+2?"},
        "outputs": "4",
        "reference_outputs": "4",
        "contexts": ["math"],
    }
    assert RAGAS[0]["answer"] == "4" and "outputs" not in RAGAS[0]  # the caller's dicts unchanged
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RAGAS), encoding="utf-8")
    assert _scores(map_columns(path, "ragas")) == [True, False]


def test_dataframes_are_renamed_and_presets_recognise_ragas_and_deepeval() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(RAGAS)
    with pytest.raises(ValueError, match=r"look like ragas/deepeval names.*map_columns"):
        evaluate(df, ["exact_match"], progress=False)
    assert _scores(map_columns(df, "ragas")) == [True, False]
    deepeval = pd.DataFrame(
        [{"input": "q", "actual_output": "a", "expected_output": "a", "retrieval_context": ["c"]}]
    )
    rows = load_rows(map_columns(deepeval, "deepeval"))
    assert set(rows[0].fields) == {"inputs", "outputs", "reference_outputs", "context"}
    assert list(df.columns) == ["question", "answer", "ground_truth", "contexts"]


def test_bad_mappings_name_the_fix() -> None:
    with pytest.raises(ValueError, match=r"no column 'answr' \(did you mean 'answer'\?\)"):
        load_rows(map_columns(RAGAS, {"answr": "outputs"}))
    with pytest.raises(ValueError, match="several columns map to 'outputs'"):
        map_columns(RAGAS, {"answer": "outputs", "question": "outputs"})
    with pytest.raises(ValueError, match="unknown preset 'trulens'"):
        map_columns(RAGAS, "trulens")
    with pytest.raises(TypeError, match="must be a dict"):
        map_columns(RAGAS, ["answer"])  # type: ignore[arg-type]
