"""A run file with corrupt lines in the middle: ``compare`` says which line of which file was
skipped and why (CLI output, HTML report, ``Comparison.notes``); a torn last line, which a killed
run leaves, stays a missing row without a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from openevals.cli import main
from openevals.comparison import compare
from tests.comparison.test_compare import _files


def _corrupt(path: Path, line_number: int, replacement: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[line_number - 1] = replacement
    path.write_bytes(b"".join(lines))


def _eval_line_numbers(path: Path) -> list[int]:
    return [
        number
        for number, line in enumerate(path.read_bytes().splitlines(), 1)
        if line.startswith(b'{"kind": "eval"')
    ]


@pytest.mark.parametrize(
    ("replacement", "why"),
    [
        (b'{"kind": "eval", "row_id": "r3", "stat\n', "not valid JSON"),
        (b'{"kind": "eval", "row_id": "r\xe93"}\n', "not UTF-8 text (byte 0xe9 at column 30)"),
        (b"[" * 100_000 + b"\n", "nested too deeply to read as JSON"),
    ],
)
def test_a_corrupt_line_mid_file_is_named_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], replacement: bytes, why: str
) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 8, [True] * 8)
    number = _eval_line_numbers(cand_file)[3]
    _corrupt(cand_file, number, replacement)
    comparison = compare(base_file, cand_file)
    expected = f"candidate run file {str(cand_file)!r}, line {number} skipped: {why}"
    assert any(note.startswith(expected) for note in comparison.notes), comparison.notes
    assert comparison.to_dict()["notes"][0].startswith(expected)
    assert not any("baseline run file" in note for note in comparison.notes)
    report = tmp_path / "compare.html"
    assert main(["compare", str(base_file), str(cand_file), "--report", str(report)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the terminal table wraps long lines
    assert f"line {number} skipped" in out and why.split(" (")[0] in out
    assert f"line {number} skipped" in report.read_text(encoding="utf-8")


def test_a_torn_last_line_stays_a_missing_row_without_a_note(tmp_path: Path) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 8, [True] * 8)
    last = len(cand_file.read_bytes().splitlines())
    _corrupt(cand_file, last, b'{"kind": "eval", "row_id": "r7", "evalu')
    comparison = compare(base_file, cand_file)
    assert not any("skipped" in note for note in comparison.notes)
    assert comparison.key("exact_match").n == 7  # r7's result was on the torn line
    assert comparison.key("exact_match").excluded


def test_many_corrupt_lines_are_counted_after_the_first_ten(tmp_path: Path) -> None:
    base_file, cand_file = _files(tmp_path, [True] * 30, [True] * 30)
    for number in _eval_line_numbers(base_file)[:25]:
        _corrupt(base_file, number, b"not json\n")
    comparison = compare(base_file, cand_file)
    skipped = [n for n in comparison.notes if "skipped" in n]
    assert len(skipped) == 11
    assert skipped[-1] == "baseline run file: 15 more corrupt line(s) skipped"
