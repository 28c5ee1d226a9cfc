"""mypy and pyright evaluators: real checker runs (few, batched), output parsing, the batch plan."""

from __future__ import annotations

import asyncio
import copy
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.code._typecheck import (
    Diagnostic,
    ProcessResult,
    _scrub,
    check_plan,
    find_executable,
)
from openevals.code.mypy import (
    MypyChecker,
    create_async_mypy_evaluator,
    create_mypy_evaluator,
    parse_mypy_line,
)
from openevals.code.pyright import (
    PyrightChecker,
    create_async_pyright_evaluator,
    create_pyright_evaluator,
    parse_pyright_output,
)
from tests.code.checkers import requires_mypy, requires_pyright

SAMPLES: dict[str, str] = {
    "ok": "def add(a: int, b: int) -> int:\n    return a + b\n",
    "assignment": 'x: int = "a"\n',
    "reveal_note": "x = 1\nreveal_type(x)\n",
    "missing_imports": (
        "import foo_bar_baz_missing\nfrom nothing_here_either import thing\nimport yaml\n"
        "print(thing, foo_bar_baz_missing, yaml)\n"
    ),
    "syntax": "def f(:\n    pass\n",
    "untyped_call": "def g(a, b):\n    return a + b\n\ng(1, 2)\n",
    "class_mismatch": "class Foo: ...\n\nx: int = Foo()\n",
    "syntax_2": "class X(\n",
}
ORDER = list(SAMPLES)
SYNC_SINGLE = ["ok", "assignment"]  # checked with sync per-sample calls; the rest with async ones
# pyright runs cost twice what mypy runs cost: compare its batches with per-sample calls on a subset
PER_SAMPLE = {
    "mypy": [n for n in ORDER if n != "class_mismatch"],
    "pyright": ["ok", "assignment", "missing_imports", "syntax"],
}

# What each checker must say (True = passes); comments are checked more closely below.
EXPECTED = {
    "mypy": {
        "ok": True,
        "assignment": False,
        "reveal_note": True,
        "missing_imports": True,
        "syntax": False,
        "untyped_call": False,
        "class_mismatch": False,
        "syntax_2": False,
    },
    "pyright": {
        "ok": True,
        "assignment": False,
        "reveal_note": True,
        "missing_imports": True,
        "syntax": False,
        "untyped_call": True,
        "class_mismatch": False,
        "syntax_2": False,
    },
}


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("no-exec") / "marker.txt"


@pytest.fixture(scope="module")
def batch_codes(marker: Path) -> list[str]:
    # The last sample would create `marker` if anything executed it.
    side_effect = f"open({str(marker)!r}, 'w').write('ran')\n"
    return [SAMPLES[name] for name in ORDER] + [SAMPLES["assignment"], side_effect]


@pytest.fixture(scope="module")
def runs(batch_codes: list[str]) -> dict[str, dict[str, Any]]:
    """Every real checker run of this module, done once: per-sample, batch, async batch."""
    for marker in (requires_mypy, requires_pyright):
        if marker.args[0]:
            pytest.skip(marker.kwargs["reason"])

    def sync_runs(name: str) -> dict[str, Any]:
        evaluator = create_mypy_evaluator() if name == "mypy" else create_pyright_evaluator()
        single = {n: evaluator(outputs=SAMPLES[n]) for n in SYNC_SINGLE}
        return {"single": single, "batch": evaluator.batch(batch_codes)}

    async def everything() -> dict[str, dict[str, Any]]:
        # All checker processes at once: the sync evaluators run in threads beside the async ones.
        mypy_async = create_async_mypy_evaluator()
        pyright_async = create_async_pyright_evaluator()
        mypy_rest = [n for n in PER_SAMPLE["mypy"] if n not in SYNC_SINGLE]
        pyright_rest = [n for n in PER_SAMPLE["pyright"] if n not in SYNC_SINGLE]
        done = await asyncio.gather(
            asyncio.to_thread(sync_runs, "mypy"),
            asyncio.to_thread(sync_runs, "pyright"),
            mypy_async.abatch(batch_codes),
            pyright_async.abatch(batch_codes),
            *(mypy_async(outputs=SAMPLES[n]) for n in mypy_rest),
            *(pyright_async(outputs=SAMPLES[n]) for n in pyright_rest),
        )
        mypy_sync, pyright_sync, mypy_abatch, pyright_abatch = done[:4]
        singles = done[4:]
        mypy_sync["single"].update(zip(mypy_rest, singles[: len(mypy_rest)], strict=True))
        pyright_sync["single"].update(zip(pyright_rest, singles[len(mypy_rest) :], strict=True))
        return {
            "mypy": {**mypy_sync, "abatch": mypy_abatch},
            "pyright": {**pyright_sync, "abatch": pyright_abatch},
        }

    return asyncio.run(everything())


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_scores(runs: dict[str, dict[str, Any]], checker: str) -> None:
    single = runs[checker]["single"]
    assert {n: r["score"] for n, r in single.items()} == {
        n: EXPECTED[checker][n] for n in PER_SAMPLE[checker]
    }
    batch = runs[checker]["batch"]
    assert [r["score"] for r in batch[: len(ORDER)]] == [EXPECTED[checker][n] for n in ORDER]
    key = f"{checker}_succeeded"
    assert all(r["key"] == key and r["metadata"] is None for r in [*single.values(), *batch])


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_batch_equals_per_sample(runs: dict[str, dict[str, Any]], checker: str) -> None:
    single = runs[checker]["single"]
    names = [*ORDER, "assignment", "ok"]
    for kind in ("batch", "abatch"):
        results = runs[checker][kind]
        assert len(results) == len(names)
        compared = [(r, single[n]) for r, n in zip(results, names, strict=True) if n in single]
        assert len(compared) >= 5
        for got, expected in compared:
            assert got == expected
    assert runs[checker]["abatch"] == runs[checker]["batch"]


