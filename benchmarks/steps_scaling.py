"""How the steps evaluator's cost grows with the size of a reference level.

One level of ``n`` reference steps against ``n`` executed steps (plus 10% failed retries), for
``n`` = 10, 100, 1,000, in four shapes:

* ``sparql``: every reference step a distinct SPARQL result (``required_columns``, unordered
  rows); the executed steps return the same results shuffled, with different query texts.
* ``repeated``: text outputs drawn from 5 values, so steps are interchangeable in big groups.
* ``args``: reference steps without output, matched on their ``args``.
* ``retrieval``: steps named ``retrieval`` scored by recall@k of overlapping id lists (partial
  credit: a weighted assignment, limited to ``MAX_RECALL_PAIRS`` pairs per level; the 1,000 row
  shows the error raised above the limit).

Run: ``python benchmarks/steps_scaling.py`` (``--sizes 10 100 1000``, ``--repeat N``). With
``--against DIR`` it also times the ``openevals/rag/steps.py`` of another checkout (e.g. the
main branch) on the sizes up to ``--against-max`` (default 100: larger levels take minutes there).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

Case = tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]
SPARQL = "application/sparql-results+json"


def _sparql(rows: list[tuple[str, str]]) -> str:
    bindings = [
        {"s": {"type": "uri", "value": f"urn:{s}"}, "name": {"type": "literal", "value": n}}
        for s, n in rows
    ]
    return json.dumps({"head": {"vars": ["s", "name"]}, "results": {"bindings": bindings}})


def _with_failures(rng: random.Random, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    failed = [{**s, "status": "error", "output": None} for s in rng.sample(steps, len(steps) // 10)]
    out = steps + failed
    rng.shuffle(out)
    return [{**s, "id": f"call_{i}"} for i, s in enumerate(out)]


def sparql_case(n: int, rng: random.Random) -> Case:
    results = [[(f"{i}-{r}", f"name {i}.{r}") for r in range(1 + i % 3)] for i in range(n)]
    reference = [
        {"name": "sparql_query", "args": {"query": f"select {i}"}, "output": _sparql(rows),
         "output_media_type": SPARQL, "required_columns": ["s", "name"]}
        for i, rows in enumerate(results)
    ]  # fmt: skip
    actual = [
        {"name": "sparql_query", "args": {"query": f"SELECT {i} ..."}, "status": "success",
         "output": _sparql(rows[::-1])}
        for i, rows in enumerate(results)
    ]  # fmt: skip
    return _with_failures(rng, actual), [reference]


def repeated_case(n: int, rng: random.Random) -> Case:
    reference = [{"name": "calc", "output": str(rng.randrange(5))} for _ in range(n)]
    actual = [
        {"name": "calc", "output": str(rng.randrange(5)), "status": "success"} for _ in range(n)
    ]
    return _with_failures(rng, actual), [reference]


def args_case(n: int, rng: random.Random) -> Case:
    reference = [{"name": "lookup", "args": {"id": rng.randrange(n)}} for _ in range(n)]
    actual = [
        {"name": "lookup", "args": json.dumps({"id": rng.randrange(n)}), "status": "success"}
        for _ in range(n)
    ]
    return _with_failures(rng, actual), [reference]


def retrieval_case(n: int, rng: random.Random) -> Case:
    def ids(start: int) -> str:
        return json.dumps([{"id": f"u{start + d}"} for d in range(5)])

    reference = [{"name": "retrieval", "output": ids(rng.randrange(n))} for _ in range(n)]
    actual = [
        {
            "name": "retrieval",
            "args": {"k": 5},
            "output": ids(rng.randrange(n)),
            "status": "success",
        }
        for _ in range(n)
    ]
    return _with_failures(rng, actual), [reference]


SHAPES: dict[str, Callable[[int, random.Random], Case]] = {
    "sparql": sparql_case,
    "repeated": repeated_case,
    "args": args_case,
    "retrieval": retrieval_case,
}


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("steps_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _time(evaluator: Any, case: Case, repeat: int) -> tuple[float, str]:
    outputs, reference = case
    best = float("inf")
    shown = ""
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            result = evaluator(outputs=outputs, reference_outputs=reference)
        except ValueError as exc:
            return time.perf_counter() - start, f"ValueError: {str(exc)[:60]}..."
        best = min(best, time.perf_counter() - start)
        shown = f"score {result['score']:.4f}"
    return best, shown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--against", type=Path, help="another checkout to time as well")
    parser.add_argument("--against-max", type=int, default=100)
    options = parser.parse_args()

    from openevals.rag.steps import create_steps_evaluator

    ours = create_steps_evaluator()
    other = None
    if options.against is not None:
        other = _load(options.against / "openevals" / "rag" / "steps.py").create_steps_evaluator()
    header = f"{'shape':<10} {'n':>6} {'ours ms':>10}  {'result':<40}"
    if other is not None:
        header += f" {'other ms':>10}  ratio"
    print(header)
    for shape in options.shapes:
        for n in options.sizes:
            case = SHAPES[shape](n, random.Random(n))
            seconds, shown = _time(ours, case, options.repeat)
            line = f"{shape:<10} {n:>6} {seconds * 1e3:>10.2f}  {shown:<40}"
            if other is not None and n <= options.against_max:
                other_seconds, other_shown = _time(other, case, options.repeat)
                line += f" {other_seconds * 1e3:>10.2f}  {other_seconds / seconds:.1f}x"
                if other_shown != shown:
                    line += f"  (other: {other_shown})"
            print(line, flush=True)


if __name__ == "__main__":
    main()
