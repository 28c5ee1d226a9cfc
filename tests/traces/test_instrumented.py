"""Real instrumentations: opentelemetry-instrumentation-openai-v2 against the fake OpenAI
server, and openinference-instrumentation-langchain on a LangGraph graph with a tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate
from openevals.testing import FakeOpenAIServer
from openevals.traces import OtlpFileExporter, read_traces
from openevals.trajectory import create_trajectory_match_evaluator
from tests.traces.conftest import Recorder

pytest.importorskip("opentelemetry.instrumentation.openai_v2")
pytest.importorskip("openinference.instrumentation.langchain")

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}


@pytest.fixture
def openai_instrumented(recorder: Recorder, monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorder]:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=recorder.provider)
    yield recorder
    instrumentor.uninstrument()


def openai_agent(rec: Recorder, server: FakeOpenAIServer, question: str) -> None:
    """A hand-written tool loop on the real openai client, under an invoke_agent span."""
    import openai

    server.queue_chat(tool_calls=[{"name": "search", "arguments": {"q": question}}])
    server.queue_chat(f"answer to {question}")
    client = openai.OpenAI(base_url=server.base_url, api_key="test-key")
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}
    with rec.tracer.start_as_current_span("invoke_agent helper", attributes=attributes):
        messages: list[Any] = [{"role": "user", "content": question}]
        first = client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=[SEARCH_TOOL]
        )
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        result = f"found {json.loads(call.function.arguments)['q']}"  # type: ignore[union-attr]
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search",
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": call.function.arguments,  # type: ignore[union-attr]
            "gen_ai.tool.call.result": result,
        }
        with rec.tracer.start_as_current_span("execute_tool search", attributes=tool):
            pass
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": result},
        ]
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[SEARCH_TOOL])


def test_openai_v2_spans_to_file_to_evaluate_to_report(
    openai_instrumented: Recorder, tmp_path: Path
) -> None:
    rec = openai_instrumented
    path = tmp_path / "spans.otlp.jsonl"
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    batcher = BatchSpanProcessor(OtlpFileExporter(path))
    rec.provider.add_span_processor(batcher)
    with FakeOpenAIServer() as server:
        for question in ("paris", "rome"):
            openai_agent(rec, server, question)
    batcher.force_flush()
    rows = list(read_traces(path))
    assert [r["outputs"]["output"] for r in rows] == ["answer to paris", "answer to rome"]
    messages = rows[0]["outputs"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "search"
    assert messages[2]["content"] == "found paris"
    assert rows[0]["metadata"]["models"] == ["gpt-4o-mini"]
    assert rows[0]["metadata"]["usage"]["total_tokens"] > 0

    reference = [
        {"role": "user", "content": "?"},
        {"role": "assistant", "tool_calls": [{"function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "content": "?"},
        {"role": "assistant", "content": "?"},
    ]
    match = create_trajectory_match_evaluator(
        trajectory_match_mode="strict", tool_args_match_mode="ignore"
    )
    result = evaluate(read_traces(path, reference=lambda row: reference), [match], progress=False)
    assert result.aggregates["trajectory_strict_match"]["mean"] == 1.0
    html = Path(result.report_html(tmp_path / "report.html")).read_text()
    assert rows[0]["id"] in html and "trajectory_strict_match" in html


@pytest.fixture
def langchain_instrumented(recorder: Recorder) -> Iterator[Recorder]:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=recorder.provider)
    yield recorder
    instrumentor.uninstrument()


def _graph(server: FakeOpenAIServer) -> Any:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    @tool
    def search(q: str) -> str:
        """Search the web."""
        return f"results for {q}"

    model = ChatOpenAI(base_url=server.base_url, api_key="test-key", model="gpt-4o-mini")
    bound = model.bind_tools([search])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([search]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver())


def test_langgraph_spans_and_thread_give_equal_trajectory_results(
    langchain_instrumented: Recorder, tmp_path: Path
) -> None:
    from langchain_core.messages.utils import convert_to_openai_messages

    from openevals.graph_trajectory import (
        extract_langgraph_trajectory_from_thread,
        graph_trajectory_strict_match,
    )

    rec = langchain_instrumented
    with FakeOpenAIServer() as server:
        server.queue_chat(tool_calls=[{"name": "search", "arguments": {"q": "otel"}}])
        server.queue_chat("OpenTelemetry is a standard.")
        graph = _graph(server)
        config = {"configurable": {"thread_id": "t1"}}
        graph.invoke({"messages": [{"role": "user", "content": "what is otel?"}]}, config)
        thread = extract_langgraph_trajectory_from_thread(graph, config)
        state_messages = convert_to_openai_messages(graph.get_state(config).values["messages"])
    path = rec.write(tmp_path / "graph.otlp.pb", format="protobuf")
    (row,) = list(read_traces(path))

    assert row["outputs"]["steps"] == thread["outputs"]["steps"]
    assert row["outputs"]["results"] == thread["outputs"]["results"]
    assert row["inputs"] == thread["inputs"]
    assert graph_trajectory_strict_match(
        outputs=row["outputs"], reference_outputs=thread["outputs"]
    )["score"]
    # the conversation: the same tool calls and results as the thread's state
    match = create_trajectory_match_evaluator(trajectory_match_mode="strict")
    assert match(outputs=row["outputs"]["messages"], reference_outputs=state_messages)["score"]
    assert [m["role"] for m in row["outputs"]["messages"]] == [m["role"] for m in state_messages]
    # and the same scores when both are evaluated against one reference
    reference = {"steps": [["__start__", "agent", "tools", "agent"]], "results": [None]}
    from_spans = evaluate(
        read_traces(path, reference=lambda r: reference),
        [graph_trajectory_strict_match],
        progress=False,
    )
    from_thread = evaluate(
        [
            {
                "inputs": thread["inputs"],
                "outputs": thread["outputs"],
                "reference_outputs": reference,
            }
        ],
        [graph_trajectory_strict_match],
        progress=False,
    )
    assert from_spans.aggregates == from_thread.aggregates


def test_langgraph_subgraph_steps(langchain_instrumented: Recorder) -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    from openevals.graph_trajectory import extract_langgraph_trajectory_from_thread

    def say(text: str) -> Any:
        return lambda state: {"messages": [{"role": "assistant", "content": text}]}

    inner = StateGraph(MessagesState)
    inner.add_node("draft", say("draft"))
    inner.add_node("check", say("ok"))
    inner.add_edge(START, "draft")
    inner.add_edge("draft", "check")
    outer = StateGraph(MessagesState)
    outer.add_node("plan", say("plan"))
    outer.add_node("write", inner.compile())
    outer.add_edge(START, "plan")
    outer.add_edge("plan", "write")
    graph = outer.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t2"}}
    graph.invoke({"messages": [{"role": "user", "content": "go"}]}, config)
    thread = extract_langgraph_trajectory_from_thread(graph, config)
    (row,) = list(read_traces(langchain_instrumented.memory))
    expected = ["__start__", "plan", "write", "write:__start__", "write:draft", "write:check"]
    assert row["outputs"]["steps"] == [expected]
    assert thread["outputs"]["steps"][0] == expected


def test_openai_v2_agent_scored_online_with_results_linked(
    openai_instrumented: Recorder, tmp_path: Path
) -> None:
    from openevals.evaluation.online import OnlineEvaluator

    rec = openai_instrumented
    match = create_trajectory_match_evaluator(
        trajectory_match_mode="superset", tool_args_match_mode="ignore"
    )
    wanted = [
        {"role": "assistant", "tool_calls": [{"function": {"name": "search", "arguments": "{}"}}]}
    ]

    def searched(*, outputs: dict[str, Any]) -> Any:
        return match(outputs=outputs, reference_outputs=wanted)

    online = OnlineEvaluator(
        [searched], output=tmp_path / "prod.jsonl", tracer_provider=rec.provider, settle=0.0
    )
    rec.provider.add_span_processor(online)
    with FakeOpenAIServer() as server:
        openai_agent(rec, server, "paris")
    assert online.force_flush(10_000)
    (scored,) = list(online.results)
    assert scored["evaluations"]["searched"]["results"][0]["score"] is True
    spans = rec.spans()
    root = next(s for s in spans if s.name == "invoke_agent helper")
    (evaluation,) = [s for s in spans if s.name == "openevals.evaluation"]
    assert evaluation.context.trace_id == root.context.trace_id
    assert evaluation.parent.span_id == root.context.span_id  # type: ignore[union-attr]
    (event,) = evaluation.events
    assert event.name == "gen_ai.evaluation.result"
    assert event.attributes["gen_ai.evaluation.name"] == "trajectory_superset_match"
    assert event.attributes["gen_ai.evaluation.score.label"] == "pass"
    rows = [json.loads(line) for line in (tmp_path / "prod.jsonl").read_text().splitlines()]
    assert rows[1]["row_id"] == f"{root.context.trace_id:032x}"
