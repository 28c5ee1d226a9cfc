"""A trace (or one agent span of it) as an evaluation row.

The row of a trace, with ``top`` its root span (or the agent span, one row per agent)::

    {
        "id": "<trace id>"  (or "<trace id>:<span id>" for an agent row),
        "inputs": <top span's input>,
        "outputs": {
            "messages": [...],   # the conversation: OpenAI messages, tool calls and results in order
            "output": <top span's output>,
            "steps": [[...]],    # the graph trajectory of the run (one turn)
            "results": [...],    # its result, as the graph-trajectory evaluators expect
        },
        "metadata": {"trace_id", "span_id", "name", "service", "start", "latency_ms",
                     "models", "usage", "errors", "span_count", "orphans", "duplicates"},
    }

so the trajectory evaluators (which read ``outputs["messages"]``), the graph-trajectory
evaluators (``outputs["steps"]`` / ``["results"]``) and judges (``inputs`` / ``outputs``) take it
unchanged.

**The conversation** is stitched from the model calls under ``top``, oldest first: each call's
input messages that the conversation does not hold yet, then its output messages; a tool span
whose result is not in the conversation yet adds a ``tool`` message after the assistant message
that asked for it (or, when no model call recorded the request, the request and the result).

**Steps.** For a LangGraph run (spans carrying LangGraph's ``metadata.langgraph_node``, as the
OpenInference LangChain instrumentation writes them), the steps are ``"__start__"`` and the nodes
that ran, subgraph nodes as ``"subgraph:node"`` - what
:func:`~openevals.graph_trajectory.extract_langgraph_trajectory_from_thread` gives for the same
run - and ``inputs`` is ``[{"__start__": <graph input>}]`` as there. Otherwise the steps are the
names of ``top``'s direct children.

**Input and output** of ``top``: ``input.value`` / ``output.value`` (OpenInference), the GenAI
messages (``gen_ai.input.messages`` / ``gen_ai.output.messages``), Traceloop's entity input and
output; failing those, the first model call's input messages and the last assistant message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from openevals.traces.conventions import (
    _call,
    decode,
    errors_of,
    langchain_message,
    llm_messages,
    model_of,
    span_io,
    span_kind,
    tool_call_of,
    usage_of,
)
from openevals.traces.model import Span, Trace

__all__ = ["agent_spans", "conversation", "graph_steps", "trace_row"]

_AGENT_KINDS = ("agent",)


def _key(message: Mapping[str, Any]) -> tuple[Any, ...]:
    role = message.get("role")
    if role == "tool" and message.get("tool_call_id"):
        return ("tool", message["tool_call_id"])
    calls = message.get("tool_calls")
    if calls:
        return (role, tuple(c.get("id") or c["function"]["name"] for c in calls))
    return (role, message.get("content"))


def conversation(trace: Trace, top: Span | None = None) -> list[dict[str, Any]]:
    """The messages of the model calls and tool spans under ``top`` (the whole trace when
    ``None``), in order (see the module docstring)."""
    messages: list[dict[str, Any]] = []
    keys: list[tuple[Any, ...]] = []
    seen: set[tuple[Any, ...]] = set()

    def add(message: dict[str, Any]) -> None:
        key = _key(message)
        messages.append(message)
        keys.append(key)
        seen.add(key)

    spans = trace.walk(top) if top is not None else trace.walk()
    for span in spans:
        kind = span_kind(span)
        if kind == "llm":
            given, answered = llm_messages(span)
            given_keys = [_key(m) for m in given]
            if given_keys[: len(keys)] == keys:
                for message in given[len(keys) :]:
                    add(message)
            else:
                for message, key in zip(given, given_keys, strict=True):
                    if key not in seen:
                        add(message)
            for message in answered:
                add(message)
        elif kind == "tool":
            _add_tool_result(messages, seen, tool_call_of(span), add)
    return messages


def _add_tool_result(
    messages: list[dict[str, Any]],
    seen: set[tuple[Any, ...]],
    call: dict[str, Any],
    add: Callable[[dict[str, Any]], None],
) -> None:
    """Add a tool span's result (and, when no model call asked for it, the request)."""
    call_id = call["id"]
    if call_id and ("tool", call_id) in seen:
        return
    asked = None
    for message in reversed(messages):
        for request in message.get("tool_calls") or ():
            same_id = call_id and request.get("id") == call_id
            if same_id or (not call_id and request["function"]["name"] == call["name"]):
                asked = request
                break
        if asked is not None:
            break
    if asked is None:
        asked = _call(call_id or None, call["name"], call["arguments"])
        add({"role": "assistant", "content": "", "tool_calls": [asked]})
    elif asked.get("id") and ("tool", asked["id"]) in seen:
        return  # matched by name to a request whose result the conversation holds
    result = call["result"]
    text = result if isinstance(result, str) else ("" if result is None else str(result))
    add({"role": "tool", "tool_call_id": asked["id"] or call["name"], "content": text})


