"""create_graph_trajectory_llm_as_judge against the fake OpenAI server, on real threads."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from langgraph.types import Command

from openevals.graph_trajectory import (
    create_async_graph_trajectory_llm_as_judge,
    create_graph_trajectory_llm_as_judge,
    extract_langgraph_trajectory_from_thread,
)
from openevals.graph_trajectory.llm import format_graph_thread
from openevals.llm import JudgeOutputError
from openevals.prompts import GRAPH_TRAJECTORY_ACCURACY_PROMPT
from openevals.testing import (
    FakeOpenAIServer,
    async_openai_client,
    chat_model,
    openai_client,
)
from tests.graph_trajectory.graphs import interrupting_search, react_agent

CONFIG = {"configurable": {"thread_id": "1"}}


def _thread(server: FakeOpenAIServer) -> Any:
    server.queue_chat(tool_calls=[{"name": "search", "arguments": {"query": "weather in sf"}}])
    server.queue_chat("It is rainy and 70 degrees in SF.")
    graph = react_agent(chat_model(server), [interrupting_search()])
    graph.invoke({"messages": [{"role": "user", "content": "what's the weather in sf?"}]}, CONFIG)
    graph.invoke(Command(resume="It is rainy and 70 degrees!"), CONFIG)
    return extract_langgraph_trajectory_from_thread(graph, CONFIG)


def _user_text(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")


def test_sensible_trajectory(fake_openai: FakeOpenAIServer) -> None:
    extracted = _thread(fake_openai)
    before = copy.deepcopy(extracted)
    fake_openai.queue_chat(json={"reasoning": "Asked a human, then answered.", "score": True})
    evaluator = create_graph_trajectory_llm_as_judge(judge=chat_model(fake_openai))
    result = evaluator(inputs=extracted["inputs"], outputs=extracted["outputs"])
    assert result["key"] == "graph_trajectory_accuracy"
    assert result["score"] is True
    assert result["comment"] == "Asked a human, then answered."
    text = _user_text(fake_openai.last_chat_body)
    assert '<steps>\n["__start__", "agent", "tools", "__interrupt__"]\n</steps>' in text
    assert "<input>\n__resuming__\n</input>" in text
    assert "what's the weather in sf?" in text and "It is rainy and 70 degrees in SF." in text
    assert "<reference_thread>" not in text  # no reference: the block is left out whole
    assert extracted == before


def test_unsensible_trajectory_with_custom_prompt(fake_openai: FakeOpenAIServer) -> None:
    extracted = _thread(fake_openai)
    fake_openai.queue_chat(json={"reasoning": "More than one tool call.", "score": False})
    evaluator = create_graph_trajectory_llm_as_judge(
        prompt="Perfectly efficient, at most one tool call?\n<thread>\n{thread}\n</thread>\n"
        "{reference_outputs}",
        judge=openai_client(fake_openai),
        model="gpt-test",
    )
    # The extracted dict itself may be passed as inputs (its 'inputs' key is read).
    result = evaluator(inputs=extracted, outputs=extracted["outputs"])
    assert (result["key"], result["score"]) == ("graph_trajectory_accuracy", False)
    assert _user_text(fake_openai.last_chat_body).startswith("Perfectly efficient")


def test_reference_thread_and_continuous_score(fake_openai: FakeOpenAIServer) -> None:
    extracted = _thread(fake_openai)
    reference = {
        "inputs": ["what's the weather?", "__resuming__"],
        "results": [{}, {"answer": "rainy"}],
        "steps": [["__start__", "agent", "tools", "__interrupt__"], ["agent"]],
    }
    fake_openai.queue_chat(json={"reasoning": "Same path as the reference.", "score": 0.75})
    evaluator = create_graph_trajectory_llm_as_judge(
        judge=chat_model(fake_openai), continuous=True, feedback_key="graph_accuracy"
    )
    result = evaluator(
        inputs=extracted["inputs"], outputs=extracted["outputs"], reference_outputs=reference
    )
    assert (result["key"], result["score"]) == ("graph_accuracy", 0.75)
    text = _user_text(fake_openai.last_chat_body)
    assert "<reference_thread>\n<turn 1>\n<input>\nwhat's the weather?\n</input>" in text
    assert '{"answer": "rainy"}' in text
    assert text.count("<reference_thread>") == 1


def test_agentevals_style_prompt_gets_a_labelled_reference(fake_openai: FakeOpenAIServer) -> None:
    """A custom prompt written for agentevals puts ``{reference_outputs}`` on a line of its own,
    with no tags around it: the reference arrives with its lead-in and its tags."""
    extracted = _thread(fake_openai)
    reference = {"inputs": ["hi"], "results": [{"answer": "hello"}], "steps": [["agent"]]}
    prompt = "Grade this thread.\n<thread>\n{thread}\n</thread>\n{reference_outputs}"
    evaluator = create_graph_trajectory_llm_as_judge(judge=chat_model(fake_openai), prompt=prompt)
    fake_openai.queue_chat(json={"reasoning": "ok", "score": True})
    evaluator(inputs=extracted["inputs"], outputs=extracted["outputs"], reference_outputs=reference)
    text = _user_text(fake_openai.last_chat_body)
    lead_in, _, block = text.partition("</thread>\n")[2].partition("<reference_thread>\n")
    assert "reference thread" in lead_in and block.endswith("</reference_thread>\n")
    assert '<turn 1>\n<input>\nhi\n</input>\n<steps>\n["agent"]\n</steps>' in block
    fake_openai.queue_chat(json={"reasoning": "ok", "score": True})
    evaluator(inputs=extracted["inputs"], outputs=extracted["outputs"])
    assert _user_text(fake_openai.last_chat_body).endswith("</thread>\n")


def test_async_twin(fake_openai: FakeOpenAIServer) -> None:
    extracted = _thread(fake_openai)
    fake_openai.queue_chat(json={"reasoning": "fine", "score": True})
    evaluator = create_async_graph_trajectory_llm_as_judge(
        judge=async_openai_client(fake_openai), model="gpt-test"
    )
    result = asyncio.run(evaluator(inputs=extracted["inputs"], outputs=extracted["outputs"]))
    assert (result["key"], result["score"], result["comment"]) == (
        "graph_trajectory_accuracy",
        True,
        "fine",
    )
    assert "__interrupt__" in _user_text(fake_openai.last_chat_body)


def test_misaligned_inputs_raise_before_any_call(fake_openai: FakeOpenAIServer) -> None:
    evaluator = create_graph_trajectory_llm_as_judge(judge=chat_model(fake_openai))
    outputs = {"inputs": [], "results": [{}], "steps": [["a"]]}
    with pytest.raises(ValueError, match="1 turn"):
        evaluator(inputs=["x", "y"], outputs=outputs)
    with pytest.raises(ValueError, match="'inputs' key"):
        evaluator(inputs={"question": "x"}, outputs=outputs)
    with pytest.raises(ValueError, match="needs `outputs`"):
        evaluator(inputs=["x"])
    with pytest.raises(TypeError, match="graph trajectory"):
        evaluator(inputs=["x"], outputs=[["a"]])
    with pytest.raises(ValueError, match="same length"):
        evaluator(outputs={"results": [{}, {}], "steps": [["a"]]})
    assert fake_openai.chat_requests == []


def test_unusable_answer_raises_after_repair(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(json={"verdict": "maybe"})
    evaluator = create_graph_trajectory_llm_as_judge(judge=chat_model(fake_openai))
    with pytest.raises(JudgeOutputError):
        evaluator(outputs={"results": [{}], "steps": [["__start__", "agent"]]})


def test_prompt_constant_is_the_default() -> None:
    import inspect

    default = inspect.signature(create_graph_trajectory_llm_as_judge).parameters["prompt"].default
    assert default is GRAPH_TRAJECTORY_ACCURACY_PROMPT
    assert "{thread}" in default and "{reference_outputs}" in default


def test_a_thread_deeper_than_json_can_walk_is_rendered() -> None:
    # json.dumps raises RecursionError on such a value; the iterative encoder renders it.
    deep: list[Any] = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    thread = format_graph_thread(None, {"results": [{"a": 1}], "steps": [[deep]]})
    assert thread.count("[") == 5002 and '<result>\n{"a": 1}\n</result>' in thread
