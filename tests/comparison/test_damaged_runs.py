"""Damaged run files (issue 43): ``compare`` raises a ``ValueError`` naming the file, the line and
the row or field, never an internal error; the CLI exits 2 with one line, never 1 (the gate's
code) and never with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from openevals.cli import main
from openevals.comparison import compare
from tests.comparison.test_compare import _files
from tests.comparison.test_corrupt_lines import _corrupt, _eval_line_numbers


def _line(path: Path, number: int) -> bytes:
    return path.read_bytes().splitlines(keepends=True)[number - 1]


def _cli_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one-line error of ``openevals compare ARGS``, which must exit 2."""
    assert main(["compare", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("score", [b"9" * 400, b"-" + b"9" * 400, b"Infinity"])
def test_a_score_past_the_float_range_counts_as_infinite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: bytes
) -> None:
    """A 400-digit int score raised OverflowError (the CLI exited 1 with a traceback); it is the
    infinity of its sign now, as in ``numeric_score``, and an infinite score leaves its key out
    with the reason."""
    base_file, cand_file = _files(tmp_path, [True] * 8, [True] * 8)
    number = _eval_line_numbers(cand_file)[2]
    _corrupt(cand_file, number, _line(cand_file, number).replace(b"true", score, 1))
    result = compare(base_file, cand_file)
    reason = result.excluded_keys["exact_match"]
    assert reason == "scores that are not finite numbers or booleans: ['infinite']"
    assert main(["compare", str(base_file), str(cand_file)]) == 0
    assert "not finite numbers" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("results", [b"5", b'"abc"', b"{}"])
def test_results_that_are_not_a_list_name_the_file_line_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], results: bytes
) -> None:
    """``"results": 5`` raised ``TypeError: 'int' object is not iterable``; a text was read one
    character at a time and silently dropped."""
    base_file, cand_file = _files(tmp_path, [True] * 8, [True] * 8)
    number = _eval_line_numbers(cand_file)[2]
    head = _line(cand_file, number).split(b'"results"')[0]
    _corrupt(cand_file, number, head + b'"results": ' + results + b', "error": null}\n')
    words = f"line {number}: the eval record of row 'r2' has `results`"
    with pytest.raises(ValueError, match=str(cand_file)) as caught:
        compare(base_file, cand_file)
    assert words in str(caught.value) and "not a list of results" in str(caught.value)
    err = _cli_error(capsys, str(base_file), str(cand_file))
    assert str(cand_file) in err and words in err


@pytest.mark.parametrize(
    ("outputs", "why"),
    [
        (b'"n\n', "not valid JSON"),
        (b'"n\xe9", "x": 1}\n', "not UTF-8 text (byte 0xe9 at column"),
        (b"[" * 100_000 + b"\n", "nested too deeply to read as JSON"),
    ],
)
def test_a_damaged_row_line_of_a_shown_row_names_the_file_line_and_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], outputs: bytes, why: str
) -> None:
    """The scan takes only a ``row`` line's id; the line is decoded when its row is shown among the
    changed rows, which raised a bare JSONDecodeError, UnicodeDecodeError or RecursionError."""
    base_file, cand_file = _files(tmp_path, [True] * 8, [False] * 8)
    number = _eval_line_numbers(cand_file)[3] - 1  # the row line of r3
    head = _line(cand_file, number).split(b'"outputs"')[0]
    _corrupt(cand_file, number, head + b'"outputs": ' + outputs)
    words = f"line {number} (row 'r3') is {why}"
    with pytest.raises(ValueError, match=str(cand_file)) as caught:
        compare(base_file, cand_file)
    assert words in str(caught.value)
    err = _cli_error(capsys, str(base_file), str(cand_file))
    assert words in err


def test_a_failed_evaluation_whose_error_is_not_an_object_is_read(tmp_path: Path) -> None:
    """``"error": 5`` in a failed evaluation of a shown row raised AttributeError."""
    base_file, cand_file = _files(tmp_path, [True] * 8, [False] * 8)
    line = _line(cand_file, _eval_line_numbers(cand_file)[0])
    line = line.replace(b'"status": "success"', b'"status": "error"')
    line = line.replace(b'"error": null', b'"error": 5')
    with cand_file.open("ab") as handle:  # another evaluator, failed on the shown row r0
        handle.write(line.replace(b'"evaluator": "exact_match"', b'"evaluator": "judge"'))
    result = compare(base_file, cand_file)
    assert result.key("exact_match").verdict == "regressed"
    assert result.changed[0].id == "r0"
    assert main(["compare", str(base_file), str(cand_file)]) == 0


def test_any_other_error_in_the_cli_is_exit_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error no check foresaw exits 2 (1 is the gate's code) with its type and first line."""
    import openevals.comparison.paired as paired

    def broken(*_: object, **__: object) -> None:
        raise ArithmeticError("first line\nsecond line")

    monkeypatch.setattr(paired, "compare", broken)
    base_file, cand_file = _files(tmp_path, [True] * 3, [True] * 3)
    err = _cli_error(capsys, str(base_file), str(cand_file))
    assert err == "error: ArithmeticError: first line\n"
