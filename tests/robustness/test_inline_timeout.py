"""``eval_timeout`` bounds pure evaluators too (issue 43, item 4).

Pure evaluators used to run inline on the loop's thread, where nothing can stop them: a long
BLEU, chrF, TER or ROUGE pair ran far past ``eval_timeout`` and then recorded its score. With a
limit set, every pure evaluator except ``exact_match`` (linear in its input) now runs in the
thread pool under the limit, on the row path and in place of the columnar path, sync and async:
a long one is a ``TimeoutError`` on its row at the limit, never a score. Without a limit nothing
changes (pure evaluators stay inline and columnar).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from openevals import evaluate, exact_match
from openevals._contract import EvaluatorInfo, attach_info
from openevals.evaluation import LocalEngine, aevaluate
from openevals.evaluation.evaluators import prepare_evaluators
from openevals.evaluation.executor import under_timeout

_release = threading.Event()


def _stuck(*, outputs: Any, reference_outputs: Any) -> bool:
    """A pure evaluator that takes up to 5 s on the row whose outputs is ``"long"``."""
    if outputs == "long":
        _release.wait(5)
    return bool(outputs == reference_outputs)


stuck = attach_info(_stuck, EvaluatorInfo(run_name="stuck", feedback_keys=("stuck",), pure=True))


@pytest.fixture(autouse=True)
def _released() -> Iterator[None]:
    _release.clear()
    yield
    _release.set()  # the abandoned thread ends with the test


def _rows() -> list[dict[str, Any]]:
    rows = [{"id": f"r{i}", "outputs": "a", "reference_outputs": "a"} for i in range(300)]
    rows[150] = {"id": "r150", "outputs": "long", "reference_outputs": "long"}
    return rows


@pytest.mark.parametrize("how", ["evaluate", "aevaluate"])
@pytest.mark.parametrize("others", [[], [exact_match]], ids=["alone", "with-exact-match"])
def test_a_long_pure_evaluation_is_a_timeout_row_at_the_limit(how: str, others: list[Any]) -> None:
    engine = LocalEngine(eval_timeout=0.3)
    evaluators = [stuck, *others]
    start = time.perf_counter()
    if how == "aevaluate":
        result = asyncio.run(aevaluate(_rows(), evaluators, engine=engine, progress=False))
    else:
        result = evaluate(_rows(), evaluators, engine=engine, progress=False)
    took = time.perf_counter() - start
    assert took < 3.0  # not the 5 s the evaluation would take
    entry = result.rows[150]["evaluations"]["stuck"]
    assert entry["status"] == "error" and entry["results"] == []
    assert entry["error"]["type"] == "TimeoutError"
    assert "eval_timeout=0.3" in entry["error"]["message"]
    assert result.summary["errors"]["by_type"] == {"TimeoutError": 1}
    assert result.aggregates["stuck"]["count"] == 299
    _release.set()
    time.sleep(0.05)  # the abandoned call now returns a score: it must not be recorded
    assert result.rows[150]["evaluations"]["stuck"]["status"] == "error"


def test_text_metrics_run_under_the_limit_and_exact_match_stays_inline() -> None:
    pytest.importorskip("sacrebleu")
    from openevals.string.levenshtein import levenshtein_distance
    from openevals.text import (
        create_bleu_evaluator,
        create_chrf_evaluator,
        create_rouge_evaluator,
        create_ter_evaluator,
    )

    named = {
        "bleu": create_bleu_evaluator(),
        "chrf": create_chrf_evaluator(),
        "ter": create_ter_evaluator(),
        "rouge": create_rouge_evaluator(),
        "levenshtein": levenshtein_distance,
        "exact": exact_match,
    }
    prepared = prepare_evaluators(named)
    assert all(ev.inline for ev in prepared)  # pure: inline, columnar
    assert [ev.inline for ev in under_timeout(prepared, None)] == [True] * 6
    limited = {ev.name: ev.inline for ev in under_timeout(prepared, 10.0)}
    assert limited == {n: n == "exact" for n in named}


def test_a_slow_rouge_pair_is_a_timeout_row() -> None:
    pytest.importorskip("rouge_score")
    from openevals.text import create_rouge_evaluator

    # ~1 s of ROUGE on this machine: far over the limit, short enough to leave behind.
    words = " ".join(f"w{i % 997}" for i in range(30_000))
    rows = [{"outputs": "a b c", "reference_outputs": "a b d"}] * 20
    rows.append({"outputs": words, "reference_outputs": " ".join(reversed(words.split()))})
    engine = LocalEngine(eval_timeout=0.05)
    result = evaluate(rows, {"rouge": create_rouge_evaluator()}, engine=engine, progress=False)
    errors = [row["index"] for row in result.rows if row["status"] == "error"]
    assert errors == [20]
    assert result.rows[20]["evaluations"]["rouge"]["error"]["type"] == "TimeoutError"
