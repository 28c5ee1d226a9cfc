"""Subprocess side of the fault test (tests/evaluation/test_fault.py).

    python -m tests.evaluation.fault_worker BASE_URL OUTPUT ROWS [REPORT]

Runs two LLM judges (sync client with one retry, async client without retries) and a deliberately
leaky evaluator (its errors quote the API key) over ROWS rows, writing OUTPUT; prints the summary
as one JSON line. The API key comes from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import openai

from openevals._judge.core import RetryPolicy
from openevals._judge.shell import judge_core
from openevals.evaluation import evaluate
from openevals.llm import create_async_llm_as_judge, create_llm_as_judge

PROMPT = "Question: {inputs}\nAnswer: {outputs}\nIs the answer correct?"


def leaky(*, inputs: dict[str, Any], **kwargs: Any) -> bool:
    """Fails on every 20th row with a message that quotes the credentials."""
    if inputs["n"] % 20 == 7:
        key = os.environ["OPENAI_API_KEY"]
        raise PermissionError(f"request refused (api_key={key}; Authorization: Bearer {key})")
    return True


def main() -> int:
    base_url, output, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    report = sys.argv[4] if len(sys.argv) > 4 else None
    key = os.environ["OPENAI_API_KEY"]
    sync_judge = create_llm_as_judge(
        prompt=PROMPT,
        feedback_key="correct",
        judge=openai.OpenAI(base_url=base_url, api_key=key, max_retries=0),
        model="gpt-test",
    )
    judge_core(sync_judge).retry = RetryPolicy(max_retries=1, initial_delay=0.001, max_delay=0.01)
    async_judge = create_async_llm_as_judge(
        prompt=PROMPT,
        feedback_key="helpful",
        judge=openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0),
        model="gpt-test",
    )
    judge_core(async_judge).retry = RetryPolicy(max_retries=0)
    data = [
        {"id": f"row-{n}", "inputs": {"n": n, "question": f"{n} + {n}?"}, "outputs": str(2 * n)}
        for n in range(rows)
    ]
    result = evaluate(
        data,
        {"correct": sync_judge, "helpful": async_judge, "leaky": leaky},
        output=output,
        concurrency=8,
        progress=False,
    )
    if report:
        result.report_html(report)
    print(json.dumps(result.summary, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
