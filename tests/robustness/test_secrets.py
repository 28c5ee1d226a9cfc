"""Secrets never reach a sink of a batch run.

A secret is planted (through the environment, like ``OPENAI_API_KEY``) in every place a run takes
text from - evaluator errors (sync, async, inline), comments, feedback keys, nested metadata and its
keys, inputs, outputs, references, extra columns, group values, target outputs and errors,
batch-metric values and errors, and records read back on resume - and every sink is searched for
it: the result rows, ``to_jsonl()`` (string and file), the ``output=`` file, the HTML report, the
summary, ``to_dict()``, ``repr``, progress snapshots, the rich progress display, the printed
summary, the CLI's output and files, and log records. Redaction must not touch ordinary data.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals.cli import main
from openevals.data.encoding import encode
from openevals.data.row_ids import ID_RULE, row_fingerprint
from openevals.evaluation import BatchMetrics, EvaluatorSpec, aevaluate, evaluate
from openevals.evaluation.evaluators import prepare_evaluators
from openevals.evaluation.redact import REDACTED, Redactor, is_secret_name
from openevals.exact import exact_match
from openevals.report.html import render_report
from openevals.report.progress import RichProgress, print_summary

SECRET = "sk-proj-PLANTED0123456789abcdef"
OTHER = "hf_planted_token_987654321"


@pytest.fixture(autouse=True)
def secrets_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HF_TOKEN", OTHER)


# --------------------------------------------------------------------------- the run

PLACES = (
    "sync_error",
    "async_error",
    "inline_error",
    "comment",
    "feedback_key",
    "nested_metadata",
    "metadata_key",
    "inputs",
    "outputs",
    "reference_outputs",
    "extra_column",
    "group_value",
    "target_output",
    "target_error",
    "batch_metric_value",
    "batch_metric_error",
    "accumulate_error",
)


def _run_with_secret_in(place: str, tmp_path: Path, sinks: dict[str, str]) -> Any:
    """Run with the secret planted in ``place``; fill ``sinks`` with every text the run made."""
    rows: list[dict[str, Any]] = [
        {"id": f"r{i}", "inputs": {"q": f"q{i}"}, "outputs": "a", "reference_outputs": "a"}
        for i in range(4)
    ]
    for row in rows:
        row["topic"] = "t"
    if place in ("inputs", "outputs", "reference_outputs"):
        rows[1][place] = {"deep": [{"text": f"key is {SECRET}"}]}
    if place == "extra_column":
        rows[1]["context"] = f"see {SECRET}"
    if place == "group_value":
        rows[2]["topic"] = f"group-{SECRET}"

    def judge(**kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = {"key": "judged", "score": 1.0, "comment": "fine"}
        if place == "sync_error":
            raise RuntimeError(f"401 Unauthorized: incorrect API key {SECRET}")
        if place == "comment":
            result["comment"] = f"the key {SECRET} was used"
        if place == "feedback_key":
            result["key"] = f"judged-{SECRET}"
        if place == "nested_metadata":
            result["metadata"] = {"request": {"headers": [("x-api-key", SECRET)]}}
        if place == "metadata_key":
            result["metadata"] = {SECRET: 1}
        return result

    async def async_judge(**kwargs: Any) -> bool:
        if place == "async_error":
            raise ValueError(f"bad credentials {OTHER}")
        return True

    def inline(**kwargs: Any) -> bool:
        if place == "inline_error":
            raise KeyError(SECRET)
        return True

    def target(inputs: dict[str, Any]) -> Any:
        if place == "target_error" and inputs["q"] == "q1":
            raise ConnectionError(f"proxy refused Bearer {SECRET}")
        if place == "target_output":
            return f"answer with {SECRET}"
        return "a"

    def metric(batch: dict[str, list[Any]]) -> dict[str, Any]:
        if place == "batch_metric_error":
            raise RuntimeError(f"metric failed: {SECRET}")
        value: Any = len(batch["id"])
        return {"seen": {"value": value, "note": SECRET if place == "batch_metric_value" else ""}}

    def accumulate(per_batch: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        if place == "accumulate_error":
            raise RuntimeError(f"cannot combine {OTHER}")
        return {name: values[-1] for name, values in per_batch.items()}

    snapshots: list[dict[str, Any]] = []
    console = io.StringIO()
    from rich.console import Console

    out = tmp_path / "out.jsonl"
    evaluators = {
        "judge": judge,
        "async_judge": async_judge,
        "inline": EvaluatorSpec(inline, inline=True),
        "exact": exact_match,
    }
    common: dict[str, Any] = {
        "target": target if place.startswith("target") else None,
        "group_by": "topic",
        "batch_metrics": BatchMetrics([metric], accumulate=accumulate, batch_size=2),
        "output": out,
    }
    result = evaluate(rows, evaluators, progress=snapshots.append, **common)
    rich_out = io.StringIO()
    evaluate(
        rows,
        evaluators,
        progress=RichProgress(console=Console(file=rich_out, width=200, force_terminal=False)),
        **{**common, "output": tmp_path / "second.jsonl"},
    )
    print_summary(result, console=Console(file=console, width=200))
    result.to_jsonl(tmp_path / "rows.jsonl")
    sinks.update(
        {
            "rows": encode(result.rows),
            "to_jsonl": result.to_jsonl() or "",
            "to_jsonl_file": (tmp_path / "rows.jsonl").read_text(encoding="utf-8"),
            "output_file": out.read_text(encoding="utf-8"),
            "report": render_report(result),
            "report_file": result.report_html(tmp_path / "r.html").read_text(encoding="utf-8"),
            "summary": encode(result.summary),
            "aggregates": encode([result.aggregates, result.by_group, result.histograms]),
            "batch_metrics": encode(result.batch_metrics),
            "to_dict": encode(result.to_dict()),
            "repr": repr(result),
            "progress_snapshots": encode(snapshots),
            "rich_progress": rich_out.getvalue(),
            "printed_summary": console.getvalue(),
        }
    )
    return result


@pytest.mark.parametrize("place", PLACES)
def test_no_sink_shows_a_planted_secret(
    place: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sinks: dict[str, str] = {}
    with caplog.at_level(logging.DEBUG):
        _run_with_secret_in(place, tmp_path, sinks)
    sinks["logs"] = "\n".join(r.getMessage() for r in caplog.records)
    assert len(sinks) == 15
    leaks = [name for name, text in sinks.items() if SECRET in text or OTHER in text]
    assert leaks == [], f"secret from {place} leaked into {leaks}"
    assert any(REDACTED in text for text in sinks.values()), "the secret was not where planted"


async def test_aevaluate_redacts_too() -> None:
    async def judge(**kwargs: Any) -> dict[str, Any]:
        return {"key": "k", "score": 0, "comment": SECRET}

    result = await aevaluate([{"outputs": 1}], [judge], progress=False)
    assert SECRET not in (result.to_jsonl() or "") and REDACTED in (result.to_jsonl() or "")


def test_resumed_records_are_redacted(tmp_path: Path) -> None:
    """A file written before the secret was known (or by hand) is cleaned when read back."""
    out = tmp_path / "out.jsonl"
    rows = [{"id": "r0", "outputs": "a", "reference_outputs": "a"}]
    line = {
        "kind": "eval",
        "row_id": "r0",
        "index": 0,
        "evaluator": "judge",
        "status": "error",
        "results": [],
        "error": {"type": "AuthError", "message": f"key {SECRET}"},
        # What a resume checks the pair against (the row's content, the evaluator).
        "evaluator_fp": prepare_evaluators({"judge": exact_match})[0].fingerprint,
        "row_fp": row_fingerprint({"outputs": "a", "reference_outputs": "a"}),
    }
    run = {"kind": "run", "row_id": "", "row_ids": ID_RULE}
    out.write_text(json.dumps(run) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    result = evaluate(rows, {"judge": exact_match}, output=out, progress=False)
    assert result.rows[0]["evaluations"]["judge"]["resumed"] is True
    assert SECRET not in (result.to_jsonl() or "") and SECRET not in render_report(result)
    assert SECRET not in repr(result.rows)


def test_the_cli_shows_no_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    rows = [
        {"id": f"r{i}", "inputs": {"q": i}, "outputs": SECRET, "reference_outputs": "x"}
        for i in range(3)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    target = tmp_path / "target.py"
    target.write_text(
        "import os\n"
        "def run(inputs):\n"
        "    if inputs['q'] == 1:\n"
        "        raise RuntimeError('rejected key ' + os.environ['OPENAI_API_KEY'])\n"
        "    return os.environ['HF_TOKEN']\n",
        "utf-8",
    )
    output, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    argv = ["run", str(data), "-e", "exact_match", "--target", f"{target}:run"]
    argv += ["--output", str(output), "--report", str(report), "--no-progress"]
    main(argv)
    captured = capsys.readouterr()
    texts = {
        "stdout": captured.out,
        "stderr": captured.err,
        "output": output.read_text("utf-8"),
        "report": report.read_text("utf-8"),
    }
    assert "TargetError" in captured.err, "the failure is reported (without the key)"
    assert [name for name, text in texts.items() if SECRET in text or OTHER in text] == []


# --------------------------------------------------------------------------- which names, which data

SECRET_NAMES = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "LANGSMITH_API_KEY",
    "E2B_API_KEY",
    "HF_TOKEN",
    "GITHUB_TOKEN",
    "SLACK_BOT_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "DB_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "CLIENT_SECRET",
    "GOOGLE_APPLICATION_CREDENTIALS_JSON",
    "MY_APIKEY",
    "openai_api_key",
    "AUTH",
    "BASIC_AUTH",
    "GPG_PASSPHRASE",
]
ORDINARY_NAMES = [
    "TOKENIZERS_PARALLELISM",
    "AUTHOR",
    "SSH_AUTH_SOCK",
    "XAUTHORITY",
    "KEYBOARD_LAYOUT",
    "PWD",
    "OLDPWD",
    "PATH",
    "HOME",
    "PYTHON_KEYRING_BACKEND",
    "SECRETS_DIR",
    "API_KEY_FILE",
    "TOKEN_URL",
    "LANG",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_names_that_hold_secrets(name: str) -> None:
    assert is_secret_name(name)
    redactor = Redactor({name: "value-of-the-secret"})
    assert redactor.data({"a": ["x value-of-the-secret y"]}) == {"a": [f"x {REDACTED} y"]}


@pytest.mark.parametrize("name", ORDINARY_NAMES)
def test_ordinary_variables_do_not_corrupt_data(name: str) -> None:
    assert not is_secret_name(name)
    value = "/home/jane/project-folder"
    data = {"path": value, "author": value}
    assert Redactor({name: value}).data(data) is data


def test_short_values_and_whitespace() -> None:
    redactor = Redactor({"DB_PASSWORD": "short", "API_KEY": "long-enough-key\n"})
    assert redactor.secrets == ["long-enough-key\n", "long-enough-key"]
    assert redactor.data("short and long-enough-key") == f"short and {REDACTED}"


def test_error_text_patterns_without_environment_secrets() -> None:
    redactor = Redactor({})
    text = redactor.text(
        "Authorization: Bearer abcdef123456 api_key=zzzz9999 sk-abcdefghijklmnop rest"
    )
    assert "abcdef123456" not in text and "zzzz9999" not in text
    assert "abcdefghijklmnop" not in text and text.endswith("rest")
    # Patterns apply to error text only; ordinary data keeps its words.
    assert redactor.data({"note": "api_key=zzzz9999"}) == {"note": "api_key=zzzz9999"}


def test_cycles_depth_and_odd_objects() -> None:
    redactor = Redactor({"API_KEY": SECRET})
    cyclic: dict[str, Any] = {"a": SECRET}
    cyclic["self"] = cyclic
    cleaned = redactor.data(cyclic)
    assert SECRET not in repr(cleaned) and cyclic["a"] == SECRET, "input not mutated"
    clean_cycle: list[Any] = ["fine"]
    clean_cycle.append(clean_cycle)
    assert redactor.data(clean_cycle) is clean_cycle
    deep: Any = SECRET
    for _ in range(3000):
        deep = [deep]
    cleaned_deep = redactor.data(deep)
    assert SECRET not in repr(cleaned_deep) and REDACTED in repr(cleaned_deep)
    ordinary: Any = "fine"
    for _ in range(3000):
        ordinary = [ordinary]
    assert redactor.data(ordinary) is ordinary  # deep but clean data is kept as it is

    class Opaque:
        def __str__(self) -> str:
            return f"<Opaque {SECRET}>"

    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("no text")

    assert redactor.data([Opaque()]) == [f"<Opaque {REDACTED}>"]
    odd = Unprintable()
    assert redactor.data([odd])[0] is odd
    assert redactor.data({"k": (1, 2.5, None, True)}) == {"k": (1, 2.5, None, True)}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=80)
@given(json_values)
def test_data_without_secrets_comes_back_unchanged(value: Any) -> None:
    redactor = Redactor({"API_KEY": SECRET})
    assert redactor.data(value) is value


@settings(max_examples=80)
@given(json_values, st.data())
def test_a_secret_anywhere_is_removed_and_the_input_kept(value: Any, data: st.DataObject) -> None:
    redactor = Redactor({"API_KEY": SECRET})
    planted = data.draw(st.sampled_from(["key", "value", "list"]))
    if planted == "key":
        holder: Any = {f"k{SECRET}": value}
    elif planted == "value":
        holder = {"v": [value, f"x{SECRET}x"]}
    else:
        holder = [value, [SECRET]]
    before = encode(holder)
    cleaned = redactor.data(holder)
    assert SECRET not in encode(cleaned)
    assert encode(holder) == before, "the input was mutated"


@pytest.mark.parametrize("secret", ['pa"ss\\word-12', "pässwörd-ünïcode", "tab\tinside-secret"])
def test_secrets_with_characters_json_escapes(secret: str) -> None:
    redactor = Redactor({"DB_PASSWORD": secret})
    cleaned = redactor.data({"note": f"it is {secret}!", "n": 1.5})
    assert cleaned == {"note": f"it is {REDACTED}!", "n": 1.5}
    line = redactor.json_text(encode({"note": f"x{secret}y"}))
    assert json.loads(line) == {"note": f"x{REDACTED}y"}
