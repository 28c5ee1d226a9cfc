"""Peak memory of a long batch run with a judge: rows from JSONL, a zero-latency async fake
judge and ``exact_match``, through ``evaluate`` (the per-row path every judge run takes).

The judge is a scripted async evaluator flagged as a judge (``EvaluatorInfo(judge=True)``): it
answers at once, so the figures are the runner's own cost (records, statistics, the row store),
not a model's or an HTTP client's. The fake OpenAI-compatible server is left out on purpose: a
million HTTP round trips would measure the client and take hours on the shared machine.

Each run is a fresh process; peak memory is its maximum resident set (``ru_maxrss``), the
baseline is the same process after importing and reading nothing. Run:
``python benchmarks/judge_run_memory.py [--rows 1000000] [--output]`` (``--output`` also writes
the run's ``output=`` JSONL file, as a resumable run does).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def write_data(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            answer = f"answer {i % 97}"
            record = {
                "id": f"q{i}",
                "inputs": {"question": f"What is item {i}?"},
                "outputs": answer,
                "reference_outputs": f"answer {i % 89}",
            }
            handle.write(json.dumps(record) + "\n")


def child(data: Path, output: Path | None) -> None:
    sys.path.insert(0, str(ROOT))
    from typing import Any

    from openevals import evaluate, exact_match
    from openevals._contract import EvaluatorInfo, attach_info

    async def fake_judge(*, inputs: Any, outputs: Any, **_: Any) -> dict[str, Any]:
        return {"key": "helpful", "score": len(outputs) % 2 == 0, "comment": "scripted"}

    judge = attach_info(fake_judge, EvaluatorInfo(run_name="fake_judge", judge=True, is_async=True))
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    result = evaluate(
        str(data), [judge, exact_match], progress=False, concurrency=32, output=output
    )
    seconds = time.perf_counter() - start
    rows = result.rows
    last = rows[len(rows) - 1]
    print(
        json.dumps(
            {
                "rows": len(rows),
                "rows_type": type(rows).__name__,
                "last_index": last["index"],
                "seconds": seconds,
                "baseline_mb": baseline,
                "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "helpful_mean": result.aggregates["helpful"]["mean"],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--output", action="store_true")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[0]), None if args.child[1] == "-" else Path(args.child[1]))
        return
    with tempfile.TemporaryDirectory(prefix="openevals-bench-") as tmp:
        data = Path(tmp) / "rows.jsonl"
        write_data(data, args.rows)
        output = str(Path(tmp) / "run.jsonl") if args.output else "-"
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(data), output],
            capture_output=True,
            text=True,
            check=True,
        )
        figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"{figures['rows']:,} rows ({figures['rows_type']}), output file: "
        f"{'yes' if args.output else 'no'}: {figures['seconds']:.0f} s "
        f"({figures['rows'] / figures['seconds']:,.0f} rows/s), peak RSS "
        f"{figures['peak_mb']:.0f} MB (after imports: {figures['baseline_mb']:.0f} MB), "
        f"helpful mean {figures['helpful_mean']:.4f}"
    )


if __name__ == "__main__":
    main()
