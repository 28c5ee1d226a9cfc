"""Message normalisation: OpenAI dicts, LangChain messages and ``{"messages": [...]}`` containers."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from openevals._messages import (
    chat_messages_to_string,
    convert_to_openai_message,
    is_langchain_message,
    normalize_final_app_outputs_as_string,
    normalize_to_openai_messages_list,
    to_json_text,
)
from openevals.utils import (
    _chat_completion_messages_to_string,
    _convert_to_openai_message,
    _normalize_final_app_outputs_as_string,
    _normalize_to_openai_messages_list,
)


def _lc_conversation() -> list[Any]:
    return [
        SystemMessage("be brief", id="s1"),
        HumanMessage("weather in SF?", id="h1"),
        AIMessage(
            "",
            id="a1",
            tool_calls=[{"name": "get_weather", "args": {"city": "SF"}, "id": "call_1"}],
        ),
        ToolMessage("sunny, 20C", tool_call_id="call_1", id="t1"),
        AIMessage("It is sunny.", id="a2"),
    ]


def _openai_conversation() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather in SF?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "SF"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 20C"},
        {"role": "assistant", "content": "It is sunny."},
    ]


# --------------------------------------------------------------------------- LangChain messages


def test_langchain_messages_become_openai_dicts() -> None:
    out = normalize_to_openai_messages_list(_lc_conversation())
    assert out == [
        {"role": "system", "content": "be brief", "id": "s1"},
        {"role": "user", "content": "weather in SF?", "id": "h1"},
        {
            "role": "assistant",
            "content": "",
            "id": "a1",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "SF"}'},
                }
            ],
        },
        {"role": "tool", "content": "sunny, 20C", "tool_call_id": "call_1", "id": "t1"},
        {"role": "assistant", "content": "It is sunny.", "id": "a2"},
    ]
    assert json.loads(out[2]["tool_calls"][0]["function"]["arguments"]) == {"city": "SF"}


def test_single_langchain_message_and_chunk() -> None:
    assert normalize_to_openai_messages_list(HumanMessage("hi")) == [
        {"role": "user", "content": "hi"}
    ]
    assert convert_to_openai_message(AIMessageChunk(content="part")) == {
        "role": "assistant",
        "content": "part",
    }


def test_message_without_id_gets_no_id_key() -> None:
    assert "id" not in convert_to_openai_message(HumanMessage("x"))
    assert "id" not in convert_to_openai_message({"role": "user", "content": "x"})


def test_is_langchain_message() -> None:
    assert is_langchain_message(HumanMessage("x"))
    assert is_langchain_message(AIMessageChunk(content="x"))
    assert not is_langchain_message({"role": "user", "content": "x"})
    assert not is_langchain_message("x")


def test_langchain_and_openai_forms_normalise_identically_modulo_ids() -> None:
    lc = normalize_to_openai_messages_list(_lc_conversation())
    oa = normalize_to_openai_messages_list(_openai_conversation())
    for m in lc:
        m.pop("id", None)
    assert lc == oa


# --------------------------------------------------------------------------- OpenAI dicts


def test_openai_dicts_keep_their_fields_and_none_content_becomes_empty() -> None:
    out = normalize_to_openai_messages_list(_openai_conversation())
    assert out[2]["content"] == ""
    assert out[3] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 20C"}
    assert out[2]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_langchain_form_tool_calls_in_dicts_become_openai_form() -> None:
    msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"name": "search", "args": {"q": "x", "n": 2}, "id": "c9"},
            {"name": "noop", "args": {}},
            {"name": "raw", "args": '{"already": "json"}', "id": "c10"},
        ],
    }
    out = convert_to_openai_message(msg)
    assert out["tool_calls"] == [
        {
            "id": "c9",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q": "x", "n": 2}'},
        },
        {"id": "", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
        {
            "id": "c10",
            "type": "function",
            "function": {"name": "raw", "arguments": '{"already": "json"}'},
        },
    ]


def test_openai_tool_call_without_type_gets_function_type() -> None:
    msg = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
    }
    assert convert_to_openai_message(msg)["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]


def test_empty_tool_calls_are_dropped() -> None:
    for empty in ([], None):
        out = convert_to_openai_message({"role": "assistant", "content": "x", "tool_calls": empty})
        assert "tool_calls" not in out


@pytest.mark.parametrize(("role", "expected"), [("human", "user"), ("ai", "assistant")])
def test_langchain_role_names_map_to_openai(role: str, expected: str) -> None:
    assert convert_to_openai_message({"role": role, "content": "x"})["role"] == expected
    assert convert_to_openai_message({"type": role, "content": "x"}) == {
        "role": expected,
        "content": "x",
    }


# --------------------------------------------------------------------------- containers


def test_messages_container_and_single_dict() -> None:
    conv = _openai_conversation()
    assert normalize_to_openai_messages_list(
        {"messages": conv}
    ) == normalize_to_openai_messages_list(conv)
    assert (
        normalize_to_openai_messages_list({"messages": _lc_conversation()})[0]["role"] == "system"
    )
    assert normalize_to_openai_messages_list({"role": "user", "content": "x"}) == [
        {"role": "user", "content": "x"}
    ]
    assert normalize_to_openai_messages_list(None) == []
    assert normalize_to_openai_messages_list([]) == []
    assert normalize_to_openai_messages_list(tuple(conv)) == normalize_to_openai_messages_list(conv)


@pytest.mark.parametrize(
    ("bad", "exc", "pattern"),
    [
        (5, TypeError, "got int"),
        ("just text", TypeError, "got str"),
        ({"foo": 1}, ValueError, r"\['foo'\]"),
        ({"messages": "nope"}, ValueError, "got str"),
        ([{"content": "no role"}], ValueError, "'role'"),
        ([42], TypeError, "got int"),
        (
            [{"role": "assistant", "content": "", "tool_calls": [{"x": 1}]}],
            ValueError,
            "tool call at position 0",
        ),
    ],
)
def test_bad_input_is_rejected_with_a_precise_error(
    bad: Any, exc: type[Exception], pattern: str
) -> None:
    with pytest.raises(exc, match=pattern):
        normalize_to_openai_messages_list(bad)


# --------------------------------------------------------------------------- no mutation


def test_nothing_the_caller_passed_is_mutated() -> None:
    oa = _openai_conversation()
    oa.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        }
    )
    lc_dicts = [
        {"role": "assistant", "content": "", "tool_calls": [{"name": "a", "args": {"k": [1]}}]}
    ]
    lc = _lc_conversation()
    snapshots = copy.deepcopy((oa, lc_dicts)), [m.model_dump() for m in lc]

    outs = [
        normalize_to_openai_messages_list(oa),
        normalize_to_openai_messages_list({"messages": lc_dicts}),
        normalize_to_openai_messages_list(lc),
    ]
    chat_messages_to_string(oa)
    chat_messages_to_string(lc)
    normalize_final_app_outputs_as_string({"messages": oa})
    to_json_text({"m": lc, "o": oa})

    # Scribble over everything returned: the caller's objects must not change.
    for out in outs:
        for m in out:
            if isinstance(m.get("content"), list):
                m["content"].append({"type": "text", "text": "appended"})
                m["content"][0]["text"] = "changed"
            for call in m.get("tool_calls") or []:
                call["function"]["name"] = "changed"
            m["role"] = "changed"
    assert copy.deepcopy((oa, lc_dicts)) == snapshots[0]
    assert [m.model_dump() for m in lc] == snapshots[1]


# --------------------------------------------------------------------------- transcript


def test_transcript_rendering() -> None:
    text = chat_messages_to_string(_openai_conversation())
    assert text == (
        "<system>\nbe brief\n</system>\n\n"
        "<user>\nweather in SF?\n</user>\n\n"
        "<assistant>\n<tool_call>\n<name>get_weather</name>\n"
        '<arguments>{"city": "SF"}</arguments>\n</tool_call>\n</assistant>\n\n'
        "<tool>\n<tool_result id=call_1>\nsunny, 20C\n</tool_result>\n</tool>\n\n"
        "<assistant>\nIt is sunny.\n</assistant>"
    )
    assert chat_messages_to_string(_lc_conversation()) == text
    assert chat_messages_to_string({"messages": _openai_conversation()}) == text
    assert chat_messages_to_string([]) == ""


def test_transcript_renders_block_content() -> None:
    msg = {
        "role": "user",
        "content": [
            {"type": "text", "text": "first"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            {"type": "text", "text": "second"},
        ],
    }
    text = chat_messages_to_string([msg])
    assert text.startswith("<user>\nfirst\n")
    assert '"image_url"' in text
    assert text.endswith("second\n</user>")


# --------------------------------------------------------------------------- final outputs


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        ("plain", "plain"),
        ({"role": "assistant", "content": "msg"}, "msg"),
        (
            {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]},
            "a",
        ),
        (AIMessage("from lc"), "from lc"),
        ({"messages": [HumanMessage("q"), AIMessage("lc last")]}, "lc last"),
        (
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            "a\nb",
        ),
    ],
)
def test_final_app_outputs_as_string(outputs: Any, expected: str) -> None:
    assert normalize_final_app_outputs_as_string(outputs) == expected


@pytest.mark.parametrize("bad", [5, None, {"messages": []}, {"x": 1}])
def test_final_app_outputs_bad_input(bad: Any) -> None:
    with pytest.raises(ValueError, match="outputs"):
        normalize_final_app_outputs_as_string(bad)


# --------------------------------------------------------------------------- JSON text


def test_to_json_text() -> None:
    assert to_json_text("unchanged") == "unchanged"
    assert to_json_text({"b": 1, "a": "é"}) == '{"b": 1, "a": "é"}'
    assert to_json_text({"b": 1, "a": 2}, sort_keys=True) == '{"a": 2, "b": 1}'
    assert to_json_text([HumanMessage("x")]) == '[{"role": "user", "content": "x"}]'
    assert to_json_text({"x": [1]}, indent=2) == '{\n  "x": [\n    1\n  ]\n}'


# --------------------------------------------------------------------------- public-release aliases


def test_public_private_aliases_point_at_the_helpers() -> None:
    assert _convert_to_openai_message is convert_to_openai_message
    assert _normalize_to_openai_messages_list is normalize_to_openai_messages_list
    assert _chat_completion_messages_to_string is chat_messages_to_string
    assert _normalize_final_app_outputs_as_string is normalize_final_app_outputs_as_string


# --------------------------------------------------------------------------- properties

_text = st.text(max_size=20)
_args = st.dictionaries(
    st.text(min_size=1, max_size=5), st.one_of(st.integers(), _text), max_size=3
)
_lc_tool_call = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=8), "args": _args, "id": st.text(min_size=1, max_size=6)}
)
_message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": _text}),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": _text,
            "tool_calls": st.lists(_lc_tool_call, max_size=3),
        }
    ),
)


@given(st.lists(_message, max_size=6))
def test_normalisation_is_idempotent_and_preserves_tool_args(
    messages: list[dict[str, Any]],
) -> None:
    snapshot = copy.deepcopy(messages)
    once = normalize_to_openai_messages_list(messages)
    assert normalize_to_openai_messages_list(once) == once
    assert messages == snapshot
    assert [m["role"] for m in once] == [m["role"] for m in messages]
    for original, normalised in zip(messages, once, strict=True):
        calls = original.get("tool_calls") or []
        out_calls = normalised.get("tool_calls") or []
        assert [c["function"]["name"] for c in out_calls] == [c["name"] for c in calls]
        assert [json.loads(c["function"]["arguments"]) for c in out_calls] == [
            c["args"] for c in calls
        ]


def _nested(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    inner = top
    for _ in range(depth):
        inner["x"] = {}
        inner = inner["x"]
    return top


def test_tool_call_arguments_and_blocks_deeper_than_json_can_walk_are_rendered() -> None:
    # json.dumps and copy.deepcopy raise RecursionError at this depth; the transcript does not.
    deep = _nested(3000)
    call = [{"role": "assistant", "content": "", "tool_calls": [{"name": "f", "args": deep}]}]
    text = chat_messages_to_string(call)
    assert text.count('{"x": ') == 3000
    block = [{"role": "user", "content": [{"type": "image", "x": deep}]}]
    assert chat_messages_to_string(block).count('{"x": ') == 3000


def test_a_content_block_that_contains_itself_is_named() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match=r"content block.*contains itself"):
        chat_messages_to_string([{"role": "user", "content": [{"type": "image", "x": loop}]}])


def test_thinking_blocks_read_as_thinking_text_in_transcripts() -> None:
    """agentevals #62: reasoning blocks (Anthropic ``thinking``/``redacted_thinking``, LangChain's
    ``reasoning``) reach the judge as ``<thinking>`` text, not as JSON with signatures."""
    from langchain_core.messages import AIMessage

    blocks = [
        {"type": "thinking", "thinking": "The user wants SF weather.", "signature": "sig=="},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "reasoning", "reasoning": "Call the tool."},
        {"type": "text", "text": "Let me check."},
    ]
    expected = (
        "<assistant>\n<thinking>\nThe user wants SF weather.\n</thinking>\n"
        "<thinking>\n[redacted]\n</thinking>\n<thinking>\nCall the tool.\n</thinking>\n"
        "Let me check.\n</assistant>"
    )
    assert chat_messages_to_string([{"role": "assistant", "content": blocks}]) == expected
    assert chat_messages_to_string([AIMessage(content=blocks)]) == expected  # type: ignore[arg-type]
    # A block that only looks like one (no text) stays JSON, as any other block.
    odd = chat_messages_to_string([{"role": "assistant", "content": [{"type": "thinking"}]}])
    assert '{"type": "thinking"}' in odd