def test_no_sample_was_executed(runs: dict[str, dict[str, Any]], marker: Path) -> None:
    assert runs["mypy"]["batch"][-1]["score"] is True
    assert not marker.exists()


def test_success_comments_keep_public_formats(runs: dict[str, dict[str, Any]]) -> None:
    assert runs["mypy"]["single"]["ok"]["comment"] == ""
    assert runs["pyright"]["single"]["ok"]["comment"] == "[]"


def test_mypy_comments(runs: dict[str, dict[str, Any]]) -> None:
    single = runs["mypy"]["single"]
    assert single["assignment"]["comment"] == (
        '1:10: error: Incompatible types in assignment (expression has type "str", variable has '
        'type "int") [assignment]'
    )
    assert single["untyped_call"]["comment"] == (
        '4:1: error: Call to untyped function "g" in typed context [no-untyped-call]'
    )
    assert "[syntax]" in single["syntax"]["comment"]
    assert single["syntax"]["comment"].startswith("1:")


def test_pyright_comments(runs: dict[str, dict[str, Any]]) -> None:
    comment = runs["pyright"]["single"]["assignment"]["comment"]
    assert comment.startswith("1:10: error: ")
    assert comment.endswith(" [reportAssignmentType]")
    assert "\xa0" not in comment
    assert runs["pyright"]["single"]["syntax"]["comment"].startswith("1:")


def test_no_paths_or_sample_names_leak(runs: dict[str, dict[str, Any]]) -> None:
    comments = [
        r["comment"]
        for checker in runs.values()
        for kind in ("batch", "abatch")
        for r in checker[kind]
    ]
    for comment in comments:
        assert "sample_" not in comment
        assert "openevals-typecheck" not in comment
        assert os.sep + "tmp" not in comment
        assert ".py:" not in comment


# --------------------------------------------------------------------------- more real runs


@requires_mypy
def test_custom_mypy_args_replace_defaults_and_imports_still_ignored() -> None:
    evaluator = create_mypy_evaluator(mypy_cli_args=["--no-incremental"])
    results = evaluator.batch([SAMPLES["untyped_call"], SAMPLES["missing_imports"]])
    # no --disallow-untyped-calls; missing imports are ignored without --ignore-missing-imports
    assert [r["score"] for r in results] == [True, True]


@requires_mypy
def test_markdown_strategy_batch_mixes_failures_and_checks() -> None:
    evaluator = create_mypy_evaluator(code_extraction_strategy="markdown_code_blocks")
    outputs = [
        "Here:\n```python\nx: int = 'a'\n```",
        "I cannot write code today.",
        {"role": "assistant", "content": "```python\ny: int = 2\n```"},
    ]
    before = copy.deepcopy(outputs)
    results = evaluator.batch(outputs)
    assert [r["score"] for r in results] == [False, False, True]
    assert results[1] == {
        "key": "mypy_succeeded",
        "score": False,
        "comment": None,
        "metadata": {"code_extraction_failed": True},
    }
    assert results[1] == evaluator(outputs=outputs[1])
    assert outputs == before


