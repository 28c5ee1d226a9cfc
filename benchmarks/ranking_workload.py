"""Retrieval ranking metrics over a large batch: our ``*_batch`` functions against trec_eval
(``pytrec-eval-terrier``) and ranx, with a plain-numpy floor.

Usage::

    .venv/bin/python benchmarks/ranking_workload.py --peers-python .venv-ranking/bin/python
    .venv/bin/python benchmarks/ranking_workload.py --peers-python PATH --queries 2000 --repeat 3

The peers live in their own interpreter (``python -m venv .venv-ranking`` then
``.venv-ranking/bin/pip install pytrec-eval-terrier ranx numpy``). This script generates one
seeded data set (``--queries`` queries, ``--docs`` distinct retrieved ids each, ``--relevant``
graded reference ids each, about half of them retrieved), writes it to a temporary JSON file and
runs itself in the peers' interpreter (``--peer-side FILE``) on that very file. Each side builds
its natural input beforehand, untimed:

* ours: ``retrieved_lists`` (lists of id strings) and ``reference_lists`` (lists of
  ``(id, grade)`` pairs), the inputs a user already has;
* pytrec_eval: the ``qrels``/``run`` dicts and one ``RelevanceEvaluator`` per measure; the time
  is ``evaluator.evaluate(run)``;
* ranx: ``Qrels``/``Run`` objects, with one untimed warm-up call per metric (numba compiles on
  first use); the time is ``ranx.evaluate(qrels, run, metric)``;
* floor: the judged gains as numpy arrays (a gains matrix, relevant counts, the ideal gains):
  the fastest plain-numpy expression of each metric on them. It leaves out turning ids into
  gains, which every real implementation has to do, so no implementation can reach it.

Every figure is the best of ``--repeat`` runs, in seconds. Ratios: ``peer / ours`` (how many
times faster we are) and ``ours / floor``. The per-query scores of the three implementations are
compared too (the largest absolute difference is printed); their definitions agree on this data
(no repeated ids, no ties, at least one relevant item per query).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# name -> (our batch function, its options, trec_eval measure, ranx metric)
METRICS: dict[str, tuple[str, dict[str, Any], str, str]] = {
    "recall@10": ("recall_batch", {"k": 10}, "recall_10", "recall@10"),
    "precision@10": ("precision_batch", {"k": 10}, "P_10", "precision@10"),
    "hit_rate@10": ("hit_rate_batch", {"k": 10}, "success_10", "hit_rate@10"),
    "mrr": ("reciprocal_rank_batch", {}, "recip_rank", "mrr"),
    "map": ("average_precision_batch", {}, "map", "map"),
    "map@10 (map_cut)": (
        "average_precision_batch",
        {"k": 10, "normalize_by": "all_relevant"},
        "map_cut_10",
        "map@10",
    ),
    "ndcg@10": ("ndcg_batch", {"k": 10}, "ndcg_cut_10", "ndcg@10"),
}


def generate(queries: int, docs: int, relevant: int, seed: int) -> dict[str, Any]:
    """Retrieved ids (distinct per query) and graded relevant ids, about half of them retrieved."""
    rng = random.Random(seed)
    pool = 20 * docs
    retrieved: list[list[str]] = []
    references: list[list[list[Any]]] = []
    for _ in range(queries):
        ranked = [f"d{i}" for i in rng.sample(range(pool), docs)]
        chosen: dict[str, int] = {}
        while len(chosen) < relevant:
            doc = rng.choice(ranked) if rng.random() < 0.5 else f"d{rng.randrange(pool)}"
            chosen.setdefault(doc, rng.randint(1, 3))
        retrieved.append(ranked)
        references.append([[doc, grade] for doc, grade in chosen.items()])
    return {"retrieved": retrieved, "references": references}


def best_of(repeat: int, call: Callable[[], Any]) -> tuple[float, Any]:
    best = math.inf
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


# --------------------------------------------------------------------------- peer side


def peer_side(data_file: str, repeat: int) -> None:
    """Run in the peers' interpreter: time pytrec_eval and ranx, print JSON."""
    import pytrec_eval
    import ranx

    data = json.loads(Path(data_file).read_text())
    qids = [f"q{i}" for i in range(len(data["retrieved"]))]
    qrels = {
        q: {doc: grade for doc, grade in ref}
        for q, ref in zip(qids, data["references"], strict=True)
    }
    run = {
        q: {doc: float(len(ranked) - rank) for rank, doc in enumerate(ranked)}
        for q, ranked in zip(qids, data["retrieved"], strict=True)
    }
    ranx_qrels, ranx_run = ranx.Qrels(qrels), ranx.Run(run)
    out: dict[str, Any] = {"pytrec_eval": {}, "ranx": {}}
    for name, (_, _, measure, metric) in METRICS.items():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure})
        seconds, result = best_of(repeat, lambda e=evaluator: e.evaluate(run))
        scores = [result[q][measure] for q in qids]
        out["pytrec_eval"][name] = {"seconds": seconds, "scores": scores}
        ranx.evaluate(ranx_qrels, ranx_run, metric)  # numba compiles here, untimed
        seconds, _ = best_of(repeat, lambda m=metric: ranx.evaluate(ranx_qrels, ranx_run, m))
        per_query = ranx.evaluate(ranx_qrels, ranx_run, metric, return_mean=False)
        order = {q: i for i, q in enumerate(ranx_run.keys())}
        scores = [float(per_query[order[q]]) for q in qids]
        out["ranx"][name] = {"seconds": seconds, "scores": scores}
    versions = {"pytrec_eval": _version("pytrec-eval-terrier"), "ranx": _version("ranx")}
    print(json.dumps({"results": out, "versions": versions}))


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


