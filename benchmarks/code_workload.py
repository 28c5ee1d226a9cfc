"""Code type-checking workload: per-sample mypy/pyright calls versus one batched call.

``samples(n)`` builds ``n`` small, deterministic Python samples (about half correct, half with a
type error). ``time_per_sample`` times ``create_<checker>_evaluator()(outputs=code)`` per sample, the
only mode the public release has, so the same function runs against either package;
``time_batch`` times our ``evaluator.batch(samples)`` (one checker process for all samples).

Run ``python benchmarks/code_workload.py [--samples 50] [--per-sample-count 10]`` to print
seconds per sample for each mode. Per-sample mode is timed on the first ``--per-sample-count``
samples (each call starts a checker process, so all 50 take minutes); the figure is per sample.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Sequence
from typing import Any

CHECKERS = ("mypy", "pyright")

_CORRECT = [
    "def add_{i}(a: int, b: int) -> int:\n    return a + b + {i}\n\n\nprint(add_{i}(1, 2))\n",
    (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Point{i}:\n    x: float\n"
        "    y: float\n\n    def norm(self) -> float:\n        return (self.x**2 + self.y**2) ** 0.5\n"
    ),
    (
        "def words_{i}(text: str) -> dict[str, int]:\n    counts: dict[str, int] = {{}}\n"
        "    for word in text.split():\n        counts[word] = counts.get(word, 0) + 1\n"
        "    return counts\n"
    ),
    (
        "from typing import Optional\n\n\ndef first_{i}(items: list[str]) -> Optional[str]:\n"
        "    return items[0] if items else None\n"
    ),
    (
        "import json\n\n\ndef load_{i}(raw: str) -> list[int]:\n    data = json.loads(raw)\n"
        "    return [int(x) for x in data]\n"
    ),
]
_WRONG = [
    "def add_{i}(a: int, b: int) -> int:\n    return str(a + b + {i})\n",
    'count_{i}: int = "{i}"\n',
    (
        "def mean_{i}(values: list[float]) -> float:\n    return sum(values) / len(values)\n\n\n"
        'mean_{i}(["a", "b"])\n'
    ),
    (
        "class Box{i}:\n    def __init__(self, size: int) -> None:\n        self.size = size\n\n\n"
        "Box{i}(3).volume()\n"
    ),
    (
        "from typing import Optional\n\n\ndef name_{i}(x: Optional[str]) -> str:\n"
        "    return x.upper()\n"
    ),
]


def samples(n: int = 50) -> list[str]:
    """``n`` samples alternating correct code and code with one type error."""
    out = []
    for i in range(n):
        templates = _CORRECT if i % 2 == 0 else _WRONG
        out.append(templates[(i // 2) % len(templates)].format(i=i))
    return out


def make_evaluator(checker: str) -> Any:
    """``create_<checker>_evaluator()`` from whichever ``openevals`` is importable."""
    if checker not in CHECKERS:
        raise ValueError(f"checker must be one of {CHECKERS}, got {checker!r}")
    module = importlib.import_module(f"openevals.code.{checker}")
    return getattr(module, f"create_{checker}_evaluator")()


def scores_per_sample(checker: str, codes: Sequence[str]) -> list[bool]:
    """The score of each sample with per-sample calls (works with either package)."""
    evaluator = make_evaluator(checker)
    return [bool(evaluator(outputs=code)["score"]) for code in codes]


def time_per_sample(checker: str, codes: Sequence[str]) -> float:
    """Seconds per sample when each sample is checked with its own evaluator call."""
    evaluator = make_evaluator(checker)
    started = time.perf_counter()
    for code in codes:
        evaluator(outputs=code)
    return (time.perf_counter() - started) / len(codes)


def time_batch(checker: str, codes: Sequence[str]) -> float | None:
    """Seconds per sample with one ``evaluator.batch`` call; None if the package has no batch."""
    evaluator = make_evaluator(checker)
    batch = getattr(evaluator, "batch", None)
    if batch is None:
        return None
    started = time.perf_counter()
    batch(list(codes))
    return (time.perf_counter() - started) / len(codes)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--per-sample-count", type=int, default=10)
    args = parser.parse_args(argv)
    codes = samples(args.samples)
    per_sample_codes = codes[: max(1, min(args.per_sample_count, len(codes)))]
    print(f"{len(codes)} samples; per-sample mode timed on {len(per_sample_codes)} of them")
    for checker in CHECKERS:
        single = time_per_sample(checker, per_sample_codes)
        batched = time_batch(checker, codes)
        print(f"{checker:8s} per-sample {single:8.3f} s/sample")
        if batched is not None:
            print(
                f"{checker:8s} batch      {batched:8.3f} s/sample  ({single / batched:.0f}x faster)"
            )


if __name__ == "__main__":
    main()
