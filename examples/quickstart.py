"""A tour of every openevals evaluator on small inline data, fully offline.

Run with ``make demo`` (or ``python examples/quickstart.py`` inside the project's venv).

LLM-as-judge evaluators need a model. So that this tour runs without network or API keys, it starts
the scripted OpenAI-compatible server shipped in ``openevals.testing`` on 127.0.0.1
and points the judges at it: the *verdicts* are scripted, everything else (prompt rendering,
structured output, parsing, result shapes) is the real code path. With a real model you would pass
``model="openai:gpt-4.1-mini"`` instead of ``judge=...``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def show(title: str, result: Any) -> None:
    print(f"\n== {title}")
    text = json.dumps(result, indent=2, default=str, ensure_ascii=False)
    print(text if len(text) < 1600 else text[:1600] + "\n  ...")


def deterministic() -> None:
    from openevals import exact_match, levenshtein_distance
    from openevals.json import create_json_match_evaluator

    show("exact_match", exact_match(outputs={"a": 1, "b": 2}, reference_outputs={"b": 2, "a": 1}))
    show(
        "levenshtein_distance",
        levenshtein_distance(outputs="The correct answer", reference_outputs="The correct answer!"),
    )
    evaluator = create_json_match_evaluator(aggregator="average", list_aggregator="average")
    show(
        "json match (order-independent pairing of list elements)",
        evaluator(
            outputs=[{"name": "Bob", "age": 31}, {"name": "Alice", "age": 30}],
            reference_outputs=[{"name": "Alice", "age": 30}, {"name": "Bob", "age": 30}],
        ),
    )


def trajectories() -> None:
    from openevals.trajectory import create_trajectory_match_evaluator

    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"function": {"name": name, "arguments": json.dumps(args)}}

    outputs = [
        {"role": "user", "content": "Weather in SF and NYC?"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", city="NYC")]},
        {"role": "tool", "content": "Sunny"},
        {"role": "assistant", "content": "", "tool_calls": [call("get_weather", city="SF")]},
        {"role": "tool", "content": "Foggy"},
        {"role": "assistant", "content": "SF is foggy, NYC is sunny."},
    ]
    reference = [
        {"role": "user", "content": "Weather in SF and NYC?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [call("get_weather", city="SF"), call("get_weather", city="NYC")],
        },
    ]
    for mode in ("unordered", "strict"):
        evaluator = create_trajectory_match_evaluator(trajectory_match_mode=mode)
        show(f"trajectory match ({mode})", evaluator(outputs=outputs, reference_outputs=reference))


def retrieval() -> None:
    from openevals.rag import create_retrieval_evaluator

    evaluator = create_retrieval_evaluator(k=3)
    show(
        "retrieval metrics @3",
        evaluator(outputs=["doc7", "doc2", "doc9", "doc1"], reference_outputs=["doc2", "doc1"]),
    )


def code() -> None:
    from openevals.code.mypy import create_mypy_evaluator

    evaluator = create_mypy_evaluator(code_extraction_strategy="markdown_code_blocks")
    answer = "Here is the function:\n\n```python\ndef add(a: int, b: int) -> int:\n    return a + b\n\nadd(1, '2')\n```\n"
    show("mypy on code extracted from markdown", evaluator(outputs=answer))


def pyright() -> None:
    from openevals.code.pyright import create_pyright_evaluator

    evaluator = create_pyright_evaluator()
    samples = ["x: int = 1\n", "def f(a: int) -> str:\n    return a\n"]
    show("pyright, two samples checked in one process (batch)", evaluator.batch(samples))


def steps() -> None:
    from openevals.rag import create_steps_evaluator

    reference = [
        [{"name": "search", "args": {"q": "Oslo"}}],
        [
            {
                "name": "lookup",
                "args": {"id": 7},
                "output": '{"population": 709000}',
                "output_media_type": "application/json",
            }
        ],
    ]
    actual = [
        {"name": "search", "args": {"q": "Oslo"}, "id": "c1", "status": "success", "output": "[7]"},
        {
            "name": "lookup",
            "args": {"id": 7},
            "id": "c2",
            "status": "success",
            "output": '{"population": 709000}',
        },
    ]
    show(
        "agent step scoring (graphrag-eval)",
        create_steps_evaluator()(outputs=actual, reference_outputs=reference),
    )


def embeddings() -> None:
    from openevals.string import create_embedding_similarity_evaluator

    evaluator = create_embedding_similarity_evaluator(model="local:all-MiniLM-L6-v2")
    show(
        "embedding similarity (offline MiniLM)",
        evaluator(
            outputs="The cat sat on the mat.", reference_outputs="A cat was sitting on a rug."
        ),
    )


def simulation() -> None:
    from openevals.simulators import run_multiturn_simulation
    from openevals.trajectory import create_trajectory_match_evaluator

    def app(message: dict[str, Any], *, thread_id: str, **kwargs: Any) -> str:
        text = message["content"].lower()
        if "refund" in text:
            return "I can help with that. What is your order number?"
        if "order" in text:
            return "Thanks! Your refund for order 1234 is on its way."
        return "Glad I could help. Anything else?"

    result = run_multiturn_simulation(
        app=app,
        user=["I'd like a refund.", "My order number is 1234.", "That's all, thanks!"],
        max_turns=3,
        trajectory_evaluators=[create_trajectory_match_evaluator(trajectory_match_mode="superset")],
        reference_outputs=[],
    )
    show(
        "three-turn simulation",
        {
            "trajectory": [f"{m['role']}: {m['content']}" for m in result["trajectory"]],
            "evaluator_results": result["evaluator_results"],
        },
    )


def llm_judges() -> None:
    from openevals.llm import create_async_llm_as_judge, create_llm_as_judge
    from openevals.prompts import CONCISENESS_PROMPT, CORRECTNESS_PROMPT
    from openevals.rag import create_faithfulness_evaluator
    from openevals.testing import FakeOpenAIServer, chat_model

    with FakeOpenAIServer() as server:
        judge = chat_model(server)
        server.queue_chat(
            json={
                "reasoning": "The answer states the correct figure and nothing else.",
                "score": True,
            }
        )
        correctness = create_llm_as_judge(
            prompt=CORRECTNESS_PROMPT, feedback_key="correctness", judge=judge
        )
        show(
            "LLM-as-judge with CORRECTNESS_PROMPT (scripted verdict)",
            correctness(
                inputs="How much has the price of doodads changed in the past year?",
                outputs="Doodads have decreased in price by 50% in the past year.",
                reference_outputs="The price of doodads has decreased by 50% in the past year.",
            ),
        )
        server.queue_chat(json={"reasoning": "Long-winded preamble.", "score": 0.4})
        conciseness = create_async_llm_as_judge(
            prompt=CONCISENESS_PROMPT, feedback_key="conciseness", judge=judge, continuous=True
        )
        show(
            "async LLM-as-judge, continuous score",
            asyncio.run(
                conciseness(
                    inputs="What color is the sky?",
                    outputs="Great question! Let me think... the sky is blue.",
                )
            ),
        )
        server.queue_chat(
            json={
                "statements": [
                    {
                        "statement": "Python is a programming language.",
                        "reason": "stated",
                        "supported": True,
                    },
                    {
                        "statement": "Python was created by George Lucas.",
                        "reason": "context says Guido",
                        "supported": False,
                    },
                ]
            }
        )
        faithfulness = create_faithfulness_evaluator(judge=judge)
        show(
            "faithfulness (statements checked against the context)",
            faithfulness(
                inputs="Who created Python?",
                outputs="Python is a programming language created by George Lucas.",
                context=["Python was created by Guido van Rossum in the late 1980s."],
            ),
        )


def more_llm_judges() -> None:
    """Trajectory, code, JSON-rubric and claim-level judges, and an LLM-simulated user."""
    from openevals.code.llm import create_code_llm_as_judge
    from openevals.json import create_json_match_evaluator
    from openevals.prompts import CODE_CORRECTNESS_PROMPT, TRAJECTORY_ACCURACY_PROMPT
    from openevals.rag import create_answer_correctness_evaluator
    from openevals.simulators import create_llm_simulated_user, run_multiturn_simulation
    from openevals.testing import FakeOpenAIServer, chat_model
    from openevals.trajectory import create_trajectory_llm_as_judge

    with FakeOpenAIServer() as server:
        judge = chat_model(server)
        server.queue_chat(
            json={"reasoning": "Looked up the weather, then answered.", "score": True}
        )
        trajectory_judge = create_trajectory_llm_as_judge(
            prompt=TRAJECTORY_ACCURACY_PROMPT, judge=judge
        )
        show(
            "trajectory LLM judge",
            trajectory_judge(
                outputs=[
                    {"role": "user", "content": "Weather in SF?"},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"function": {"name": "get_weather", "arguments": '{"city": "SF"}'}}
                        ],
                    },
                    {"role": "tool", "content": "Foggy, 14C"},
                    {"role": "assistant", "content": "It is foggy and 14C in SF."},
                ]
            ),
        )
        server.queue_chat(json={"reasoning": "Correct and idiomatic.", "score": True})
        code_judge = create_code_llm_as_judge(
            prompt=CODE_CORRECTNESS_PROMPT,
            judge=judge,
            code_extraction_strategy="markdown_code_blocks",
        )
        show(
            "code LLM judge (code extracted from markdown first)",
            code_judge(
                inputs="Add two ints.",
                outputs="```python\ndef add(a: int, b: int) -> int:\n    return a + b\n```",
            ),
        )
        server.queue_chat(
            json={"summary": {"reasoning": "Mentions the refund amount.", "score": True}}
        )
        rubric_match = create_json_match_evaluator(
            rubric={"summary": "Does it mention the refund amount?"},
            judge=judge,
            aggregator="average",
        )
        show(
            "JSON match with an LLM-graded key",
            rubric_match(
                outputs={"intent": "refund", "summary": "Customer wants their $40 back."},
                reference_outputs={"intent": "refund", "summary": "Refund request for $40."},
            ),
        )
        server.queue_chat(
            json={
                "reference_claims": [
                    "Paris is the capital of France.",
                    "Paris has about 2 million inhabitants.",
                ],
                "answer_claims": ["Paris is the capital of France."],
                "reasoning": "The population claim is missing.",
                "matches": [{"reference_index": 0, "answer_index": 0}],
            }
        )
        correctness = create_answer_correctness_evaluator(judge=judge)
        show(
            "claim-level answer correctness",
            correctness(
                inputs="Tell me about Paris.",
                outputs="Paris is the capital of France.",
                reference_outputs="Paris is the capital of France and has about 2 million inhabitants.",
            ),
        )
        server.set_default_chat("Can you also tell me the opening hours?")
        user = create_llm_simulated_user(
            system="You are a customer asking about a store.",
            client=judge,
            fixed_responses=["Where is the store?"],
        )
        result = run_multiturn_simulation(
            app=lambda message, **kw: "On Main Street.", user=user, max_turns=2
        )
        show(
            "LLM-simulated user, two turns",
            [f"{m['role']}: {m['content']}" for m in result["trajectory"]],
        )


def main() -> None:
    deterministic()
    trajectories()
    retrieval()
    steps()
    code()
    pyright()
    simulation()
    llm_judges()
    more_llm_judges()
    embeddings()
    print("\nAll evaluators ran offline.")


if __name__ == "__main__":
    main()
