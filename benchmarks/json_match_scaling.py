"""How JSON match (list_match_mode="same_elements") scales with the length of the lists.

Prints one line per (mix, size): the seconds one evaluation takes and its score. Mixes:

* ``identical``      - the reference list itself, in the same order;
* ``shuffled``       - the same records in another order;
* ``mostly-same``    - shuffled, 2% of the records with one field changed;
* ``half-different`` - shuffled, half of the records with one field changed.

Records look like rows of an export: an id, a name, a city, a status out of four, a score and
a list of tags. Run: ``python benchmarks/json_match_scaling.py [--sizes 100 1000 10000]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openevals.json import create_json_match_evaluator

_CITIES = ["Paris", "Lyon", "Berlin", "Madrid", "Rome", "Oslo", "Lima", "Quito"]
_STATUS = ["active", "paused", "closed", "pending"]
_TAGS = ["red", "green", "blue", "new", "vip", "eu", "us"]


def records(n: int, seed: int = 1) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "id": i,
            "name": f"customer-{rng.randrange(10**6):06d}",
            "city": rng.choice(_CITIES),
            "status": rng.choice(_STATUS),
            "score": round(rng.random() * 100, 1),
            "tags": sorted(rng.sample(_TAGS, 2)),
        }
        for i in range(n)
    ]


def mix(reference: list[dict[str, Any]], name: str, seed: int = 2) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    outputs = [dict(r) for r in reference]
    if name == "identical":
        return outputs
    rng.shuffle(outputs)
    share = {"shuffled": 0.0, "mostly-same": 0.02, "half-different": 0.5}[name]
    for record in rng.sample(outputs, int(len(outputs) * share)):
        field = rng.choice(["name", "city", "status", "score"])
        record[field] = {"name": "someone-else", "city": "Nowhere", "status": "unknown"}.get(
            field, -1.0
        )
    return outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument(
        "--mixes",
        nargs="+",
        default=["identical", "shuffled", "mostly-same", "half-different"],
    )
    args = parser.parse_args()
    evaluator = create_json_match_evaluator(aggregator="average", list_aggregator="average")
    evaluator(outputs=[{"a": 1}] * 60, reference_outputs=[{"a": 2}] * 60)  # warm imports
    print(f"{'mix':<16}{'records':>9}{'seconds':>10}  json_match:average")
    for name in args.mixes:
        for size in args.sizes:
            reference = records(size)
            outputs = mix(reference, name)
            start = time.perf_counter()
            result = evaluator(outputs=outputs, reference_outputs=reference)
            elapsed = time.perf_counter() - start
            print(f"{name:<16}{size:>9}{elapsed:>10.3f}  {result[0]['score']:.4f}", flush=True)


if __name__ == "__main__":
    main()
