"""Reference metrics on long texts: seconds and peak memory per metric and length.

Each measurement runs in a fresh process (so peak memory, the child's maximum resident set, is
its own) on two random texts of ``n`` words drawn from a 2,000-word vocabulary, half of them from
its 50 most common words (so many words repeat, as in prose). Shapes:

* ``line``  - the whole text on one line (ROUGE-Lsum is then one sentence pair);
* ``lines`` - 20 words per line (ROUGE-Lsum pairs every reference line with every output line).

Rows, per size and shape:

* ``rouge (ours)``        - ``create_rouge_evaluator`` with rouge1, rouge2, rougeL, rougeLsum;
* ``rouge-score (peer)``  - rouge-score's own ``RougeScorer.score`` on the same types (what this
  package ran before; skipped above ``--peer-max`` words, where it needs gigabytes);
* ``rougeLsum (ours)`` / ``rougeLsum (peer)`` - the summary-level type alone, ours and
  rouge-score's (on ``lines`` each reference line is matched against every output line);
* ``floor``               - rouge-score's tokenizer over both texts: no metric is faster;
* ``bleu``, ``chrf``, ``chrf++`` - sacrebleu's sentence scores through the evaluators;
* ``ter``                 - refused past ``TER_MAX_WORDS`` (the row shows the error); within the
  limit, sacrebleu's TER.

``--ter-sizes 250 1000 12000`` adds, per size, sacrebleu's own ``TER().sentence_score`` on the
one-line texts (what a TER past the limit would cost), stopped after ``--ter-timeout`` seconds.

Run: ``python benchmarks/long_texts.py [--sizes 3000 12000] [--peer-max 3000]
[--ter-sizes 250 1000 12000] [--ter-timeout 200]``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def text(n: int, seed: int, per_line: int) -> str:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2_000)]
    words = [rng.choice(vocab) if rng.random() < 0.5 else rng.choice(vocab[:50]) for _ in range(n)]
    if not per_line:
        return " ".join(words)
    return "\n".join(" ".join(words[i : i + per_line]) for i in range(0, n, per_line))


def child(name: str, n: int, per_line: int) -> None:
    """Measure one metric in this process and print one JSON line."""
    sys.path.insert(0, str(ROOT))
    hyp, ref = text(n, 1, per_line), text(n, 2, per_line)
    score: object
    if name in ("rouge-score (peer)", "rougeLsum (peer)"):
        from rouge_score import rouge_scorer

        types = TYPES if name == "rouge-score (peer)" else ["rougeLsum"]
        scorer = rouge_scorer.RougeScorer(types)
        start = time.perf_counter()
        own = scorer.score(ref, hyp)
        score = [round(own[t].fmeasure, 6) for t in types]
    elif name == "ter (sacrebleu)":
        from sacrebleu.metrics import TER

        start = time.perf_counter()
        score = round(TER().sentence_score(hyp, [ref]).score, 4)
    elif name == "floor":
        from rouge_score import tokenizers

        tokenizer = tokenizers.DefaultTokenizer(False)
        start = time.perf_counter()
        score = len(tokenizer.tokenize(hyp)) + len(tokenizer.tokenize(ref))
    else:
        from openevals import text as metrics

        evaluator = {
            "rouge (ours)": lambda: metrics.create_rouge_evaluator(rouge_types=TYPES),
            "rougeLsum (ours)": lambda: metrics.create_rouge_evaluator(rouge_types=["rougeLsum"]),
            "bleu": metrics.create_bleu_evaluator,
            "chrf": metrics.create_chrf_evaluator,
            "chrf++": lambda: metrics.create_chrf_evaluator(word_order=2),
            "ter": metrics.create_ter_evaluator,
        }[name]()
        start = time.perf_counter()
        try:
            result = evaluator(outputs=hyp, reference_outputs=ref)
            score = (
                [round(r["score"], 6) for r in result]
                if isinstance(result, list)
                else round(result["score"], 4)
            )
        except ValueError as exc:
            score = f"refused: {str(exc)[:60]}..."
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb, "score": score}))


def measure(name: str, n: int, per_line: int, timeout: float | None = None) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", name, str(n), str(per_line)],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[3_000, 12_000])
    parser.add_argument("--peer-max", type=int, default=3_000)
    parser.add_argument("--ter-sizes", type=int, nargs="*", default=[])
    parser.add_argument("--ter-timeout", type=float, default=200.0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), int(args.child[2]))
        return
    names = [
        "floor",
        "rouge (ours)",
        "rouge-score (peer)",
        "rougeLsum (ours)",
        "rougeLsum (peer)",
        "bleu",
        "chrf",
        "chrf++",
        "ter",
    ]
    ratios = {"ROUGE speed-up": "rouge", "Lsum speed-up": "rougeLsum"}
    print(f"{'words':>6} {'shape':<6} {'metric':<19} {'seconds':>9} {'peak MB':>8}  score")
    for n in args.sizes:
        for shape, per_line in (("line", 0), ("lines", 20)):
            timings: dict[str, float] = {}
            for name in names:
                if name.endswith("(peer)") and n > args.peer_max:
                    print(f"{n:>6} {shape:<6} {name:<19} {'skipped (--peer-max)':>18}")
                    continue
                if name in ("bleu", "chrf", "chrf++", "ter") and shape == "lines":
                    continue  # one-line figures suffice: sacrebleu ignores line breaks here
                row = measure(name, n, per_line)
                timings[name] = float(row["seconds"])  # type: ignore[arg-type]
                print(
                    f"{n:>6} {shape:<6} {name:<19} {row['seconds']:>9.3f} {row['peak_mb']:>8.0f}"
                    f"  {row['score']}"
                )
            for label, prefix in ratios.items():
                peer = "rouge-score (peer)" if prefix == "rouge" else f"{prefix} (peer)"
                if peer in timings:
                    ratio = timings[peer] / timings[f"{prefix} (ours)"]
                    floor = timings[f"{prefix} (ours)"] / timings["floor"]
                    print(
                        f"{n:>6} {shape:<6} {label:<19} {ratio:>8.0f}x"
                        f"  (ours = {floor:.0f}x the floor)"
                    )
    for n in args.ter_sizes:
        name = "ter (sacrebleu)"
        try:
            row = measure(name, n, 0, timeout=args.ter_timeout)
        except subprocess.TimeoutExpired:
            print(f"{n:>6} {'line':<6} {name:<19} not finished in {args.ter_timeout:.0f} s")
            continue
        seconds, peak = f"{row['seconds']:>9.3f}", f"{row['peak_mb']:>8.0f}"
        print(f"{n:>6} {'line':<6} {name:<19} {seconds} {peak}  {row['score']}")


if __name__ == "__main__":
    main()
