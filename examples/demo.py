"""Batch evaluation from Python, offline: the library version of ``openevals demo``.

    python examples/demo.py [report.html]

Evaluates ``examples/data/demo.jsonl`` (24 quiz answers with retrieved documents, in three
categories) with exact match, Levenshtein similarity, JSON match and recall@3, adds a dataset-level
accuracy metric computed batch by batch, prints the aggregates per category and writes an HTML
report.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from openevals.evaluation import BatchMetrics, EvaluatorSpec, evaluate
from openevals.exact import exact_match
from openevals.string.levenshtein import levenshtein_distance

DATA = Path(__file__).resolve().parent / "data" / "demo.jsonl"
ANSWER = {"outputs": "outputs.answer", "reference_outputs": "reference_outputs.answer"}


def correct_counts(batch: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """Per batch: how many answers were exactly right, out of how many."""
    correct = sum(1 for scores in batch["scores"] if scores.get("exact_match"))
    return {"correct": {"value": correct}, "total": {"value": len(batch["id"])}}


def accuracy(per_batch: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    correct = sum(m["value"] for m in per_batch["correct"])
    total = sum(m["value"] for m in per_batch["total"])
    return {"accuracy": {"value": correct / total if total else 0.0}, "total": {"value": total}}


def main() -> None:
    result = evaluate(
        DATA,
        {
            "exact_match": EvaluatorSpec(exact_match, fields=ANSWER),
            "levenshtein": EvaluatorSpec(levenshtein_distance, fields=ANSWER),
            "json_match": "json_match:aggregator=average:outputs=outputs.facts"
            ":reference_outputs=reference_outputs.facts",
            "recall@3": "recall:k=3:outputs=outputs.retrieved:reference_outputs=reference_outputs.relevant",
        },
        group_by="category",
        batch_metrics=BatchMetrics([correct_counts], accumulate=accuracy, batch_size=8),
        progress=False,
    )
    print(result)
    for key, stats in result.aggregates.items():
        low, high = stats["ci95"]
        print(f"{key:22} mean {stats['mean']:.3f}  95% CI [{low:.3f}, {high:.3f}]")
    assert result.by_group is not None
    for group, info in result.by_group["per_group"].items():
        means = ", ".join(f"{k} {v['mean']:.2f}" for k, v in info["scores"].items())
        print(f"{group:10} {means}")
    print("dataset accuracy:", result.batch_metrics["accuracy"]["value"])
    target = sys.argv[1] if len(sys.argv) > 1 else str(Path(tempfile.mkdtemp()) / "report.html")
    print("report:", result.report_html(target, title="openevals demo (library)"))


if __name__ == "__main__":
    main()