@requires_mypy
async def test_unknown_strategy_checks_the_whole_output_like_0_2_2() -> None:
    # 0.2.2 treats an unknown code_extraction_strategy (upstream's tests pass "all") as "none".
    with pytest.warns(DeprecationWarning, match="code_extraction_strategy='all'"):
        evaluator = create_mypy_evaluator(code_extraction_strategy="all")
    with pytest.warns(DeprecationWarning, match="treated as 'none'"):
        async_evaluator = create_async_mypy_evaluator(code_extraction_strategy="all")
    good, bad = "def f(a: int) -> int:\n    return a\n", "x: int = 'a'\n"
    assert [evaluator(outputs=o)["score"] for o in (good, bad)] == [True, False]
    assert [(await async_evaluator(outputs=o))["score"] for o in (good, bad)] == [True, False]
    # The whole output is the code: a markdown answer is not extracted.
    assert evaluator(outputs="```python\nx: int = 1\n```")["score"] is False


@requires_mypy
def test_bad_mypy_arguments_raise() -> None:
    evaluator = create_mypy_evaluator(mypy_cli_args=["--definitely-not-a-flag"])
    with pytest.raises(RuntimeError, match="mypy failed"):
        evaluator(outputs="x = 1\n")


def test_empty_batch_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(sys, "executable", "/nonexistent/bin/python")
    assert create_mypy_evaluator().batch([]) == []
    with pytest.raises(TypeError, match="list of outputs"):
        create_mypy_evaluator().batch("x = 1")  # type: ignore[arg-type]


async def test_empty_abatch_runs_nothing() -> None:
    assert await create_async_pyright_evaluator().abatch([]) == []


@requires_mypy
async def test_async_check_does_not_block_the_loop_and_cancels_cleanly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    processes: list[Any] = []
    spawn = asyncio.create_subprocess_exec

    async def recording_spawn(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        processes.append(process)
        return process

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recording_spawn)
    task = asyncio.create_task(create_async_mypy_evaluator()(outputs="x: int = 1\n"))
    ticks = 0
    while ticks < 10 and not task.done():
        await asyncio.sleep(0.01)
        ticks += 1
    # mypy needs far more than 0.1 s: the loop kept running while the checker worked
    assert ticks == 10
    assert not task.done()
    assert len(processes) == 1
    assert list(tmp_path.glob("openevals-typecheck-*"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await processes[0].wait() != 0  # killed, not left running
    assert not list(tmp_path.glob("openevals-typecheck-*"))


# --------------------------------------------------------------------------- options and errors


@pytest.mark.parametrize(
    ("factory", "options", "error", "words"),
    [
        (create_mypy_evaluator, {"mypy_cli_args": "--strict"}, TypeError, "mypy_cli_args"),
        (create_mypy_evaluator, {"mypy_cli_args": ["--strict", 3]}, TypeError, "only strings"),
        (create_pyright_evaluator, {"pyright_cli_args": None}, TypeError, "pyright_cli_args"),
        (create_mypy_evaluator, {"model": "openai:gpt-4.1"}, ValueError, "only used by"),
        (create_pyright_evaluator, {"client": object()}, ValueError, "only used by"),
        (create_async_mypy_evaluator, {"code_extraction_strategy": "llm"}, ValueError, "model"),
        (
            create_async_pyright_evaluator,
            {"code_extraction_strategy": ["markdown"]},
            TypeError,
            "must be one of",
        ),
        (
            create_pyright_evaluator,
            {"code_extractor": str, "code_extraction_strategy": "llm"},
            ValueError,
            "code_extractor",
        ),
    ],
)
def test_creation_errors(factory: Any, options: dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        factory(**options)


def test_missing_binary_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="pip install mypy"):
        create_mypy_evaluator()(outputs="x = 1\n")
    with pytest.raises(FileNotFoundError, match="pip install pyright"):
        find_executable("pyright")


def test_binary_found_next_to_interpreter_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "mypy"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert find_executable("mypy") == str(fake)


async def test_async_missing_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="pip install pyright"):
        await create_async_pyright_evaluator()(outputs="x = 1\n")


def test_commands() -> None:
    mypy_argv = MypyChecker(["--strict"], parameter="p").command("mypy", ["a.py"])
    assert mypy_argv[:2] == ["mypy", "--strict"]
    assert mypy_argv[-2:] == ["--", "a.py"]
    assert "--show-column-numbers" in mypy_argv
    assert "--python-executable" in mypy_argv
    own = MypyChecker(["--python-executable=/x/python"], parameter="p").command("mypy", ["a.py"])
    assert own.count("--python-executable") == 0
    pyright_argv = PyrightChecker([]).command("pyright", ["a.py", "b.py"])
    assert pyright_argv[:2] == ["pyright", "--outputjson"]
    assert pyright_argv[-2:] == ["a.py", "b.py"]
    assert pyright_argv[pyright_argv.index("--pythonpath") + 1] == sys.executable
    chosen = PyrightChecker(["--venvpath", "/v", "--level", "warning"]).command("pyright", ["a.py"])
    assert "--pythonpath" not in chosen
    assert chosen.count("--level") == 1


# --------------------------------------------------------------------------- parsing (no processes)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'sample_0001.py:3:5: error: Bad thing "x"  [assignment]',
            Diagnostic("sample_0001.py", 3, 5, "error", 'Bad thing "x"', "assignment"),
        ),
        (
            '/tmp/abc/sample_0002.py:7: note: Revealed type is "int"',
            Diagnostic("sample_0002.py", 7, None, "note", 'Revealed type is "int"', None),
        ),
        (
            "sample_0003.py:2:12:2:14: error: With end positions  [misc]",
            Diagnostic("sample_0003.py", 2, 12, "error", "With end positions", "misc"),
        ),
        (
            '{"file": "sample_0004.py", "line": 1, "column": 0, "message": "m", "hint": null, '
            '"code": "import-not-found", "severity": "error"}',
            Diagnostic("sample_0004.py", 1, 1, "error", "m", "import-not-found"),
        ),
        ("Found 1 error in 1 file (checked 1 source file)", None),
        ("Success: no issues found in 1 source file", None),
        (
            'sample_0001.py: note: In function "f":',
            Diagnostic("sample_0001.py", None, None, "note", 'In function "f":', None),
        ),
    ],
)
def test_parse_mypy_line(line: str, expected: Diagnostic | None) -> None:
    assert parse_mypy_line(line) == expected


