"""Comparing two large run files: openevals.compare against the floor (reading both files with
the standard json module, line by line), measured in the same run, with peak memory.

    python benchmarks/compare_workload.py --rows 1000000 --keys 5

Each file has one ``row`` line and one ``eval`` line (one evaluator, ``--keys`` results: half
boolean, half continuous) per row, as ``evaluate(..., output=...)`` writes them. Each timing runs
in a fresh process, so peak RSS is its own.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_FLOOR = """
import json, sys, time, resource
start = time.perf_counter()
for path in sys.argv[1:3]:
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            json.loads(line)
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""

_OURS = """
import sys, time, resource
sys.path.insert(0, sys.argv[3])
from openevals import compare
start = time.perf_counter()
comparison = compare(sys.argv[1], sys.argv[2])
elapsed = time.perf_counter() - start
assert len(comparison.keys) == int(sys.argv[4]), comparison
print(elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def write_run(path: Path, rows: int, keys: int, shift: float, seed: int) -> None:
    rnd = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"kind": "run", "row_id": "", "evaluators": ["judge"]}) + "\n")
        for i in range(rows):
            row_id = f"row-{i}"
            out.write(
                json.dumps({"kind": "row", "row_id": row_id, "index": i, "outputs": f"answer {i}"})
                + "\n"
            )
            results = []
            for k in range(keys):
                if k % 2 == 0:
                    score: object = rnd.random() < 0.7 + shift
                else:
                    score = round(min(1.0, rnd.random() + shift), 4)
                results.append({"key": f"k{k}", "score": score, "comment": None, "metadata": None})
            line = {
                "kind": "eval",
                "row_id": row_id,
                "index": i,
                "evaluator": "judge",
                "status": "success",
                "results": results,
                "error": None,
            }
            out.write(json.dumps(line) + "\n")


def _time(code: str, *args: str) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    seconds, peak = done.stdout.split()
    return float(seconds), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, cand = Path(tmp) / "base.jsonl", Path(tmp) / "cand.jsonl"
        write_run(base, args.rows, args.keys, 0.0, 1)
        write_run(cand, args.rows, args.keys, 0.01, 2)
        size = (base.stat().st_size + cand.stat().st_size) / 1e6
        floor = min(_time(_FLOOR, str(base), str(cand)) for _ in range(args.repeat))
        ours = min(
            _time(_OURS, str(base), str(cand), str(REPO), str(args.keys))
            for _ in range(args.repeat)
        )
    print(f"{args.rows:,} rows x {args.keys} keys per run, {size:.0f} MB of JSONL in all")
    print(f"floor (json.loads of every line): {floor[0]:.2f} s, peak {floor[1]:.0f} MB")
    print(f"openevals.compare:                {ours[0]:.2f} s, peak {ours[1]:.0f} MB")
    print(f"compare / floor: {ours[0] / floor[0]:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
