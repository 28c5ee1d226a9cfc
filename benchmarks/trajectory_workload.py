"""Trajectory-matching workload: long agent trajectories, timed per evaluation.

``build(n_calls)`` returns, for each trajectory match mode, an ``(outputs, reference_outputs)``
pair of OpenAI-style message lists holding about ``n_calls`` tool calls per side (assistant
messages with two calls each, a tool message answering every call, argument dicts of 3-5 keys).
Every pair is constructed to match in its mode, so an evaluator has to look at every call:

* ``strict``: same layout; the two calls inside each assistant message are swapped and the texts
  differ (strict mode ignores content).
* ``unordered``: the reference calls shuffled across the output messages.
* ``superset``: the shuffled reference calls plus 10% extra output calls.
* ``subset``: 90% of the reference calls, shuffled.

Only plain JSON data and the public factory are used, so the same module times any
``openevals``-compatible package: ``python benchmarks/trajectory_workload.py`` prints ms/eval for
every trajectory mode and tool-args mode with whatever ``openevals`` the interpreter imports.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from typing import Any

TOOLS = (
    "search",
    "get_weather",
    "lookup_user",
    "fetch_page",
    "send_email",
    "query_db",
    "translate",
    "calendar",
)
LANGS = ("en", "fr", "de")
TRAJECTORY_MODES = ("strict", "unordered", "subset", "superset")
ARGS_MODES = ("exact", "ignore", "subset", "superset")

Message = dict[str, Any]
Call = tuple[str, dict[str, Any]]


def _args(i: int) -> dict[str, Any]:
    args: dict[str, Any] = {"query": f"request number {i}", "limit": i % 10, "lang": LANGS[i % 3]}
    if i % 2:
        args["page"] = i % 7
    if i % 3 == 0:
        args["filters"] = {"year": 2000 + i % 25, "tags": ["a", "b"][: 1 + i % 2]}
    return args


def _calls(n: int, offset: int = 0) -> list[Call]:
    return [(TOOLS[(i * 7) % len(TOOLS)], _args(i)) for i in range(offset, offset + n)]


def _trajectory(calls: list[Call], *, tag: str = "") -> list[Message]:
    """User question, assistant messages with two calls each (+ tool answers), final answer."""
    messages: list[Message] = [{"role": "user", "content": f"Handle the batch{tag}."}]
    for start in range(0, len(calls), 2):
        pair = calls[start : start + 2]
        ids = [f"call_{start + k}" for k in range(len(pair))]
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for call_id, (name, args) in zip(ids, pair, strict=True)
                ],
            }
        )
        for call_id, (name, _) in zip(ids, pair, strict=True):
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": f"{name} result{tag}"}
            )
    messages.append({"role": "assistant", "content": f"All done{tag}."})
    return messages


def build(n_calls: int = 1000, *, seed: int = 0) -> dict[str, tuple[list[Message], list[Message]]]:
    """``{mode: (outputs, reference_outputs)}`` with ~``n_calls`` tool calls per trajectory."""
    rng = random.Random(seed)
    reference_calls = _calls(n_calls)
    reference = _trajectory(reference_calls)

    swapped = [c for k in range(0, n_calls, 2) for c in reversed(reference_calls[k : k + 2])]
    shuffled = reference_calls[:]
    rng.shuffle(shuffled)
    extra = _calls(max(1, n_calls // 10), offset=n_calls)
    with_extra = shuffled + extra
    rng.shuffle(with_extra)
    fewer = rng.sample(reference_calls, n_calls - max(1, n_calls // 10))

    return {
        "strict": (_trajectory(swapped, tag=" (output)"), reference),
        "unordered": (_trajectory(shuffled), reference),
        "superset": (_trajectory(with_extra), reference),
        "subset": (_trajectory(fewer), reference),
    }


def time_evaluator(
    evaluator: Callable[..., Any],
    outputs: Any,
    reference_outputs: Any,
    *,
    budget_s: float = 0.5,
    max_runs: int = 50,
) -> tuple[float, Any]:
    """Best wall time of one evaluation in milliseconds (and the last result).

    Runs at least three evaluations (fewer only when one run already exceeds the budget), at
    most ``max_runs``, stopping once ``budget_s`` seconds are spent.
    """
    best = float("inf")
    result: Any = None
    spent = 0.0
    runs = 0
    while runs < max_runs and (runs < 3 or spent < budget_s):
        start = time.perf_counter()
        result = evaluator(outputs=outputs, reference_outputs=reference_outputs)
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
        if elapsed > budget_s:
            break
    return best * 1000.0, result


def run(
    n_calls: int = 1000,
    *,
    factory: Callable[..., Callable[..., Any]] | None = None,
    args_modes: tuple[str, ...] = ARGS_MODES,
) -> list[dict[str, Any]]:
    """Time every trajectory mode x tool-args mode; one row per combination."""
    if factory is None:
        from openevals import create_trajectory_match_evaluator as factory
    pairs = build(n_calls)
    rows = []
    for mode in TRAJECTORY_MODES:
        outputs, reference = pairs[mode]
        for args_mode in args_modes:
            evaluator = factory(trajectory_match_mode=mode, tool_args_match_mode=args_mode)
            ms, result = time_evaluator(evaluator, outputs, reference)
            rows.append({"mode": mode, "args_mode": args_mode, "ms": ms, "score": result["score"]})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1000, help="tool calls per trajectory")
    options = parser.parse_args(argv)
    import openevals

    print(
        f"openevals {getattr(openevals, '__version__', '?')} from {openevals.__file__}; "
        f"{options.calls} tool calls per trajectory"
    )
    print(f"{'mode':<10} {'args mode':<9} {'ms/eval':>10}  score")
    for row in run(options.calls):
        print(f"{row['mode']:<10} {row['args_mode']:<9} {row['ms']:>10.2f}  {row['score']}")


if __name__ == "__main__":
    main()