@settings(max_examples=150, deadline=None)
@given(
    index=st.integers(min_value=1, max_value=9999),
    line=st.integers(min_value=1, max_value=10_000),
    column=st.integers(min_value=1, max_value=500),
    severity=st.sampled_from(["error", "note", "warning"]),
    message=st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1
    ).filter(lambda m: m == m.strip() and "  [" not in m),
    rule=st.one_of(st.none(), st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)),
)
def test_mypy_line_round_trip(
    index: int, line: int, column: int, severity: str, message: str, rule: str | None
) -> None:
    name = f"sample_{index:04d}.py"
    text = f"{name}:{line}:{column}: {severity}: {message}" + (f"  [{rule}]" if rule else "")
    assert parse_mypy_line(text) == Diagnostic(name, line, column, severity, message, rule)


def test_mypy_ignores_notes_and_missing_imports() -> None:
    checker = MypyChecker([], parameter="p")
    diagnostics = [
        Diagnostic("a.py", 1, 1, "error", "Cannot find module", "import-not-found"),
        Diagnostic("a.py", 1, 1, "error", "Library stubs not installed", "import-untyped"),
        Diagnostic("a.py", 2, 1, "note", "Revealed type", "misc"),
    ]
    assert checker.score(diagnostics) == (True, "")
    real = Diagnostic("a.py", 3, 4, "error", "Bad", "misc")
    assert checker.score([*diagnostics, real]) == (False, "3:4: error: Bad [misc]")


def test_parse_pyright_output() -> None:
    report = {
        "generalDiagnostics": [
            {
                "file": "/tmp/x/sample_0001.py",
                "severity": "error",
                "message": "Type mismatch\n\xa0\xa0detail",
                "range": {
                    "start": {"line": 0, "character": 9},
                    "end": {"line": 0, "character": 12},
                },
                "rule": "reportAssignmentType",
            },
            {
                "file": "/tmp/x/sample_0002.py",
                "severity": "error",
                "message": 'Import "zzz" could not be resolved',
                "range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 3}},
                "rule": "reportMissingImports",
            },
            {"file": "C:\\w\\sample_0003.py", "severity": "warning", "message": "w"},
        ]
    }
    import json

    noisy = "Installing pyright...\n" + json.dumps(report)
    diagnostics = parse_pyright_output(noisy)
    assert diagnostics[0] == Diagnostic(
        "sample_0001.py", 1, 10, "error", "Type mismatch\n  detail", "reportAssignmentType"
    )
    assert diagnostics[2].file == "sample_0003.py"
    assert diagnostics[2].line is None
    local, sandboxed = PyrightChecker([]), PyrightChecker([], ignore_missing_imports=False)
    assert local.score(diagnostics[1:]) == (True, "[]")
    assert sandboxed.score(diagnostics[1:]) == (
        False,
        '3:1: error: Import "zzz" could not be resolved [reportMissingImports]',
    )
    with pytest.raises(ValueError, match="did not print a JSON report"):
        parse_pyright_output("node: command not found")
    with pytest.raises(ValueError, match="generalDiagnostics"):
        parse_pyright_output("{}")


