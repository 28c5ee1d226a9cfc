"""Dataset loading: lists, JSONL, JSON, CSV, TSV (graphrag-eval columns), ids and errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from openevals.data.rows import count_rows, iter_rows, load_rows, normalize_row

ROWS = [
    {"id": "a", "inputs": {"q": "1+1"}, "outputs": "2", "reference_outputs": "2", "topic": "math"},
    {
        "id": "b",
        "inputs": {"q": "capital of France"},
        "outputs": "Lyon",
        "reference_outputs": "Paris",
    },
]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_list_of_dicts_keeps_fields_and_extra_columns() -> None:
    rows = load_rows(ROWS)
    assert [r.id for r in rows] == ["a", "b"]
    assert [r.index for r in rows] == [0, 1]
    assert rows[0].fields == {
        "inputs": {"q": "1+1"},
        "outputs": "2",
        "reference_outputs": "2",
        "topic": "math",
    }
    assert rows[0].extra == {"topic": "math"}
    assert "id" not in rows[0].fields


def test_loading_never_mutates_the_callers_rows() -> None:
    data = copy.deepcopy(ROWS)
    rows = load_rows(data)
    rows[0].fields["outputs"] = "changed"
    assert data == ROWS


def test_content_ids_come_from_the_example_not_the_outputs() -> None:
    same = [{"outputs": "x", "reference_outputs": "x"}, {"outputs": "x", "reference_outputs": "x"}]
    first = [r.id for r in load_rows(same)]
    again = [r.id for r in load_rows(copy.deepcopy(same))]
    assert first == again
    assert first[1] == f"{first[0]}.2", "a repeated example is told apart by its occurrence"
    # Changed outputs keep the id; a changed reference, input or extra column changes it.
    assert load_rows([{"outputs": "y", "reference_outputs": "x"}])[0].id == first[0]
    assert load_rows([{"outputs": "x", "reference_outputs": "z"}])[0].id != first[0]
    assert load_rows([{"outputs": "x", "reference_outputs": "x", "topic": 1}])[0].id != first[0]
    # The position does not matter: reordered rows keep their ids.
    rows = [{"inputs": {"q": n}, "outputs": "a"} for n in range(3)]
    forward = {r.fields["inputs"]["q"]: r.id for r in load_rows(rows)}
    backward = {r.fields["inputs"]["q"]: r.id for r in load_rows(rows[::-1])}
    assert forward == backward
    # graphrag-eval's answer column stands for the outputs and is left out the same way.
    tsv_like = [{"Question": "q", "Actual answer": a, "Reference answer": "r"} for a in "ab"]
    ids = [r.id for r in load_rows(tsv_like)]
    assert ids[1] == f"{ids[0]}.2"


def test_integer_ids_become_strings_and_bad_ids_are_rejected() -> None:
    assert normalize_row({"id": 7, "outputs": 1}, 0).id == "7"
    with pytest.raises(TypeError, match="'id' of type list"):
        normalize_row({"id": [1], "outputs": 1}, 3)


def test_duplicate_ids_name_both_rows() -> None:
    with pytest.raises(ValueError, match=r"rows 0 and 2 share the id 'x'"):
        load_rows([{"id": "x"}, {"id": "y"}, {"id": "x"}])


def test_non_dict_rows_and_bad_data_types_are_rejected() -> None:
    with pytest.raises(TypeError, match="row 1 must be a dict"):
        load_rows([{"outputs": 1}, "oops"])
    with pytest.raises(TypeError, match="single dict"):
        iter_rows({"outputs": 1})
    with pytest.raises(TypeError, match="got int"):
        iter_rows(5)


def test_jsonl_is_streamed_and_blank_lines_skipped(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n\n" + json.dumps(ROWS[1]) + "\n", encoding="utf-8")
    stream = iter_rows(path)
    first = next(stream)
    assert first.id == "a"
    assert [r.id for r in stream] == ["b"]
    assert count_rows(path) == 2
    assert count_rows(str(path)) == 2


def test_jsonl_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl' line 2 is not valid JSON"):
        load_rows(path)


def test_json_list_and_wrapped_object(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(ROWS), encoding="utf-8")
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"examples": ROWS}), encoding="utf-8")
    assert [r.id for r in load_rows(plain)] == ["a", "b"]
    assert [r.id for r in load_rows(wrapped)] == ["a", "b"]
    assert count_rows(wrapped) == 2
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"something": 1}), encoding="utf-8")
    with pytest.raises(ValueError, match="expected a list of rows"):
        load_rows(odd)


def test_csv_dotted_columns_and_json_cells(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text(
        "id,inputs.question,inputs.context,outputs,reference_outputs,tags\n"
        'r1,What is 2+2?,arithmetic,4,4,"[""math"", ""easy""]"\n'
        'r2,"Say ""hi""",greeting,"{""text"": ""hi""}","{""text"": ""hello""}",[broken\n',
        encoding="utf-8",
    )
    rows = load_rows(path)
    assert rows[0].fields["inputs"] == {"question": "What is 2+2?", "context": "arithmetic"}
    assert rows[0].fields["outputs"] == "4"
    assert rows[0].fields["tags"] == ["math", "easy"]
    assert rows[1].fields["inputs"]["question"] == 'Say "hi"'
    assert rows[1].fields["outputs"] == {"text": "hi"}
    assert rows[1].fields["tags"] == "[broken", "a cell that is not valid JSON stays a string"
    assert count_rows(path) == 2


def test_graphrag_tsv_columns_map_to_fields(tmp_path: Path) -> None:
    path = tmp_path / "answers.tsv"
    path.write_text(
        "Question\tReference answer\tActual answer\ttemplate_id\n"
        "List transformers in OSLO\tOSLO T1, OSLO T2\tOSLO T2, OSLO T1\tlist_transformers\n"
        "List substations in NO2\tARENDAL\t\tlist_substations\n",
        encoding="utf-8",
    )
    rows = load_rows(path)
    assert rows[0].fields == {
        "inputs": "List transformers in OSLO",
        "reference_outputs": "OSLO T1, OSLO T2",
        "outputs": "OSLO T2, OSLO T1",
        "template_id": "list_transformers",
    }
    assert rows[1].fields["outputs"] == ""
    assert count_rows(path) == 2


def test_graphrag_columns_do_not_override_explicit_fields() -> None:
    row = normalize_row({"Question": "q", "inputs": {"x": 1}}, 0)
    assert row.fields == {"Question": "q", "inputs": {"x": 1}}


def test_example_datasets_load() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "data"
    demo = load_rows(root / "demo.jsonl")
    assert len(demo) == 24 and all(r.fields["category"] for r in demo)
    tsv = load_rows(root / "answers.tsv")
    assert set(tsv[0].fields) == {"inputs", "outputs", "reference_outputs", "template_id"}
    csv_rows = load_rows(root / "qa.csv")
    assert csv_rows[0].id == "sci-1" and "question" in csv_rows[0].fields["inputs"]


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "data.xlsx"  # (.parquet is read since issue 22: tests/data/test_sources.py)
    path.write_text("x", encoding="utf-8")
    with pytest.raises(ValueError, match=r"accepted: \.csv, \.json, \.jsonl.*\.parquet"):
        iter_rows(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        iter_rows(tmp_path / "missing.jsonl")


def test_count_rows_of_iterables() -> None:
    assert count_rows(ROWS) == 2
    assert count_rows(r for r in ROWS) is None


def test_jsonl_written_rows_round_trip(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "x.jsonl", ROWS)
    assert [r.fields for r in load_rows(path)] == [r.fields for r in load_rows(ROWS)]
