"""Cross-check the steps evaluator against graphrag-eval 6.6 on seeded random cases.

graphrag-eval 6.6 needs Python 3.12 (this project's venv is 3.11), so it runs in its own
interpreter: this script builds the cases, sends them as JSON to that interpreter, and compares
its ``steps_score`` with ours for both level rules:

* ``levels="all"`` against graphrag-eval's ``calculate_steps_score`` (the mean over levels);
* ``levels="last"`` against graphrag-eval's credit of the last level (its first, unconditioned
  group match: the 5.x score).

Cases stay where the two definitions are the same: text outputs that differ across step names
(graphrag-eval's text rule does not compare names), at most one executed retrieval step (graphrag
gives a reference step the latest executed step that scores above 0, we the best one), a
cutoff ``k`` at least as large as every reference id list (graphrag-eval keeps only the first k
reference ids), and no repeated ids.

Setup (once)::

    python3.12 -m venv .venv-graphrag
    .venv-graphrag/bin/pip install graphrag-eval==6.6.1 pyyaml   # pyyaml: an undeclared import

Run::

    .venv/bin/python scripts/compare_steps_graphrag.py --graphrag-python .venv-graphrag/bin/python
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_PEER = """
import json, sys
from graphrag_eval.steps.evaluation import calculate_steps_score, match_groups
answers = []
for reference, actual in json.load(sys.stdin):
    matches = match_groups(reference, actual)
    last = len(reference) - 1
    last_credit = sum(score for group, _, _, score in matches if group == last)
    answers.append([calculate_steps_score(reference, actual, matches),
                    last_credit / len(reference[last])])
json.dump(answers, sys.stdout)
"""

IDS = [f"u{i}" for i in range(1, 9)]


def make_case(rng: random.Random) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    levels: list[list[dict[str, Any]]] = []
    for _ in range(rng.randint(1, 3)):
        level = [
            {"name": name, "args": {}, "output": f"{name}:{rng.randint(1, 3)}"}
            for name in rng.choices(["search", "sparql"], k=rng.randint(1, 3))
        ]
        if rng.random() < 0.4:
            relevant = rng.sample(IDS, rng.randint(1, 4))
            level.insert(rng.randint(0, len(level)), {
                "name": "retrieval", "args": {},
                "output": json.dumps([{"id": u, "text": "..."} for u in relevant]),
            })  # fmt: skip
        levels.append(level)
    actual: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 7)):
        name = rng.choice(["search", "sparql"])
        actual.append({"name": name, "args": {}, "output": f"{name}:{rng.randint(1, 3)}"})
    if rng.random() < 0.6:
        retrieved = rng.sample(IDS, rng.randint(0, 8))
        actual.insert(rng.randint(0, len(actual)), {
            "name": "retrieval", "args": {"k": rng.randint(4, 8)},
            "output": json.dumps([{"id": u} for u in retrieved]),
        })  # fmt: skip
    for i, step in enumerate(actual):
        step["id"] = f"call_{i}"
        step["status"] = "success" if rng.random() < 0.85 else "error"
    return levels, actual


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graphrag-python", required=True, help="interpreter with graphrag-eval")
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=66)
    options = parser.parse_args()

    from openevals.rag.steps import create_steps_evaluator

    rng = random.Random(options.seed)
    cases = [make_case(rng) for _ in range(options.cases)]
    peer = subprocess.run(
        [options.graphrag_python, "-c", _PEER],
        input=json.dumps(cases), capture_output=True, text=True, check=True,
    )  # fmt: skip
    answers = json.loads(peer.stdout)
    rules = {"all": create_steps_evaluator(levels="all"), "last": create_steps_evaluator()}
    worst = {"all": 0.0, "last": 0.0}
    partial = recall_credit = 0
    for (reference, actual), (peer_all, peer_last) in zip(cases, answers, strict=True):
        for rule, peer_score in (("all", peer_all), ("last", peer_last)):
            ours = rules[rule](outputs=actual, reference_outputs=reference)
            gap = abs(float(ours["score"]) - peer_score)
            worst[rule] = max(worst[rule], gap)
            if gap > 1e-9:
                print(f"DIFFERENT ({rule}): ours {ours['score']} graphrag {peer_score}")
                print(json.dumps({"reference": reference, "actual": actual}))
                return 1
        partial += 0 < peer_all < 1
        matches = rules["all"](outputs=actual, reference_outputs=reference)["metadata"]["matches"]
        recall_credit += any(0 < m.get("score", 1) < 1 for m in matches)
    print(
        f"{len(cases)} cases (seed {options.seed}), {partial} scoring strictly between 0 and 1, "
        f"{recall_credit} with a retrieval step credited recall < 1: "
        f"levels='all' vs graphrag-eval 6.6 max |diff| {worst['all']:.1e}; "
        f"levels='last' vs its last-level credit max |diff| {worst['last']:.1e}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
