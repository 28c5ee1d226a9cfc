"""Robustness of the LLM judge: hostile answers, broken servers, stale caches and unsendable text.

Each class of fault runs through every judge path it can reach (OpenAI client and ChatOpenAI, sync
and async; model strings where the path differs) against the fake OpenAI server. The parametrised
lists are the bad inputs tried; their counts are reported in the notes of the change.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals._judge import answers
from openevals._judge.answers import MAX_ANSWER_CHARS, extract_json_object
from openevals._judge.cache import active_cache
from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.llm import (
    JudgeConnectionError,
    JudgeError,
    JudgeOutputError,
    JudgeServerError,
    JudgeTimeoutError,
    create_async_llm_as_judge,
    create_llm_as_judge,
)
from openevals.testing import (
    MALFORMED_REPLIES,
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)

GOOD = {"reasoning": "Fine.", "score": True}
KINDS = ("openai-sync", "openai-async", "langchain-sync", "langchain-async")
_LOOPS: list[asyncio.AbstractEventLoop] = []


@pytest.fixture(autouse=True)
def _close_loops() -> Iterator[None]:
    yield
    while _LOOPS:
        loop = _LOOPS.pop()
        loop.run_until_complete(loop.shutdown_asyncgens())  # closes a judge's owned clients
        loop.close()


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def matrix(cases: list[str], paths: tuple[str, ...], few: int) -> list[tuple[str, str]]:
    """Every case on the first two (sync) paths; the first ``few`` cases on the other paths.

    Sync and async share the reading code, and a judge call costs a few hundred ms on a busy
    machine, so the async and model-string paths get a representative subset.
    """
    pairs = [(path, case) for path in paths[:1] + paths[2:3] for case in cases]
    others = [p for p in paths if p not in (paths[0], paths[2])]
    pairs += [(path, case) for path in others for case in cases[:few]]
    return pairs


def _fast(evaluator: Any, max_retries: int) -> None:
    judge_core(evaluator).retry = RetryPolicy(
        max_retries=max_retries, initial_delay=0.001, max_delay=0.01
    )


def judge_of(
    kind: str, server: FakeOpenAIServer, *, max_retries: int = 1, **options: Any
) -> Callable[..., Any]:
    """A sync callable running an evaluator of ``kind`` (async ones on a fresh loop each call)."""
    client_options = options.pop("client_options", {})
    if kind.startswith("openai"):
        make = async_openai_client if kind.endswith("async") else openai_client
        options = {"judge": make(server, **client_options), "model": "gpt-test", **options}
    elif kind.startswith("langchain"):
        options = {"judge": chat_model(server, **client_options), **options}
    else:  # model string: the judge builds the client from OPENAI_BASE_URL
        options = {"model": "openai:gpt-test", **options}
    options.setdefault("prompt", "Judge this: {outputs}")
    if kind.endswith("async"):
        evaluator = create_async_llm_as_judge(**options)
        _fast(evaluator, max_retries)
        # One loop per judge: async HTTP clients keep connections bound to their first loop.
        loop = asyncio.new_event_loop()
        _LOOPS.append(loop)

        def run(**kwargs: Any) -> Any:
            return loop.run_until_complete(evaluator(**kwargs))

        return run
    evaluator = create_llm_as_judge(**options)
    _fast(evaluator, max_retries)
    return evaluator


# ------------------------------------------------------------------ D: deeply nested answers

DEEP = 5000
DEEP_ANSWERS = {
    "bare_array": "[" * DEEP + "]" * DEEP,
    "array_in_prose": "Here is my verdict: " + "[" * DEEP + "]" * DEEP + " - that is all.",
    "object_chain": '{"a": ' * DEEP + "1" + "}" * DEEP,
    "object_chain_in_prose": 'I think {"a": ' * DEEP + "true" + "}" * DEEP,
    "unclosed_arrays": "[" * DEEP,
    "unclosed_objects": '{"score": ' * DEEP,
    "fenced": "```json\n" + "[" * DEEP + "]" * DEEP + "\n```",
    "score_nested_deep": '{"reasoning": "r", "score": ' + "[" * DEEP + "]" * DEEP + "}",
}


@pytest.mark.parametrize(("kind", "name"), matrix(list(DEEP_ANSWERS), KINDS, 3))
def test_deeply_nested_answer_is_a_judge_output_error(
    kind: str, fake_openai: FakeOpenAIServer, name: str
) -> None:
    text = DEEP_ANSWERS[name]
    fake_openai.set_default_chat(content=text)
    judge = judge_of(kind, fake_openai)
    with pytest.raises(JudgeOutputError) as info:
        judge(outputs="x")
    assert info.value.raw == text
    assert len(str(info.value)) < 3000  # the message quotes a truncated copy
    assert len(fake_openai.chat_requests) == 2  # the answer and one repair


@pytest.mark.parametrize("kind", ["openai-sync", "openai-async"])
def test_deeply_nested_tool_call_arguments(kind: str, fake_openai: FakeOpenAIServer) -> None:
    arguments = '{"reasoning": ' + "[" * DEEP + "]" * DEEP + ', "score": true}'
    fake_openai.set_default_chat(tool_calls=[{"name": "score", "arguments": arguments}])
    judge = judge_of(kind, fake_openai)
    with pytest.raises(JudgeOutputError) as info:
        judge(outputs="x")
    assert info.value.raw == arguments


@settings(max_examples=30)
@given(
    depth=st.integers(min_value=1, max_value=6000),
    opener=st.sampled_from(["[", "{", '{"a":', '{"score": ']),
    closed=st.booleans(),
    prefix=st.text(max_size=20),
    suffix=st.text(max_size=20),
)
def test_extract_json_object_never_raises_on_nesting(
    depth: int, opener: str, closed: bool, prefix: str, suffix: str
) -> None:
    closer = {"[": "]", "{": "}"}.get(opener[0], "}")
    body = opener * depth + ("1" if opener.endswith(":") or opener.endswith(": ") else "")
    text = prefix + body + (closer * depth if closed else "") + suffix
    result = extract_json_object(text)
    assert result is None or isinstance(result, dict)


# ------------------------------------------------------------------ E: malformed server replies


ALL_PATHS = (*KINDS, "model-sync", "model-async")
# The faults that reach different code: an undecodable body, a non-object body, no choices, no
# message, no content.
KEY_FAULTS = ["not_json", "json_string", "empty_choices", "no_message", "null_content"]
FAULTS = KEY_FAULTS + sorted(set(MALFORMED_REPLIES) - set(KEY_FAULTS))


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize(("path", "fault"), matrix(FAULTS, ALL_PATHS, len(KEY_FAULTS)))
def test_malformed_reply_is_retried_then_a_server_error(
    fake_openai: FakeOpenAIServer, path: str, fault: str
) -> None:
    fake_openai.set_default_chat(**MALFORMED_REPLIES[fault])
    judge = judge_of(path, fake_openai, max_retries=1)
    with pytest.raises(JudgeServerError) as info:
        judge(outputs="x")
    error = info.value
    assert isinstance(error, JudgeError) and isinstance(error, RuntimeError)
    assert "malformed reply" in str(error) and error.reason
    assert error.attempts == 2
    assert len(fake_openai.chat_requests) == 2  # retried once, like a 5xx


@pytest.mark.usefixtures("openai_env")
@pytest.mark.parametrize("path", ALL_PATHS)
@pytest.mark.parametrize("fault", ["not_json", "empty_choices"])
def test_one_malformed_reply_then_a_good_one_succeeds(
    fake_openai: FakeOpenAIServer, path: str, fault: str
) -> None:
    fake_openai.queue_malformed(fault)
    fake_openai.queue_chat(json=GOOD)
    judge = judge_of(path, fake_openai, max_retries=2)
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 2


def test_refusal_is_the_models_answer_not_a_server_fault(fake_openai: FakeOpenAIServer) -> None:
    refusal = {"role": "assistant", "content": None, "refusal": "I cannot help with that."}
    body = json.loads(json.dumps(MALFORMED_REPLIES["null_content"]["body"]))
    body["choices"][0]["message"] = refusal
    fake_openai.set_default_chat(body=body)
    judge = judge_of("openai-sync", fake_openai)
    with pytest.raises(JudgeOutputError, match="refused"):
        judge(outputs="x")


# ------------------------------------------------------------------ F: long prose answers


def test_long_prose_answer_costs_no_langchain_partial_json_parsing(
    fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain_core.output_parsers.json as lc_json_parser

    calls = {"n": 0}

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        # LangChain's markdown/partial-JSON parser: quadratic on long prose. Count and fail fast.
        calls["n"] += 1
        raise json.JSONDecodeError("not parsed in this test", text, 0)

    monkeypatch.setattr(lc_json_parser, "parse_json_markdown", counting)
    prose = ("The answer looks mostly right but the second step is unclear. " * 520)[:32_768]
    fake_openai.set_default_chat(content=prose)
    for kind in ("langchain-sync", "langchain-async"):
        fake_openai.reset()
        fake_openai.set_default_chat(content=prose)
        with pytest.raises(JudgeOutputError):
            judge_of(kind, fake_openai)(outputs="x")
    assert calls["n"] == 0


class _CountingDecoder(json.JSONDecoder):
    calls = 0

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        type(self).calls += 1
        return super().raw_decode(s, idx)


ADVERSARIAL_PROSE = {
    "many_object_starts": '{"a": 1, ' * 4000,
    "many_braces": "{ x } " * 6000,
    "many_fences": "```json\n{bad\n```\n" * 2000,
    "object_starts_then_answer": '{"k" ' * 5000 + '{"score": true}',
    "plain_words": "word " * 7000,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL_PROSE))
def test_json_extraction_work_is_bounded(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(answers.json, "JSONDecoder", _CountingDecoder)
    _CountingDecoder.calls = 0
    extract_json_object(ADVERSARIAL_PROSE[name])
    assert _CountingDecoder.calls <= 64  # a fixed number of passes, whatever the length


def test_answer_over_the_size_cap_is_rejected_without_repair(
    kind: str, fake_openai: FakeOpenAIServer
) -> None:
    fake_openai.set_default_chat(content="x" * (MAX_ANSWER_CHARS + 1))
    with pytest.raises(JudgeOutputError, match="over the limit") as info:
        judge_of(kind, fake_openai)(outputs="x")
    assert len(str(info.value)) < 1500
    assert len(fake_openai.chat_requests) == 1


# ------------------------------------------------------------------ G: timeouts


@pytest.mark.parametrize("kind", KINDS)
def test_timeouts_are_retried_then_a_judge_timeout_error(
    kind: str, fake_openai: FakeOpenAIServer
) -> None:
    import openai

    fake_openai.latency = 2.0
    judge = judge_of(
        kind, fake_openai, max_retries=1, client_options={"timeout": 0.15, "max_retries": 0}
    )
    with pytest.raises(JudgeTimeoutError) as info:
        judge(outputs="x")
    error = info.value
    assert error.timeout == pytest.approx(0.15)
    assert error.attempts == 2 and "0.15 s" in str(error)
    assert isinstance(error, TimeoutError) and isinstance(error, JudgeError)
    assert isinstance(error.__cause__, openai.APITimeoutError)
    assert len(fake_openai.chat_requests) == 2


@pytest.mark.parametrize("kind", ["openai-sync", "openai-async"])
def test_a_users_client_retries_timeouts_itself(kind: str, fake_openai: FakeOpenAIServer) -> None:
    fake_openai.latency = 2.0
    judge = judge_of(
        kind, fake_openai, max_retries=3, client_options={"timeout": 0.1, "max_retries": 1}
    )
    with pytest.raises(JudgeTimeoutError) as info:
        judge(outputs="x")
    # The client's own retry policy (1 retry) governs; the judge's does not multiply it.
    assert len(fake_openai.chat_requests) == 2
    assert info.value.attempts == 2


# ------------------------------------------------------------------ G2: connection resets

RESET_PATHS = ("string-sync", "string-async", *KINDS)


@pytest.mark.parametrize("kind", RESET_PATHS)
def test_a_reset_on_every_attempt_is_a_judge_connection_error(
    kind: str, openai_env: FakeOpenAIServer
) -> None:
    """A server that resets every connection: the same documented error on every path (the
    async model-string path once called it a timeout, the others leaked the SDK's own error)."""
    openai_env.set_default_chat(reset=True)
    judge = judge_of(kind, openai_env, max_retries=1)
    with pytest.raises(JudgeConnectionError) as info:
        judge(outputs="x")
    error = info.value
    assert not isinstance(error, TimeoutError)
    assert isinstance(error, ConnectionError) and isinstance(error, JudgeError)
    assert error.attempts == 2 and len(openai_env.chat_requests) == 2
    assert "connection" in str(error) and "2 attempts" in str(error)
    assert error.reason and error.__cause__ is not None


def test_a_reset_counts_the_users_client_retries(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(reset=True)
    judge = judge_of("openai-sync", fake_openai, client_options={"max_retries": 1})
    with pytest.raises(JudgeConnectionError) as info:
        judge(outputs="x")
    assert info.value.attempts == 2 == len(fake_openai.chat_requests)


def test_a_refused_connection_is_a_judge_connection_error() -> None:
    import socket

    import openai

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
    judge = create_llm_as_judge(prompt="{outputs}", judge=client, model="m", max_retries=0)
    with pytest.raises(JudgeConnectionError, match="could not reach the judge model 'm'"):
        judge(outputs="x")


def test_a_real_timeout_stays_a_timeout_and_a_reset_is_not_one() -> None:
    from openevals._judge.errors import is_connection_failure, is_timeout

    def chained(*errors: BaseException) -> BaseException:
        for outer, inner in itertools.pairwise(errors):
            outer.__cause__ = inner
        return errors[0]

    class ConnectTimeout(Exception):  # what httpx-aiohttp makes of a disconnect
        pass

    class ServerDisconnectedError(Exception):
        pass

    dropped = chained(ConnectTimeout("x"), ServerDisconnectedError("Server disconnected"))
    assert is_connection_failure(dropped) and not is_timeout(dropped)
    slow = chained(ConnectTimeout("x"), TimeoutError("timed out"))
    assert is_timeout(slow) and not is_connection_failure(slow)
    assert is_connection_failure(ConnectionResetError()) and not is_timeout(ConnectionResetError())
    assert not is_timeout(ValueError()) and not is_connection_failure(ValueError())
    looped = ConnectTimeout("x")
    looped.__cause__ = looped  # a cycle ends the walk
    assert is_timeout(looped)


# ------------------------------------------------------------------ H: no replay of bad answers


class DictCache:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.data.get(key)

    def set(self, key: str, value: dict[str, Any]) -> None:
        self.data[key] = value


@pytest.fixture
def dict_cache() -> Iterator[DictCache]:
    cache = DictCache()
    token = active_cache.set(cache)
    yield cache
    active_cache.reset(token)


BAD_ANSWERS = [
    {"reasoning": "r", "score": 7},  # a boolean score expected
    {"reasoning": "", "score": True},  # no reasoning
    {"score": True},
    {"reasoning": "r"},
    {"reasoning": "r", "score": "maybe"},
]
BAD_INDEXES = [str(i) for i in range(len(BAD_ANSWERS))]


@pytest.mark.parametrize(
    ("kind", "bad"), [(k, BAD_ANSWERS[int(i)]) for k, i in matrix(BAD_INDEXES, KINDS, 2)]
)
def test_unusable_answers_are_never_cached(
    kind: str, fake_openai: FakeOpenAIServer, dict_cache: DictCache, bad: dict[str, Any]
) -> None:
    fake_openai.set_default_chat(json=bad)
    judge = judge_of(kind, fake_openai)
    with pytest.raises(JudgeOutputError):
        judge(outputs="x")
    assert dict_cache.data == {}
    fake_openai.set_default_chat(json=GOOD)
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 3  # the retry reached the model
    assert len(dict_cache.data) == 1
    assert judge(outputs="x")["score"] is True  # now a cache hit
    assert len(fake_openai.chat_requests) == 3


def test_a_stored_answer_that_fails_validation_is_asked_again(
    fake_openai: FakeOpenAIServer, dict_cache: DictCache
) -> None:
    fake_openai.set_default_chat(json=GOOD)
    judge = judge_of("openai-sync", fake_openai)
    judge(outputs="x")
    (key,) = dict_cache.data
    dict_cache.data[key] = {"data": {"reasoning": "r", "score": 9}, "text": "{}"}  # stale entry
    assert judge(outputs="x")["score"] is True
    assert len(fake_openai.chat_requests) == 2
    assert dict_cache.data[key]["data"] == GOOD  # replaced by the fresh answer


def _judge_rows() -> list[dict[str, Any]]:
    return [{"id": str(i), "outputs": f"answer {i}"} for i in range(3)]


def test_evaluate_retry_errors_reaches_the_model(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    from openevals.evaluation import evaluate

    out, cache = tmp_path / "out.jsonl", tmp_path / "cache.sqlite"
    judge = create_llm_as_judge(
        prompt="{outputs}", judge=openai_client(fake_openai), model="gpt-test", max_retries=0
    )
    fake_openai.set_default_chat(json={"reasoning": "r", "score": 3})
    first = evaluate(_judge_rows(), [judge], cache=cache, output=out, progress=False)
    assert first.summary["pairs"]["failed"] == 3
    asked = len(fake_openai.chat_requests)
    assert asked == 6  # each row: the answer and one repair
    fake_openai.set_default_chat(json=GOOD)
    again = evaluate(
        _judge_rows(), [judge], cache=cache, output=out, retry_errors=True, progress=False
    )
    assert again.summary["pairs"]["failed"] == 0
    assert len(fake_openai.chat_requests) == asked + 3


async def test_aevaluate_retry_errors_reaches_the_model(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    from openevals.evaluation import aevaluate

    out, cache = tmp_path / "out.jsonl", tmp_path / "cache.sqlite"
    judge = create_async_llm_as_judge(
        prompt="{outputs}", judge=async_openai_client(fake_openai), model="gpt-test"
    )
    fake_openai.set_default_chat(json={"score": True})  # no reasoning: unusable
    first = await aevaluate(_judge_rows(), [judge], cache=cache, output=out, progress=False)
    assert first.summary["pairs"]["failed"] == 3
    asked = len(fake_openai.chat_requests)
    fake_openai.set_default_chat(json=GOOD)
    again = await aevaluate(
        _judge_rows(), [judge], cache=cache, output=out, retry_errors=True, progress=False
    )
    assert again.summary["pairs"]["failed"] == 0
    assert len(fake_openai.chat_requests) == asked + 3


# ------------------------------------------------------------------ I: lone surrogates

SURROGATE = "\ud800"
SURROGATE_CASES: list[tuple[str, dict[str, Any], dict[str, Any], str]] = [
    ("outputs_str", {}, {"outputs": f"a{SURROGATE}b"}, "`outputs`"),
    ("outputs_low", {}, {"outputs": "\udfff"}, "`outputs`"),
    ("inputs_nested", {"prompt": "{inputs} {outputs}"}, {"inputs": {"q": [SURROGATE]}}, "`inputs"),
    ("inputs_key", {"prompt": "{inputs} {outputs}"}, {"inputs": {SURROGATE: 1}}, "`inputs"),
    (
        "reference",
        {"prompt": "{outputs} vs {reference_outputs}"},
        {"reference_outputs": ["ok", f"x{SURROGATE}"]},
        "`reference_outputs[1]`",
    ),
    ("extra_var", {"prompt": "{outputs} {context}"}, {"context": SURROGATE}, "`context`"),
    ("system", {"system": f"Be strict {SURROGATE}"}, {}, "`system`"),
    (
        "few_shot",
        {"few_shot_examples": [{"outputs": SURROGATE, "score": True}]},
        {},
        "`few_shot_examples",
    ),
    ("template", {"prompt": f"Judge {SURROGATE}: {{outputs}}"}, {}, "`prompt`"),
    (
        "callable_prompt",
        {"prompt": lambda **kw: [{"role": "user", "content": SURROGATE}]},
        {},
        "`prompt`",
    ),
    (
        "message_list",
        {},
        {
            "outputs": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": SURROGATE},
            ]
        },
        "`outputs[1]['content']`",
    ),
    ("attachment_url", {}, {"attachments": f"https://x/{SURROGATE}.png"}, "`attachments`"),
]


_SURROGATES_BY_NAME = {case[0]: case for case in SURROGATE_CASES}
SURROGATE_MATRIX = [
    (k, *_SURROGATES_BY_NAME[name]) for k, name in matrix(list(_SURROGATES_BY_NAME), KINDS, 4)
]


@pytest.fixture(scope="module")
def quiet_server() -> Iterator[FakeOpenAIServer]:
    """One server for the tests that must never reach it."""
    with FakeOpenAIServer() as server:
        yield server


_CLIENTS: dict[str, Any] = {}


@pytest.mark.parametrize(("kind", "name", "options", "call", "named"), SURROGATE_MATRIX)
def test_lone_surrogates_name_the_parameter(
    kind: str,
    quiet_server: FakeOpenAIServer,
    name: str,
    options: dict[str, Any],
    call: dict[str, Any],
    named: str,
) -> None:
    fake_openai = quiet_server
    if kind not in _CLIENTS:  # no request is ever made, so one client per kind will do
        _CLIENTS[kind] = {
            "openai-sync": openai_client,
            "openai-async": async_openai_client,
        }.get(kind, chat_model)(quiet_server)
    client = _CLIENTS[kind]
    model = {} if kind.startswith("langchain") else {"model": "gpt-test"}
    factory = create_async_llm_as_judge if kind.endswith("async") else create_llm_as_judge
    evaluator = factory(**{"prompt": "Judge this: {outputs}", **options, "judge": client, **model})
    judge = (lambda **kw: asyncio.run(evaluator(**kw))) if kind.endswith("async") else evaluator
    with pytest.raises(ValueError, match="lone surrogate") as info:
        judge(**{"outputs": "fine", **call})
    assert named in str(info.value)
    assert not isinstance(info.value, UnicodeError)
    assert fake_openai.chat_requests == []


@settings(max_examples=40)
@given(text=st.text(max_size=30), at=st.integers(min_value=0, max_value=30))
def test_any_text_with_a_surrogate_is_refused_before_sending(text: str, at: int) -> None:
    from openevals._judge.prompting import check_encodable

    bad = text[:at] + chr(0xD800 + at) + text[at:]
    with pytest.raises(ValueError, match="`outputs`"):
        check_encodable([{"role": "user", "content": bad}], {"inputs": None, "outputs": bad})