# --------------------------------------------------------------------------- our side


def ours(data: dict[str, Any], repeat: int) -> dict[str, dict[str, Any]]:
    from openevals.rag import ranking

    retrieved = data["retrieved"]
    references = [[(doc, grade) for doc, grade in ref] for ref in data["references"]]
    out = {}
    for name, (function, options, _, _) in METRICS.items():
        batch = getattr(ranking, function)
        batch(retrieved[:10], references[:10], **options)  # imports numpy, untimed
        seconds, result = best_of(repeat, lambda b=batch, o=options: b(retrieved, references, **o))
        out[name] = {"seconds": seconds, "scores": result.scores}
    return out


def floor(data: dict[str, Any], repeat: int) -> dict[str, float]:
    """The fastest plain-numpy form of each metric on pre-built arrays of judged gains."""
    import numpy as np

    n, width = len(data["retrieved"]), len(data["retrieved"][0])
    gains = np.zeros((n, width))
    ideal = np.zeros((n, max(len(r) for r in data["references"])))
    n_relevant = np.zeros(n)
    for q, (ranked, ref) in enumerate(zip(data["retrieved"], data["references"], strict=True)):
        grades = dict(ref)
        gains[q] = [grades.get(doc, 0) for doc in ranked]
        ideal[q, : len(grades)] = sorted(grades.values(), reverse=True)
        n_relevant[q] = len(grades)
    ranks = np.arange(1, width + 1)
    discount = np.log2(np.arange(2, 12))

    def average_precision(top: Any, denominator: Any) -> Any:
        hit = top > 0
        return (np.where(hit, hit.cumsum(axis=1) / ranks[: top.shape[1]], 0).sum(axis=1)) / (
            denominator
        )

    def mrr() -> Any:
        hit = gains > 0
        return np.where(hit.any(axis=1), 1.0 / (hit.argmax(axis=1) + 1), 0.0)

    forms: dict[str, Callable[[], Any]] = {
        "recall@10": lambda: (gains[:, :10] > 0).sum(axis=1) / n_relevant,
        "precision@10": lambda: (gains[:, :10] > 0).sum(axis=1) / 10,
        "hit_rate@10": lambda: (gains[:, :10] > 0).any(axis=1),
        "mrr": mrr,
        "map": lambda: average_precision(gains, n_relevant),
        "map@10 (map_cut)": lambda: average_precision(gains[:, :10], n_relevant),
        "ndcg@10": lambda: (
            (gains[:, :10] / discount).sum(axis=1)
            / (ideal[:, :10] / discount[: ideal[:, :10].shape[1]]).sum(axis=1)
        ),
    }
    return {name: best_of(repeat, form)[0] for name, form in forms.items()}


# --------------------------------------------------------------------------- table


def _max_diff(a: list[float | None], b: list[float]) -> float:
    return max(abs((x or 0.0) - y) for x, y in zip(a, b, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers-python", help="interpreter with pytrec-eval-terrier and ranx")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100, help="retrieved ids per query")
    parser.add_argument("--relevant", type=int, default=10, help="reference ids per query")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure; the best is kept")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--peer-side", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer_side:
        peer_side(args.peer_side, args.repeat)
        return 0
    if not args.peers_python:
        parser.error("--peers-python is required (an interpreter with pytrec-eval-terrier, ranx)")

    data = generate(args.queries, args.docs, args.relevant, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        data_file = Path(tmp) / "data.json"
        data_file.write_text(json.dumps(data))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        command = [args.peers_python, __file__, "--peer-side", str(data_file)]
        proc = subprocess.run(
            [*command, "--repeat", str(args.repeat)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return 1
        peers = json.loads(proc.stdout.strip().splitlines()[-1])
    our = ours(data, args.repeat)
    floors = floor(data, args.repeat)

    print(
        f"{args.queries} queries x {args.docs} retrieved ids, {args.relevant} graded relevant "
        f"ids per query, seed {args.seed}; best of {args.repeat}; seconds"
    )
    print(f"peers: {peers['versions']}")
    header = (
        "| metric | ours | pytrec_eval | ranx | floor | pytrec_eval / ours | ranx / ours "
        "| ours / floor | max diff vs pytrec_eval, ranx |"
    )
    print(header)
    print("|---" * 9 + "|")
    rows = {}
    for name in METRICS:
        o = our[name]["seconds"]
        p = peers["results"]["pytrec_eval"][name]
        r = peers["results"]["ranx"][name]
        diff_p = _max_diff(our[name]["scores"], p["scores"])
        diff_r = _max_diff(our[name]["scores"], r["scores"])
        rows[name] = {
            "ours": o,
            "pytrec_eval": p["seconds"],
            "ranx": r["seconds"],
            "floor": floors[name],
            "max_diff": [diff_p, diff_r],
        }
        print(
            f"| {name} | {o:.3f} | {p['seconds']:.3f} | {r['seconds']:.3f} | "
            f"{floors[name]:.4f} | {p['seconds'] / o:.2f}x | {r['seconds'] / o:.2f}x | "
            f"{o / floors[name]:.0f}x | {diff_p:.1e}, {diff_r:.1e} |"
        )
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
