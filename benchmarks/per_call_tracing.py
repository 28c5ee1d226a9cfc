"""What the LangSmith switch check costs a direct evaluator call (issue 35).

    python benchmarks/per_call_tracing.py [--rounds 5]

Every evaluator call asks whether LangSmith must see it (tracing on, a LangSmith test case, a
pytest feedback hook). This times a direct ``exact_match(outputs=..., reference_outputs=...)``
call, each case in its own fresh interpreter with the ``LANGSMITH_*`` / ``LANGCHAIN_*`` tracing
variables removed:

1. ``shipped``: the package as it is;
2. ``no_check``: the same call with the check replaced by a constant ``False`` (the floor);
3. ``env_per_call``: the check as it was before this change, reading the four tracing
   variables from ``os.environ`` on every call (for the before/after figure);
4. ``langsmith_loaded``: shipped, with ``langsmith.run_helpers`` imported (as in a process that
   uses LangSmith or LangChain): the check then asks LangSmith's ``tracing_is_enabled``.

Prints microseconds per call (best of ``--rounds`` processes) and ``shipped / no_check``, which
must stay within 1.3x; the exit status is 1 when it does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.3
CASES = ("shipped", "no_check", "env_per_call", "langsmith_loaded")
_TRACING_VARS = (
    "LANGSMITH_TRACING",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGCHAIN_TRACING",
)


def _child(case: str) -> float:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from _workloads import per_call_seconds

    import openevals._contract as contract
    from openevals import exact_match

    if case == "no_check":
        contract._needs_langsmith = bool  # type: ignore[assignment]  # bool() is False
    elif case == "env_per_call":

        def env_per_call() -> bool:
            for name in _TRACING_VARS:
                value = os.environ.get(name)
                if value is not None and value.strip().lower() == "true":
                    return True
            return False

        contract._needs_langsmith = env_per_call
    elif case == "langsmith_loaded":
        import langsmith.run_helpers  # noqa: F401 - loaded, as in a LangSmith user's process

    # Short strings: the cheapest comparison, so the check's share of a call is the largest.
    return per_call_seconds(lambda: exact_match(outputs="Paris", reference_outputs="Paris"))


def _run(case: str) -> float:
    env = {k: v for k, v in os.environ.items() if k not in _TRACING_VARS}
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run(
        [sys.executable, __file__, "--child", case],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps({"seconds": _child(args.child)}))
        return 0
    best = {case: float("inf") for case in CASES}
    for _ in range(args.rounds):  # cases alternated, so background load hits each alike
        for case in CASES:
            best[case] = min(best[case], _run(case))
    for case in CASES:
        print(f"{case:<18} {best[case] * 1e6:6.3f} us/call")
    ratio = best["shipped"] / best["no_check"]
    before = best["env_per_call"] / best["no_check"]
    print(f"shipped / no_check = {ratio:.2f}x (target <= {TARGET}x); before: {before:.2f}x")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
