"""The batch runner's own cost on cheap deterministic evaluators, against its floor (issue 25).

    python benchmarks/runner_overhead.py [--rows 100000] [--evaluators 2] [--per-row]
                                         [--memory-rows 1000000] [--skip-memory] [--repeat 3]

Rows hold 5-word strings. For ``--evaluators`` 2 (exact match, Levenshtein) or 4 (the same two
again under other names):

1. the floor: calling the evaluators in a plain loop;
2. ``evaluate(rows, evaluators, progress=False)``, and its ratio to the floor (target <= 1.5x),
   after a warm-up call on ten rows (the runner's modules are imported on first use);
3. the output floor: the plain loop + ``json.dumps`` of one record per row x evaluator (the same
   fields the runner writes) + writing them to a file;
4. ``evaluate(..., output=file)`` and its ratio to the output floor (target <= 1.5x);
5. peak RSS of ``memory-rows`` rows x the evaluators streamed from a JSONL file, measured in a
   fresh interpreter (``VmHWM``; target <= 400 MB).

``--per-row`` forces the per-row path (the columnar path off) for a before/after comparison.
Figures 1-4 are each the best of ``--repeat`` rounds (default 3), the rounds alternated.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]


def _rows(n: int) -> list[dict[str, Any]]:
    rng = random.Random(7)

    def text() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(5))

    rows = []
    for i in range(n):
        out = text()
        rows.append(
            {"inputs": {"q": i}, "outputs": out, "reference_outputs": out if i % 3 else text()}
        )
    return rows


def _evaluators(count: int) -> dict[str, Any]:
    from openevals import exact_match, levenshtein_distance

    pool = {"exact_match": exact_match, "levenshtein_distance": levenshtein_distance}
    if count == 4:
        pool = {
            **pool,
            "exact_match_2": exact_match,
            "levenshtein_distance_2": levenshtein_distance,
        }
    return pool


def _floor(rows: list[dict[str, Any]], evaluators: dict[str, Any]) -> float:
    fns = list(evaluators.values())
    start = time.perf_counter()
    for row in rows:
        for fn in fns:
            fn(outputs=row["outputs"], reference_outputs=row["reference_outputs"])
    return time.perf_counter() - start


def _output_floor(rows: list[dict[str, Any]], evaluators: dict[str, Any], path: Path) -> float:
    items = list(evaluators.items())
    start = time.perf_counter()
    with path.open("w", encoding="utf-8") as fh:
        for index, row in enumerate(rows):
            for name, fn in items:
                result = fn(outputs=row["outputs"], reference_outputs=row["reference_outputs"])
                record = {
                    "kind": "eval",
                    "row_id": str(index),
                    "index": index,
                    "evaluator": name,
                    "status": "success",
                    "results": [result],
                    "error": None,
                    "elapsed_sec": 0.0,
                    "usage": None,
                    "cost_usd": None,
                    "model": None,
                    "cache": None,
                }
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return time.perf_counter() - start


def _evaluate(
    rows: list[dict[str, Any]], evaluators: dict[str, Any], output: Path | None, per_row: bool
) -> float:
    import openevals.evaluation.engines.local as runner
    from openevals import evaluate

    if per_row:
        runner.columnar_fits = lambda run: False  # type: ignore[assignment]
    evaluate(rows[:10], evaluators, progress=False)  # warm-up: the runner's modules are imported
    start = time.perf_counter()
    evaluate(rows, evaluators, progress=False, output=output)
    return time.perf_counter() - start


def _peak_mb() -> float:
    """This process's peak resident memory in MB. On Linux, ``VmHWM`` of ``/proc/self/status``:
    ``ru_maxrss`` survives ``exec`` and would report the parent's size at ``fork`` (the parent
    here holds the timed rows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_child(path: str, count: int) -> None:
    """Child mode: evaluate the JSONL file and print the peak RSS in MB."""
    from openevals import evaluate

    start = time.perf_counter()
    result = evaluate(path, _evaluators(count), progress=False)
    elapsed = time.perf_counter() - start
    peak = _peak_mb()
    print(json.dumps({"rows": len(result.rows), "peak_mb": peak, "seconds": elapsed}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--evaluators", type=int, choices=(2, 4), default=2)
    parser.add_argument("--per-row", action="store_true")
    parser.add_argument("--memory-rows", type=int, default=1_000_000)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best of each is kept")
    parser.add_argument("--memory-child", nargs=2, metavar=("FILE", "COUNT"))
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]))
        return
    rows = _rows(args.rows)
    evaluators = _evaluators(args.evaluators)
    work = Path(tempfile.mkdtemp(prefix="openevals-overhead-"))
    path = "per-row" if args.per_row else "default"
    print(f"{args.rows:,} rows x {args.evaluators} evaluators ({path} path)")
    out = work / "run.jsonl"

    def fresh_output() -> float:
        out.unlink(missing_ok=True)  # a file left by the last round would be resumed
        return _evaluate(rows, evaluators, out, args.per_row)

    # Each figure is the best of --repeat rounds, the rounds of the four alternated, so that
    # background load (this is a shared 2-core machine) hits them alike.
    rounds = [
        (
            _floor(rows, evaluators),
            _evaluate(rows, evaluators, None, args.per_row),
            _output_floor(rows, evaluators, work / "floor.jsonl"),
            fresh_output(),
        )
        for _ in range(args.repeat)
    ]
    floor, run, out_floor, run_out = (min(column) for column in zip(*rounds, strict=True))
    print(f"  plain loop (floor)                  {floor:7.2f} s")
    print(f"  evaluate()                          {run:7.2f} s  {run / floor:5.2f}x the floor")
    print(f"  loop + json.dumps + write (floor)   {out_floor:7.2f} s")
    print(
        f"  evaluate(output=)                   {run_out:7.2f} s  "
        f"{run_out / out_floor:5.2f}x the floor"
    )
    if not args.skip_memory:
        data = work / "data.jsonl"
        with data.open("w", encoding="utf-8") as fh:
            for row in _rows(args.memory_rows):
                fh.write(json.dumps(row) + "\n")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        child = subprocess.run(
            [sys.executable, __file__, "--memory-child", str(data), str(args.evaluators)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        print(
            f"  {figures['rows']:,} rows from JSONL: peak RSS {figures['peak_mb']:.0f} MB, "
            f"{figures['seconds']:.1f} s"
        )


if __name__ == "__main__":
    main()