def test_pyright_fatal_exit_raises() -> None:
    checker = PyrightChecker([])
    with pytest.raises(RuntimeError, match="exit status 4"):
        checker.read(ProcessResult(4, "", "Unexpected option"), ["sample_0001.py"])
    with pytest.raises(RuntimeError, match="JSON"):
        checker.read(ProcessResult(1, "not json", ""), ["sample_0001.py"])


def test_scrub_removes_workdir_and_sample_name() -> None:
    diagnostic = Diagnostic(
        "sample_0007.py", 1, 1, "error", 'Module "sample_0007" in /w/d/sample_0007.py', None
    )
    assert _scrub(diagnostic, "/w/d").message == 'Module "outputs" in outputs.py'


def _drive(plan: Any, replies: list[ProcessResult]) -> tuple[list[Any], Any]:
    """Run a check plan with scripted process results; returns (invocations, scores)."""
    invocations = [next(plan)]
    try:
        for reply in replies:
            invocations.append(plan.send(reply))
    except StopIteration as stop:
        return invocations, stop.value
    raise AssertionError("the plan asked for more runs than scripted")


def test_plan_reruns_files_after_mypy_stops_at_a_syntax_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Scripted checker output names the files, so pin the per-run random token to "".
    monkeypatch.setattr("openevals.code._typecheck.secrets.token_hex", lambda n: "")
    checker = MypyChecker([], parameter="p")
    plan = check_plan(checker, ["a = 1", "def f(:", "b: int = ''", "class X("])
    invocations, scores = _drive(
        plan,
        [
            ProcessResult(2, "sample_0002.py:1:7: error: invalid syntax  [syntax]\n", ""),
            ProcessResult(2, "sample_0004.py:1:9: error: unexpected EOF  [syntax]\n", ""),
            ProcessResult(1, "sample_0003.py:1:10: error: Incompatible  [assignment]\n", ""),
        ],
    )
    files = [[a for a in inv.argv if a.startswith("sample_")] for inv in invocations]
    assert files == [
        ["sample_0001.py", "sample_0002.py", "sample_0003.py", "sample_0004.py"],
        ["sample_0001.py", "sample_0003.py", "sample_0004.py"],
        ["sample_0001.py", "sample_0003.py"],
    ]
    assert scores == [
        (True, ""),
        (False, "1:7: error: invalid syntax [syntax]"),
        (False, "1:10: error: Incompatible [assignment]"),
        (False, "1:9: error: unexpected EOF [syntax]"),
    ]
    assert not Path(invocations[0].cwd).exists()  # the temporary directory is gone


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (ProcessResult(2, "", "mypy: error: unrecognized arguments: --x"), "exit status 2"),
        (ProcessResult(1, "garbage", ""), "printed no error"),
        (ProcessResult(3, "", "crash"), "exit status 3"),
    ],
)
def test_plan_raises_on_checker_failures(reply: ProcessResult, words: str) -> None:
    plan = check_plan(MypyChecker([], parameter="p"), ["a = 1"])
    invocation = next(plan)
    with pytest.raises(RuntimeError, match=words):
        plan.send(reply)
    assert not Path(invocation.cwd).exists()


def test_batch_samples_cannot_import_each_other() -> None:
    """A sample naming another sample's module must not see it (per-sample checks cannot)."""
    from openevals.code.mypy import create_mypy_evaluator

    samples = ["import sample_0002\nsample_0002.f(1)\n", "def f(x: str) -> None: ...\n"]
    evaluator = create_mypy_evaluator()
    batch = evaluator.batch(samples)
    single = [evaluator(outputs=code) for code in samples]
    assert [r["score"] for r in batch] == [r["score"] for r in single] == [True, True]
