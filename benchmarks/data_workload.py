"""Data in and out at scale: Parquet streaming, its throughput against a list, ``to_pandas``.

    python benchmarks/data_workload.py [--rows 1000000]

Three figures, each run in a fresh interpreter so peak memory belongs to that run alone:

1. ``evaluate(PATH.parquet, ["exact_match"])`` over ``--rows`` rows: wall time and peak RSS
   (``ru_maxrss``). The target: at most 400 MB (the file is streamed in record batches).
2. The same rows as an in-memory list of dicts (built before timing): wall time. Parquet
   throughput should be at least 0.8x the list's (the floor, measured in the same run). Both
   runs alternate ``--repeat`` times (default 3); the best time of each is kept (the peak RSS
   printed for Parquet is the highest of its runs).
3. ``result.to_pandas()`` of a run with two feedback keys per row, against
   ``pd.DataFrame.from_records`` on the same long-form records as dicts (the floor): at most 2x.

Also printed: the peak RSS of the list run, and of a bare interpreter with the same imports
(what memory the process has before any row), so the streaming figure can be read against both.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_MAKE = """
import pyarrow as pa, pyarrow.parquet as pq
n = {rows}
outputs = [f"answer {{i % 97}}" for i in range(n)]
refs = [f"answer {{i % 89}}" for i in range(n)]
pq.write_table(pa.table({{"id": [f"r{{i}}" for i in range(n)], "outputs": outputs,
                          "reference_outputs": refs}}), {path!r}, row_group_size=65536)
print("{{}}")
"""

_RUN = """
import json, resource, time
import openevals
{setup}
start = time.perf_counter()
result = openevals.evaluate(data, ["exact_match"], progress=False, concurrency=1)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"elapsed": elapsed, "peak_mb": peak, "rows": len(result.rows),
                  "mean": result.aggregates["exact_match"]["mean"]}}))
"""

# Both runs import pyarrow.parquet before timing (the list's setup needs it to build the list).
_PARQUET_SETUP = """
import pyarrow.parquet
data = {path!r}
"""
_LIST_SETUP = """
import pyarrow.parquet as pq
data = pq.read_table({path!r}).to_pylist()
"""
_BARE = """
import json, resource
import openevals, openevals.evaluation.runner, pyarrow.parquet
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_FRAMES = """
import json, time
import pandas as pd
import openevals
from openevals.data.frames import LONG_COLUMNS, long_table
n = {rows}
data = [{{"id": f"r{{i}}", "outputs": str(i % 7), "reference_outputs": str(i % 5)}}
        for i in range(n)]
result = openevals.evaluate(data, {{"a": openevals.exact_match, "b": openevals.exact_match}},
                            progress=False)
del data
names, tuples = long_table(result.rows)
records = [dict(zip(names, t)) for t in tuples]
del tuples
best_floor = best_ours = float("inf")
for _ in range(3):
    start = time.perf_counter()
    floor = pd.DataFrame.from_records(records)
    best_floor = min(best_floor, time.perf_counter() - start)
    del floor
    start = time.perf_counter()
    ours = result.to_pandas()
    best_ours = min(best_ours, time.perf_counter() - start)
    assert len(ours) == 2 * n
    del ours
print(json.dumps({{"floor": best_floor, "ours": best_ours}}))
"""


def _python(code: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--frame-rows", type=int, default=None, help="rows for to_pandas")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best is kept")
    args = parser.parse_args()
    n = args.rows
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "rows.parquet")
        _python(_MAKE.format(rows=n, path=path))
        size = Path(path).stat().st_size / 1e6
        bare = _python(_BARE)
        # Alternated, best of --repeat each: background load hits both alike.
        parquet_runs, list_runs = [], []
        for _ in range(args.repeat):
            parquet_runs.append(_python(_RUN.format(setup=_PARQUET_SETUP.format(path=path))))
            list_runs.append(_python(_RUN.format(setup=_LIST_SETUP.format(path=path))))
        parquet = min(parquet_runs, key=lambda r: r["elapsed"])
        parquet["peak_mb"] = max(r["peak_mb"] for r in parquet_runs)
        listed = min(list_runs, key=lambda r: r["elapsed"])
    assert parquet["rows"] == listed["rows"] == n and parquet["mean"] == listed["mean"]
    ratio = (n / parquet["elapsed"]) / (n / listed["elapsed"])
    print(f"rows: {n:,}   Parquet file: {size:.1f} MB")
    print(f"interpreter with the imports, before any row: peak {bare['peak_mb']:.0f} MB")
    print(
        f"evaluate(parquet):      {parquet['elapsed']:.2f} s  {n / parquet['elapsed']:,.0f} rows/s  "
        f"peak RSS {parquet['peak_mb']:.0f} MB   (target <= 400 MB)"
    )
    print(
        f"evaluate(list of dicts): {listed['elapsed']:.2f} s  {n / listed['elapsed']:,.0f} rows/s  "
        f"peak RSS {listed['peak_mb']:.0f} MB (the list included)"
    )
    print(f"Parquet throughput / list throughput: {ratio:.2f}x   (target >= 0.8x)")
    frame_rows = args.frame_rows or n
    frames = _python(_FRAMES.format(rows=frame_rows))
    print(
        f"to_pandas() of {frame_rows:,} rows x 2 keys: {frames['ours']:.2f} s; "
        f"pd.DataFrame.from_records on the same records (floor): {frames['floor']:.2f} s; "
        f"ratio {frames['ours'] / frames['floor']:.2f}x   (target <= 2x)"
    )


if __name__ == "__main__":
    main()