# --------------------------------------------------------------------------- graph steps


def _node_name(span: Span) -> str | None:
    metadata = decode(span.attributes.get("metadata"))
    if isinstance(metadata, Mapping) and metadata.get("langgraph_node") == span.name:
        return span.name
    return None


def graph_steps(trace: Trace, top: Span) -> tuple[list[str], Span | None]:
    """The steps of the run under ``top`` and the LangGraph graph span they came from (``None``
    when it is not a LangGraph run: then the names of ``top``'s children).

    Spans that are not nodes (model calls, the wrapper span of a compiled subgraph) are looked
    through; the nodes of a subgraph follow its node as ``"node:__start__"``,
    ``"node:inner"``... (iterative: any depth)."""
    steps: list[str] = []
    graph: Span | None = None
    started: set[str] = set()
    stack: list[tuple[Span, str, str | None]] = [(top, "", None)]
    while stack:
        span, prefix, owner = stack.pop()
        inner_prefix, inner_owner = prefix, owner
        node = _node_name(span) if span is not top else None
        if node is not None:
            if owner is None and graph is None and span.parent_id is not None:
                graph = trace.spans.get(span.parent_id)
            if owner is not None and owner not in started:  # the first node of a subgraph
                started.add(owner)
                steps.append(prefix + "__start__")
            steps.append(prefix + node)
            inner_prefix, inner_owner = prefix or f"{node}:", span.span_id
        for child in reversed(trace.children(span)):
            stack.append((child, inner_prefix, inner_owner))
    if steps:
        return ["__start__", *steps], graph
    return [child.name for child in trace.children(top)], None


# --------------------------------------------------------------------------- rows


def agent_spans(trace: Trace) -> list[Span]:
    """The agent spans of a trace (``invoke_agent`` / OpenInference ``AGENT``), outermost
    first; the root span when there is none."""
    found = [span for span in trace.walk() if span_kind(span) in _AGENT_KINDS]
    return found or [trace.root]


def _last_answer(messages: list[dict[str, Any]]) -> Any:
    for message in reversed(messages):
        if message["role"] == "assistant" and not message.get("tool_calls"):
            return message["content"]
    return None


def _plain_state(value: Any) -> Any:
    """A graph state's ``messages`` (LangChain messages as serialised into spans) as OpenAI
    messages; any other value as it is."""
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        messages = [langchain_message(m) or m for m in value["messages"]]
        return {**value, "messages": messages}
    return value


def _result_of(output: Any) -> Any:
    """A run's result as the thread extractor gives it: only the last message of a state."""
    if isinstance(output, Mapping) and isinstance(output.get("messages"), list):
        return {"messages": output["messages"][-1:]}
    return output


def _facts(trace: Trace, top: Span) -> dict[str, Any]:
    models: set[str] = set()
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    counted = False
    errors: list[dict[str, Any]] = []
    count = 0
    for span in trace.walk(top):
        count += 1
        errors.extend(errors_of(span))
        if span_kind(span) != "llm":
            continue
        model = model_of(span)
        if model:
            models.add(model)
        tokens = usage_of(span)
        if tokens is not None:
            counted = True
            for key in usage:
                usage[key] += tokens[key]
    if not counted:
        own = usage_of(top)
        if own is not None:
            usage, counted = own, True
    return {
        "trace_id": trace.trace_id,
        "span_id": top.span_id,
        "name": top.name,
        "service": top.service,
        "start": datetime.fromtimestamp(top.start / 1e9, tz=timezone.utc).isoformat(),
        "latency_ms": top.duration_ms,
        "models": sorted(models),
        "usage": usage if counted else None,
        "errors": errors,
        "span_count": count,
        "orphans": trace.orphans,
        "duplicates": trace.duplicates,
    }


def trace_row(trace: Trace, top: Span | None = None) -> dict[str, Any]:
    """The row of ``trace`` (``top`` = its root span) or of one agent span of it."""
    span = top if top is not None else trace.root
    messages = conversation(trace, span)
    inputs, output = span_io(span)
    inputs, output = _plain_state(inputs), _plain_state(output)
    if inputs is None:
        first = next((s for s in trace.walk(span) if span_kind(s) == "llm"), None)
        given = llm_messages(first)[0] if first is not None else []
        inputs = {"messages": given} if given else None
    if output is None:
        output = _last_answer(messages)
    steps, graph = graph_steps(trace, span)
    if graph is not None:
        graph_input = _plain_state(decode(graph.attributes.get("input.value")))
        inputs = [{"__start__": graph_input}]
        result = _result_of(_plain_state(decode(graph.attributes.get("output.value"))))
    else:
        result = _result_of(output)
    row_id = trace.trace_id if top is None else f"{trace.trace_id}:{span.span_id}"
    return {
        "id": row_id,
        "inputs": inputs,
        "outputs": {"messages": messages, "output": output, "steps": [steps], "results": [result]},
        "metadata": _facts(trace, span),
    }
