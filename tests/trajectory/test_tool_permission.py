"""The tool-permission evaluator (agentevals PR #108): allow and deny lists, no reference."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage

from openevals.trajectory import (
    create_async_trajectory_tool_permission_evaluator,
    create_trajectory_tool_permission_evaluator,
)


def _trajectory(*names: str) -> list[dict[str, Any]]:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
        for i, n in enumerate(names)
    ]
    return [
        {"role": "user", "content": "refund my order"},
        {"role": "assistant", "content": "", "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls),
        {"role": "assistant", "content": "done"},
    ]


def test_allow_list() -> None:
    evaluator = create_trajectory_tool_permission_evaluator(allowed_tools=["search_kb", "reply"])
    ok = evaluator(outputs=_trajectory("search_kb", "reply"))
    assert (ok["key"], ok["score"], ok["comment"]) == ("trajectory_tool_permission", 1.0, None)
    bad = evaluator(outputs=_trajectory("search_kb", "issue_refund", "issue_refund", "reply"))
    assert bad["score"] == 0.5
    assert bad["comment"] == "2 of 4 tool call(s) not authorised: 'issue_refund' x2"


def test_deny_list_wins_over_allow_list() -> None:
    evaluator = create_trajectory_tool_permission_evaluator(
        allowed_tools=["search_kb", "issue_refund"], denied_tools=["issue_refund"]
    )
    assert evaluator(outputs=_trajectory("search_kb", "issue_refund"))["score"] == 0.5
    deny_only = create_trajectory_tool_permission_evaluator(denied_tools=["wire_transfer"])
    assert deny_only(outputs=_trajectory("anything", "else"))["score"] == 1.0
    assert deny_only(outputs=_trajectory("wire_transfer"))["score"] == 0.0


def test_no_tool_call_is_fully_authorised_and_messages_of_any_form_work() -> None:
    evaluator = create_trajectory_tool_permission_evaluator(allowed_tools=[])
    assert evaluator(outputs=[{"role": "assistant", "content": "hi"}])["score"] == 1.0
    lc = [
        HumanMessage(content="hi"),
        AIMessage(content="", tool_calls=[{"name": "delete_account", "args": {}, "id": "1"}]),
    ]
    assert evaluator(outputs=lc)["score"] == 0.0
    assert evaluator(outputs={"messages": lc})["score"] == 0.0


def test_bad_options_and_inputs_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="allowed_tools`, `denied_tools"):
        create_trajectory_tool_permission_evaluator()
    with pytest.raises(TypeError, match="allowed_tools"):
        create_trajectory_tool_permission_evaluator(allowed_tools="search")
    with pytest.raises(TypeError, match="denied_tools"):
        create_trajectory_tool_permission_evaluator(denied_tools=["ok", 3])  # type: ignore[list-item]
    evaluator = create_trajectory_tool_permission_evaluator(allowed_tools=["a"])
    with pytest.raises(ValueError, match="outputs"):
        evaluator(outputs=None)


def test_caller_lists_are_not_mutated_and_async_twin_agrees() -> None:
    allowed = ["search_kb"]
    sync = create_trajectory_tool_permission_evaluator(allowed_tools=allowed)
    allowed.append("issue_refund")  # a later change of the caller's list changes nothing
    trajectory = _trajectory("search_kb", "issue_refund")
    snapshot = json.dumps(trajectory)
    result = sync(outputs=trajectory)
    assert result["score"] == 0.5 and json.dumps(trajectory) == snapshot
    twin = create_async_trajectory_tool_permission_evaluator(allowed_tools=["search_kb"])
    assert asyncio.run(twin(outputs=trajectory)) == result


NAMES = st.sampled_from(["a", "b", "c", "d"])


@given(st.lists(NAMES, max_size=8), st.sets(NAMES), st.sets(NAMES))
def test_score_is_the_share_of_authorised_calls(
    calls: list[str], allowed: set[str], denied: set[str]
) -> None:
    evaluator = create_trajectory_tool_permission_evaluator(
        allowed_tools=sorted(allowed), denied_tools=sorted(denied)
    )
    ok = [n for n in calls if n in allowed and n not in denied]
    expected = 1.0 if not calls else len(ok) / len(calls)
    assert evaluator(outputs=_trajectory(*calls))["score"] == pytest.approx(expected)
