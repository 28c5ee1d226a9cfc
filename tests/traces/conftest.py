"""Spans made by the real OpenTelemetry SDK, and OTLP files written by its encoder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from openevals.traces.sdk import OtlpFileExporter


class Recorder:
    """A tracer provider whose finished spans stay in memory and can be written to files."""

    def __init__(self, service: str = "shop") -> None:
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": service}))
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        self.tracer = self.provider.get_tracer("tests")

    def spans(self) -> list[Any]:
        return list(self.memory.get_finished_spans())

    def write(self, path: Path, *, format: str = "json", batch: int | None = None) -> Path:
        """The finished spans written by :class:`OtlpFileExporter` (``batch`` spans per
        request; all in one by default)."""
        exporter = OtlpFileExporter(path, format=format)
        spans = self.spans()
        size = batch or max(len(spans), 1)
        for start in range(0, len(spans), size):
            exporter.export(spans[start : start + size])
        exporter.shutdown()
        return path


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    yield rec
    rec.provider.shutdown()


def agent_run(
    rec: Recorder, question: str = "weather in Paris?", *, semconv: str = "parts"
) -> None:
    """One agent trace: agent span, a model call asking for a tool, the tool, the answer.

    ``semconv``: ``"parts"`` (gen_ai.input/output.messages), ``"legacy"`` (gen_ai.prompt.N),
    ``"events"`` (gen_ai.*.message / gen_ai.choice span events) or ``"openinference"``.
    """
    import json

    tracer = rec.tracer
    call_args = {"city": "Paris"}
    with tracer.start_as_current_span(
        "invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent"}
    ):
        with tracer.start_as_current_span("chat gpt-4o-mini") as chat:
            chat.set_attribute("gen_ai.request.model", "gpt-4o-mini")
            chat.set_attribute("gen_ai.usage.input_tokens", 10)
            chat.set_attribute("gen_ai.usage.output_tokens", 5)
            if semconv == "parts":
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute(
                    "gen_ai.input.messages",
                    json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": question}]}]
                    ),
                )
                chat.set_attribute(
                    "gen_ai.output.messages",
                    json.dumps(
                        [
                            {
                                "role": "assistant",
                                "parts": [
                                    {
                                        "type": "tool_call",
                                        "id": "call_1",
                                        "name": "get_weather",
                                        "arguments": call_args,
                                    }
                                ],
                                "finish_reason": "tool_calls",
                            }
                        ]
                    ),
                )
            elif semconv == "legacy":
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.prompt.0.role", "user")
                chat.set_attribute("gen_ai.prompt.0.content", question)
                chat.set_attribute("gen_ai.completion.0.role", "assistant")
                chat.set_attribute("gen_ai.completion.0.tool_calls.0.id", "call_1")
                chat.set_attribute("gen_ai.completion.0.tool_calls.0.name", "get_weather")
                chat.set_attribute(
                    "gen_ai.completion.0.tool_calls.0.arguments", json.dumps(call_args)
                )
            elif semconv == "events":
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.add_event("gen_ai.user.message", {"content": question})
                chat.add_event(
                    "gen_ai.choice",
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": json.dumps(
                            {
                                "role": "assistant",
                                "tool_calls": [
                                    {
                                        "id": "call_1",
                                        "type": "function",
                                        "function": {
                                            "name": "get_weather",
                                            "arguments": json.dumps(call_args),
                                        },
                                    }
                                ],
                            }
                        ),
                    },
                )
            else:
                chat.set_attribute("openinference.span.kind", "LLM")
                chat.set_attribute("llm.model_name", "gpt-4o-mini")
                chat.set_attribute("llm.input_messages.0.message.role", "user")
                chat.set_attribute("llm.input_messages.0.message.content", question)
                chat.set_attribute("llm.output_messages.0.message.role", "assistant")
                prefix = "llm.output_messages.0.message.tool_calls.0.tool_call."
                chat.set_attribute(prefix + "id", "call_1")
                chat.set_attribute(prefix + "function.name", "get_weather")
                chat.set_attribute(prefix + "function.arguments", json.dumps(call_args))
        with tracer.start_as_current_span(
            "execute_tool get_weather",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps(call_args),
                "gen_ai.tool.call.result": "sunny",
            },
        ):
            pass
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.usage.input_tokens": 20,
                "gen_ai.usage.output_tokens": 3,
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny."}]}]
                ),
            },
        ):
            pass


EXPECTED_MESSAGES = [
    {"role": "user", "content": "weather in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "assistant", "content": "It is sunny."},
]
