"""What the run store costs (issue 37).

    python benchmarks/store.py [--rows 100000] [--big-rows 1000000] [--repeat 3] [--skip-big]
                               [--page-only]

1. Recording a run: ``evaluate(rows, [exact_match, levenshtein_distance], progress=False)``
   (the workload of ``benchmarks/runner_overhead.py``) with and without ``store=`` (a fresh
   SQLite file each round), the same with ``output=``, and on the same rows with an ``id``
   column (a store needs every row's id: rows without one get content ids, made only when
   something needs them); the ratios (target <= 1.10x).
2. Storing a ``--big-rows`` run: recording its ``EvaluationResult`` in the store against writing
   its Parquet table (``result.to_parquet``); the ratio (target <= 1.5x).
3. The viewer's run page for that run, its first request (templates not yet compiled; the
   app has served its runs list once): target under 1 s.
   ``--page-only`` measures only this (and the recording), without the Parquet figure.

Figures 1 are each the best of ``--repeat`` rounds, the rounds alternated.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from runner_overhead import _rows  # noqa: E402 (the same rows as the runner's benchmark)


def _evaluators() -> list[Any]:
    from openevals import exact_match, levenshtein_distance

    return [exact_match, levenshtein_distance]


def _timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


_RECORDING = (
    # name, label, the ratio's base, what the ratio is aimed at
    ("plain", "evaluate()", None, ""),
    ("store", "evaluate(store=)", "plain", "(target <= 1.10x)"),
    ("output", "evaluate(output=)", None, ""),
    ("output+store", "evaluate(output=, store=)", "output", "(target <= 1.10x)"),
    ("ids", "rows with ids: evaluate()", None, ""),
    ("ids+store", "rows with ids: evaluate(store=)", "ids", "(no content ids to make)"),
)


def recording(rows: list[dict[str, Any]], repeat: int, folder: Path) -> None:
    from openevals import evaluate

    evaluators = _evaluators()
    evaluate(rows[:10], evaluators, progress=False, store=folder / "warm.db")  # imports
    with_ids = [{"id": f"row-{pos}", **row} for pos, row in enumerate(rows)]
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for round_ in range(repeat):
        for name, *_ in _RECORDING:
            options: dict[str, Any] = {}
            if "store" in name:
                options["store"] = folder / f"runs-{name}-{round_}.db"
            if "output" in name:
                options["output"] = folder / f"out-{name}-{round_}.jsonl"
            data = with_ids if "ids" in name else rows
            started = time.process_time()
            took = _timed(lambda o=options, d=data: evaluate(d, evaluators, progress=False, **o))
            used = time.process_time() - started
            wall[name] = min(wall.get(name, took), took)
            cpu[name] = min(cpu.get(name, used), used)
    print(f"{len(rows):,} rows x 2 evaluators, best of {repeat}: wall time, then CPU time (the")
    print("  process's, all threads: steadier than wall time on a loaded machine)")
    for name, label, base, aim in _RECORDING:
        line = f"  {label:32} {wall[name]:6.2f} s {cpu[name]:6.2f} s"
        if base is not None:
            line += f"  {wall[name] / wall[base]:5.2f}x {cpu[name] / cpu[base]:5.2f}x  {aim}"
        print(line)


def big(count: int, folder: Path) -> None:
    from openevals import evaluate
    from openevals.evaluation.recordrun import record_result

    rows = _rows(count)
    result = evaluate(rows, _evaluators(), progress=False)
    del rows
    warm = evaluate(_rows(10), _evaluators(), progress=False)
    warm.to_parquet(folder / "warm.parquet")  # its modules imported before the clock starts
    parquet = _timed(lambda: result.to_parquet(folder / "big.parquet"))
    db = folder / "big.db"
    stored = _timed(lambda: record_result(db, result))
    print(f"{count:,}-row run")
    print(f"  result.to_parquet()           {parquet:7.2f} s")
    print(
        f"  recorded in the store         {stored:7.2f} s  {stored / parquet:5.2f}x  "
        "(target <= 1.5x)"
    )
    _pages(db)


def _pages(db: Path) -> None:
    try:
        from starlette.testclient import TestClient
    except ImportError:
        print("  (the viewer figure needs openevals[viewer])")
        return
    from openevals.store import RunStore
    from openevals.viewer.app import create_app

    with RunStore(db) as store:
        run_id = store.run("latest").id
        client = TestClient(create_app(store), base_url="http://127.0.0.1")
        client.get("/").raise_for_status()  # the app's modules imported, as in a running viewer
        first = _timed(lambda: client.get(f"/runs/{run_id}").raise_for_status())
        deep = _timed(lambda: client.get(f"/runs/{run_id}?page=15000").raise_for_status())
        found = _timed(lambda: client.get(f"/runs/{run_id}?q=theta%20iota").raise_for_status())
        # a search that matches no row reads every row's text
        none = _timed(lambda: client.get(f"/runs/{run_id}?q=omega").raise_for_status())
        failed = _timed(lambda: client.get(f"/runs/{run_id}?status=error").raise_for_status())
    print(f"  viewer: run page, first request {first:6.3f} s  (target < 1 s)")
    print(f"  viewer: page 15,000             {deep:6.3f} s")
    print(f"  viewer: a search, first page    {found:6.3f} s")
    print(f"  viewer: a search matching none  {none:6.3f} s")
    print(f"  viewer: failed rows (none)      {failed:6.3f} s")


def page_only(count: int, folder: Path) -> None:
    from openevals import evaluate
    from openevals.evaluation.recordrun import record_result

    db = folder / "pages.db"
    result = evaluate(_rows(count), _evaluators(), progress=False)
    took = _timed(lambda: record_result(db, result))
    print(f"{count:,}-row run recorded in {took:.1f} s")
    _pages(db)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--big-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--page-only", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="openevals-store-bench-") as tmp:
        folder = Path(tmp)
        if args.page_only:
            page_only(args.big_rows, folder)
            return
        recording(_rows(args.rows), args.repeat, folder)
        if not args.skip_big:
            big(args.big_rows, folder)


if __name__ == "__main__":
    main()
