"""Embedding-similarity throughput with the offline local model (MiniLM-L6-v2, CPU).

Scores ``--pairs`` (default 1,000) generated (output, reference) sentence pairs through
``evaluator.batch(outputs=..., reference_outputs=...)`` — every distinct text embedded in one
batched call — and, for comparison, ``--sample`` (default 100) pairs through one evaluator call
per pair (two texts embedded per call). Model loading is timed separately and excluded from both
rates. Nothing touches the network.

    python benchmarks/embedding_workload.py [--pairs 1000] [--sample 100] [--repeat 3] [--threads N]

``--threads N`` caps torch's CPU threads (``LocalEmbeddings(num_threads=N)``); use 1 when other
processes keep the cores busy, since oversubscribed torch thread pools slow down many-fold.
"""

from __future__ import annotations

import argparse
import random
import time

SUBJECTS = (
    "The cat",
    "A delivery driver",
    "The new model",
    "Our team",
    "The storm",
    "My neighbour",
)
VERBS = ("quickly finished", "carefully reviewed", "never understood", "loudly praised", "ignored")
OBJECTS = (
    "the quarterly report",
    "the broken umbrella",
    "a long list of refund requests",
    "the recipe for lemon cake",
    "the train timetable",
    "an email about the database migration",
)
TAILS = ("", " yesterday", " before lunch", " without any help", " for the third time")


def make_pairs(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """``n`` output/reference sentence pairs: about half paraphrase-like, half unrelated."""
    rng = random.Random(seed)

    def sentence() -> list[str]:
        return [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)]

    outputs, references = [], []
    for i in range(n):
        parts = sentence()
        outputs.append(f"{parts[0]} {parts[1]} {parts[2]}{parts[3]}. (#{i})")
        if i % 2:
            other = sentence()
            references.append(f"{other[0]} {other[1]} {other[2]}{other[3]}.")
        else:
            references.append(f"{parts[0]} {rng.choice(VERBS)} {parts[2]}.")
    return outputs, references


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    from openevals.embeddings import resolve_embeddings
    from openevals.string.embedding_similarity import create_embedding_similarity_evaluator

    embeddings = resolve_embeddings("local:all-MiniLM-L6-v2", num_threads=args.threads)
    evaluator = create_embedding_similarity_evaluator(embeddings=embeddings)
    start = time.perf_counter()
    evaluator(outputs="warm up", reference_outputs="warm up the model")
    print(f"model load + first call: {time.perf_counter() - start:.2f} s")

    outputs, references = make_pairs(args.pairs)
    best = float("inf")
    results = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        results = evaluator.batch(outputs=outputs, reference_outputs=references)
        best = min(best, time.perf_counter() - start)
    mean = sum(r["score"] for r in results) / len(results)
    print(
        f"batch:    {args.pairs} pairs in {best:.2f} s -> {args.pairs / best:,.0f} pairs/s "
        f"(best of {args.repeat}; mean score {mean:.3f})"
    )

    n = min(args.sample, args.pairs)
    start = time.perf_counter()
    single = [
        evaluator(outputs=o, reference_outputs=r)
        for o, r in zip(outputs[:n], references[:n], strict=True)
    ]
    elapsed = time.perf_counter() - start
    print(f"per-pair: {n} pairs in {elapsed:.2f} s -> {n / elapsed:,.0f} pairs/s")
    print(f"batch speed-up: {(args.pairs / best) / (n / elapsed):.1f}x")
    mismatches = sum(
        1 for a, b in zip(single, results[:n], strict=True) if a["score"] != b["score"]
    )
    print(f"batch vs per-pair score mismatches in the sample: {mismatches}/{n}")


if __name__ == "__main__":
    main()
