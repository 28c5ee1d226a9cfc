"""Code extraction: markdown blocks, output shapes, the LLM strategy, option validation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from openevals._judge.core import RetryPolicy
from openevals.code.base import _create_async_base_code_evaluator, _create_base_code_evaluator
from openevals.code.extraction import (
    SKIPPED_LANGUAGES,
    CodeExtraction,
    Extraction,
    extract_code_from_markdown,
    iter_code_blocks,
    outputs_to_text,
)
from openevals.llm import JudgeOutputError
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

# --------------------------------------------------------------------------- markdown


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```python\nx = 1\n```", "x = 1\n"),
        ("Here:\n```\nx = 1\n```\nDone.", "x = 1\n"),
        ("~~~python\nx = 1\n~~~", "x = 1\n"),
        # indented fence (inside a list item): the indentation is removed from the body
        (
            "1. Do this:\n   ```python\n   def f():\n       return 1\n   ```\n",
            "def f():\n    return 1\n",
        ),
        # info string with a title, and a language with a dash
        ('```python title="main.py"\nprint(1)\n```', "print(1)\n"),
        ("```objective-c\nint x = 1;\n```", "int x = 1;\n"),
        ("```{.python .numberLines}\nx = 2\n```", "x = 2\n"),
        # closing fence glued to the last code line (no newline before it)
        ("```python\nprint('hi')```", "print('hi')\n"),
        ("```python\na = 1\nb = 2```\ntext", "a = 1\nb = 2\n"),
        # a longer fence can contain a shorter one
        ("````markdown\n```python\nx\n```\n````", "```python\nx\n```\n"),
        # unclosed block runs to the end
        ("```python\nx = 1\ny = 2", "x = 1\ny = 2\n"),
        # CRLF line endings
        ("```python\r\nx = 1\r\n```\r\n", "x = 1\n"),
        # each block ends with its newline and blocks are joined with one (0.2.2's output); shell/json blocks are skipped (any case)
        (
            "```python\na = 1\n```\n```bash\npip install x\n```\n```JSON\n{}\n```\n```py\nb = 2\n```",
            "a = 1\n\nb = 2\n",
        ),
    ],
)
def test_markdown_extraction_edge_cases(text: str, expected: str) -> None:
    assert extract_code_from_markdown(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "no code here",
        "inline ```x = 1``` is not a block",
        "```bash\nls -la\n```",
        "```Shell\nls\n```\n```console\n$ ls\n```\n```zsh\nls\n```\n```fish\nls\n```",
        "```terminal\nls\n```\n```sh\nls\n```",
        "```python\n\n```",
    ],
)
def test_markdown_extraction_finds_nothing(text: str) -> None:
    assert extract_code_from_markdown(text) is None


def test_code_blocks_report_language_and_info() -> None:
    blocks = list(iter_code_blocks('```Python title="a.py"\nx\n```\n~~~\ny\n~~~'))
    assert [(b.language, b.info, b.code) for b in blocks] == [
        ("python", 'Python title="a.py"', "x"),
        ("", "", "y"),
    ]


_line = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="`~"
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(_line, min_size=1, max_size=8),
    indent=st.sampled_from(["", "  ", "    ", "\t"]),
    fence=st.sampled_from(["```", "~~~", "````"]),
    language=st.sampled_from(["", "python", "py", "Bash", "json", "objective-c", "c++"]),
    prose=st.lists(st.text(alphabet="abc .:\n", max_size=20), min_size=2, max_size=2),
)
def test_markdown_round_trip(
    body: list[str], indent: str, fence: str, language: str, prose: list[str]
) -> None:
    fenced = "\n".join(
        [f"{indent}{fence}{language}", *(f"{indent}{line}" for line in body), f"{indent}{fence}"]
    )
    text = f"{prose[0]}\n{fenced}\n{prose[1]}"
    expected = "\n".join(body) + "\n"
    result = extract_code_from_markdown(text)
    if language.lower() in SKIPPED_LANGUAGES or not expected.strip():
        assert result is None
    else:
        assert result == expected


# --------------------------------------------------------------------------- outputs shapes


def test_outputs_shapes() -> None:
    assert outputs_to_text("x = 1") == "x = 1"
    assert outputs_to_text({"role": "assistant", "content": "x = 1"}) == "x = 1"
    assert (
        outputs_to_text({"content": [{"type": "text", "text": "a"}, {"type": "image_url"}]}) == "a"
    )
    assert outputs_to_text(AIMessage(content="x = 2")) == "x = 2"
    messages = {
        "messages": [
            {"role": "user", "content": "write code"},
            {"role": "assistant", "content": "x = 3"},
            {"role": "tool", "content": "done", "tool_call_id": "1"},
        ]
    }
    assert outputs_to_text(messages) == "x = 3"
    assert outputs_to_text({"messages": [HumanMessage(content="only the user")]}) == "only the user"


@pytest.mark.parametrize(
    ("bad", "error", "words"),
    [
        (None, TypeError, "`outputs` must be a string"),
        (42, TypeError, "got int"),
        ({"text": "x"}, ValueError, "without 'content' or 'messages'"),
        ({"messages": []}, ValueError, "no message"),
    ],
)
def test_outputs_bad_shapes(bad: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        outputs_to_text(bad)


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"strategy": 3}, TypeError, "must be one of"),
        ({"strategy": "llm"}, ValueError, "needs a model"),
        (
            {"strategy": "markdown_code_blocks", "code_extractor": lambda o: o},
            ValueError,
            "code_extractor",
        ),
        ({"code_extractor": "not callable"}, TypeError, "code_extractor"),
        ({"strategy": "llm", "model": ""}, ValueError, "model"),
        ({"strategy": "llm", "client": object()}, TypeError, "LangChain chat model"),
    ],
)
def test_extraction_options_are_validated(
    options: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        CodeExtraction(**options)


def test_openai_client_needs_a_model_name(fake_openai: FakeOpenAIServer) -> None:
    with pytest.raises(ValueError, match="needs `model`"):
        CodeExtraction(strategy="llm", client=openai_client(fake_openai))


# --------------------------------------------------------------------------- base evaluator


def _echo_scorer(**kwargs: Any) -> tuple[bool, str]:
    return True, json.dumps(kwargs, sort_keys=True, default=str)


def test_base_evaluator_passes_code_and_context_to_scorer() -> None:
    evaluator = _create_base_code_evaluator(
        scorer=_echo_scorer,
        code_extraction_strategy="markdown_code_blocks",
        run_name="echo",
        feedback_key="echo_key",
    )
    result = evaluator(
        inputs={"q": 1}, outputs="Sure:\n```python\nx = 1\n```", reference_outputs="r", extra=5
    )
    assert result == {
        "key": "echo_key",
        "score": True,
        "comment": json.dumps(
            {"extra": 5, "inputs": {"q": 1}, "outputs": "x = 1\n", "reference_outputs": "r"},
            sort_keys=True,
        ),
        "metadata": None,
    }


def test_extraction_failure_shape_and_scorer_not_called() -> None:
    calls: list[Any] = []
    evaluator = _create_base_code_evaluator(
        scorer=lambda **kw: calls.append(kw) or True,
        code_extraction_strategy="markdown_code_blocks",
        run_name="x",
        feedback_key="k",
    )
    assert evaluator(outputs="no code at all") == {
        "key": "k",
        "score": False,
        "comment": None,
        "metadata": {"code_extraction_failed": True},
    }
    assert calls == []


def test_custom_code_extractor_gets_raw_outputs() -> None:
    seen: list[Any] = []

    def extractor(outputs: Any) -> str | None:
        seen.append(outputs)
        return outputs.get("code")

    evaluator = _create_base_code_evaluator(
        scorer=lambda *, outputs, **_: (True, outputs),
        code_extractor=extractor,
        run_name="x",
        feedback_key="k",
    )
    assert evaluator(outputs={"code": "x = 1"})["comment"] == "x = 1"
    assert seen == [{"code": "x = 1"}]
    # None means "no code": the extraction-failure result
    assert evaluator(outputs={})["metadata"] == {"code_extraction_failed": True}
    bad = _create_base_code_evaluator(
        scorer=lambda **_: True, code_extractor=lambda o: 42, run_name="x", feedback_key="k"
    )
    with pytest.raises(TypeError, match="must return the code as a string"):
        bad(outputs="x")


def test_sync_evaluator_rejects_async_extractor() -> None:
    async def extractor(outputs: Any) -> str:
        return "x"

    evaluator = _create_base_code_evaluator(
        scorer=lambda **_: True, code_extractor=extractor, run_name="x", feedback_key="k"
    )
    with pytest.raises(TypeError, match="async"):
        evaluator(outputs="x")


async def test_async_base_awaits_extractor_and_scorer() -> None:
    async def extractor(outputs: Any) -> str:
        return outputs.upper()

    async def scorer(*, outputs: str, **_: Any) -> tuple[bool, str]:
        return True, outputs

    evaluator = _create_async_base_code_evaluator(
        scorer=scorer, code_extractor=extractor, run_name="x", feedback_key="k"
    )
    result = await evaluator(outputs="abc")
    assert result == {"key": "k", "score": True, "comment": "ABC", "metadata": None}


async def test_async_base_with_sync_scorer_and_failure() -> None:
    evaluator = _create_async_base_code_evaluator(
        scorer=lambda *, outputs, **_: (True, outputs),
        code_extraction_strategy="markdown_code_blocks",
        run_name="x",
        feedback_key="k",
    )
    assert (await evaluator(outputs="```\ny\n```"))["comment"] == "y\n"
    assert (await evaluator(outputs="nothing"))["metadata"] == {"code_extraction_failed": True}


def test_inputs_are_not_mutated() -> None:
    outputs = {
        "messages": [HumanMessage(content="q"), {"role": "assistant", "content": "```\nz\n```"}]
    }
    inputs = {"nested": {"a": [1, 2]}}
    before = (copy.deepcopy(outputs), copy.deepcopy(inputs))
    evaluator = _create_base_code_evaluator(
        scorer=lambda *, outputs, **_: (True, outputs),
        code_extraction_strategy="markdown_code_blocks",
        run_name="x",
        feedback_key="k",
    )
    assert evaluator(outputs=outputs, inputs=inputs)["comment"] == "z\n"
    assert (outputs, inputs) == before


def test_public_names_of_base_module() -> None:
    from openevals.code import base
    from openevals.prompts.code import LLM_EXTRACTION_SYSTEM_PROMPT

    assert base.LLM_EXTRACTION_SYSTEM_PROMPT == LLM_EXTRACTION_SYSTEM_PROMPT
    assert "{outputs}" in base.LLM_EXTRACTION_USER_PROMPT
    assert base._extract_code_from_markdown_code_blocks("```\nq\n```") == "q\n"
    assert set(base.ExtractCode.__annotations__) == {"code"}
    assert set(base.NoCode.__annotations__) == {"no_code"}
    with pytest.raises(AttributeError):
        _ = base.NOT_A_NAME  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- LLM strategy


def _code_reply(code: str) -> dict[str, Any]:
    return {"json": {"code": code}}


def _llm_evaluator(**options: Any) -> Any:
    return _create_base_code_evaluator(
        scorer=lambda *, outputs, **_: (True, outputs),
        code_extraction_strategy="llm",
        run_name="x",
        feedback_key="k",
        **options,
    )


def _schema_of(body: dict[str, Any]) -> Any:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["schema"]
    return body["tools"][0]["function"]["parameters"]


def test_llm_strategy_with_langchain_model(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(**_code_reply("def f() -> int:\n    return 1"))
    evaluator = _llm_evaluator(client=chat_model(fake_openai))
    result = evaluator(outputs="Here you go: def f() -> int: return 1 (trust me)")
    assert result["score"] is True
    assert result["comment"] == "def f() -> int:\n    return 1"
    body = fake_openai.last_chat_body
    # One structured question through the judge pipeline: a `{code}` answer.
    assert _schema_of(body)["required"] == ["code"]
    assert body["messages"][0]["role"] == "system"
    assert "Here you go" in body["messages"][1]["content"]


def test_llm_strategy_no_code_and_unusable_reply(fake_openai: FakeOpenAIServer) -> None:
    evaluator = _llm_evaluator(client=openai_client(fake_openai), model="gpt-test")
    fake_openai.queue_chat(**_code_reply(""))
    assert evaluator(outputs="just prose") == {
        "key": "k",
        "score": False,
        "comment": None,
        "metadata": {"code_extraction_failed": True},
    }
    # whitespace only is no code either
    fake_openai.queue_chat(**_code_reply("   "))
    assert evaluator(outputs="x")["metadata"]["code_extraction_failed"] is True
    # a reply that is no `{code}` answer gets the judge's repair request, then raises: an
    # extraction model that fails is an error, never a made-up "no code"
    fake_openai.set_default_chat("I refuse to answer in JSON")
    with pytest.raises(JudgeOutputError, match="did not match the expected format"):
        evaluator(outputs="x")
    assert "cannot be used" in fake_openai.last_chat_body["messages"][-1]["content"]


def test_llm_strategy_with_openai_client(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(**_code_reply("x = 1"))
    evaluator = _llm_evaluator(client=openai_client(fake_openai), model="openai:gpt-test")
    assert evaluator(outputs="x = 1 is the code")["comment"] == "x = 1"
    body = fake_openai.last_chat_body
    assert body["model"] == "gpt-test"
    assert body["response_format"]["type"] == "json_schema"


def test_sync_evaluator_rejects_async_openai_client(fake_openai: FakeOpenAIServer) -> None:
    evaluator = _llm_evaluator(client=async_openai_client(fake_openai), model="gpt-test")
    with pytest.raises(TypeError, match="async OpenAI client"):
        evaluator(outputs="x")


async def test_llm_strategy_async_paths(fake_openai: FakeOpenAIServer) -> None:
    for client, model in (
        (chat_model(fake_openai), None),
        (async_openai_client(fake_openai), "gpt-test"),
        (openai_client(fake_openai), "gpt-test"),
    ):
        fake_openai.queue_chat(**_code_reply("y = 2"))
        evaluator = _create_async_base_code_evaluator(
            scorer=lambda *, outputs, **_: (True, outputs),
            code_extraction_strategy="llm",
            client=client,
            model=model,
            run_name="x",
            feedback_key="k",
        )
        assert (await evaluator(outputs="y = 2 please"))["comment"] == "y = 2"
    fake_openai.queue_chat(**_code_reply(""))
    result = await evaluator(outputs="x")
    assert result["metadata"] == {"code_extraction_failed": True}


@pytest.mark.usefixtures("openai_env")
def test_llm_strategy_resolves_model_string(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(**_code_reply("z = 3"))
    evaluator = _llm_evaluator(model="openai:gpt-test-mini")
    assert evaluator(outputs="z = 3")["comment"] == "z = 3"
    assert fake_openai.last_chat_body["model"] == "gpt-test-mini"


def test_model_errors_propagate(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.queue_chat(status=401, body={"error": {"message": "bad key"}})
    evaluator = _llm_evaluator(client=chat_model(fake_openai))
    with pytest.raises(Exception, match="bad key"):
        evaluator(outputs="x")


@pytest.mark.parametrize("use_async", [False, True])
def test_extraction_gets_the_judges_retries(fake_openai: FakeOpenAIServer, use_async: bool) -> None:
    """A rate limit and a malformed body are retried by the judge pipeline, then answered."""
    import asyncio

    fake_openai.queue_chat(status=429, headers={"retry-after-ms": "1"})
    fake_openai.queue_malformed("empty_choices")
    fake_openai.queue_chat(**_code_reply("w = 4"))
    factory: Any = _create_async_base_code_evaluator if use_async else _create_base_code_evaluator
    client = (async_openai_client if use_async else openai_client)(fake_openai)
    evaluator = factory(
        scorer=lambda *, outputs, **_: (True, outputs),
        code_extraction_strategy="llm",
        client=client,
        model="gpt-test",
        run_name="x",
        feedback_key="k",
    )
    out = evaluator(outputs="w = 4")
    result = asyncio.run(out) if asyncio.iscoroutine(out) else out
    assert result["comment"] == "w = 4"
    assert len(fake_openai.chat_requests) == 3


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize("use_async", [False, True])
def test_extraction_timeout_on_a_hung_server(
    fake_openai: FakeOpenAIServer, use_async: bool
) -> None:
    import asyncio
    import time

    from openevals.code.llm import create_async_code_llm_as_judge, create_code_llm_as_judge
    from openevals.llm import JudgeTimeoutError

    fake_openai.set_default_chat(hang=True)
    factory: Any = create_async_code_llm_as_judge if use_async else create_code_llm_as_judge
    judge = factory(
        prompt="Grade {outputs}",
        model="openai:gpt-test",
        code_extraction_strategy="llm",
        timeout=0.3,
        max_retries=0,
    )
    # The extraction asks first; with the judge's default retries it would try 4 times.
    judge.extraction._judge.retry = RetryPolicy(max_retries=0)
    started = time.monotonic()
    with pytest.raises(JudgeTimeoutError) as info:
        out = judge(outputs="print(1)")
        if asyncio.iscoroutine(out):
            asyncio.run(out)
    assert time.monotonic() - started < 2
    assert info.value.timeout == 0.3
    assert len(fake_openai.chat_requests) == 1  # the extraction's request, which hung


def test_tool_call_readers_kept_for_importers() -> None:
    from openevals.code.extraction import extraction_tools, read_langchain_reply

    assert [t["function"]["name"] for t in extraction_tools()] == ["ExtractCode", "NoCode"]
    several = AIMessage(
        content="",
        tool_calls=[
            {"name": "ExtractCode", "args": {"code": "a = 1"}, "id": "1"},
            {"name": "ExtractCode", "args": {"code": "b = 2"}, "id": "2"},
        ],
    )
    assert read_langchain_reply(several) == Extraction("a = 1\nb = 2")
    bad_args = AIMessage(
        content="", tool_calls=[{"name": "ExtractCode", "args": {"source": "x"}, "id": "1"}]
    )
    assert read_langchain_reply(bad_args).code is None


# --------------------------------------------------------------------------- 0.2.2 leniency


@pytest.mark.parametrize("strategy", ["all", "regex", "Markdown_Code_Blocks", ""])
def test_unknown_strategy_is_none_with_a_deprecation_warning(strategy: str) -> None:
    with pytest.warns(DeprecationWarning, match="'markdown_code_blocks'") as caught:
        extraction = CodeExtraction(strategy=strategy)
    assert extraction.strategy == "none"
    # The warning points at the caller (this file), not into the package.
    assert caught[0].filename == __file__
    assert extraction.extract("```python\nx = 1\n```").code == "```python\nx = 1\n```"


def test_known_strategies_do_not_warn() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for strategy in ("none", "markdown_code_blocks"):
            assert CodeExtraction(strategy=strategy).strategy == strategy


def test_markdown_blocks_keep_their_newline_and_are_separated_by_a_blank_line() -> None:
    # 0.2.2 returns every block body with its final newline, joined with "\n".
    text = "Intro\n```python\nimport os\n```\nthen\n```bash\nls\n```\n```\nx = os.sep\n```\n"
    assert extract_code_from_markdown(text) == "import os\n\nx = os.sep\n"


async def test_extract_and_aextract_called_directly() -> None:
    async def async_extractor(outputs: Any) -> str | None:
        return outputs.get("code")

    text = "Here:\n```python\nx = 1\n```"
    markdown = CodeExtraction(strategy="markdown_code_blocks")
    assert markdown.extract(text) == await markdown.aextract(text) == Extraction("x = 1\n")
    assert await markdown.aextract("no code") == Extraction.failed()
    own = CodeExtraction(code_extractor=async_extractor)
    assert await own.aextract({"code": "y = 2"}) == Extraction("y = 2")
    assert await own.aextract({}) == Extraction.failed()
    with pytest.raises(TypeError, match="returned an awaitable"):
        own.extract({"code": "y = 2"})
    llm = CodeExtraction(strategy="llm", model="openai:gpt-x")
    with pytest.raises(ValueError, match=r"outputs\[3\]"):  # refused before any model call
        await llm.aextract("x = '\ud800'", parameter="outputs[3]")
