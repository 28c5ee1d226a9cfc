"""The batch run of the soak test, in its own process (so the test can SIGKILL it).

``python -m tests.integration.soak_worker BASE_URL DATA OUTPUT TIMEOUT CONCURRENCY`` runs two
LLM judges over ``DATA`` with ``output=OUTPUT`` (resuming what an earlier, killed run recorded).
The judges use a caller's OpenAI client with a short timeout and ``max_retries=0``: every retry
is the judge's own.
"""

from __future__ import annotations

import sys

from openai import OpenAI

from openevals import evaluate
from openevals.llm import create_llm_as_judge
from openevals.prompts import CONCISENESS_PROMPT, CORRECTNESS_PROMPT


def main(argv: list[str]) -> int:
    base_url, data, output, timeout, concurrency = argv
    client = OpenAI(base_url=base_url, api_key="sk-soak", timeout=float(timeout), max_retries=0)
    judges = {
        "correctness": create_llm_as_judge(
            prompt=CORRECTNESS_PROMPT, judge=client, model="gpt-test", feedback_key="correctness"
        ),
        "conciseness": create_llm_as_judge(
            prompt=CONCISENESS_PROMPT, judge=client, model="gpt-test", feedback_key="conciseness"
        ),
    }
    result = evaluate(data, judges, output=output, concurrency=int(concurrency), progress=False)
    print(f"rows={len(result.rows)} errors={result.summary.get('errors')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
