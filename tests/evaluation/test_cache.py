"""The SQLite judge cache, alone and through evaluate() against the fake OpenAI server."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from openevals.evaluation import Budget, SQLiteJudgeCache, evaluate
from openevals.evaluation.cache import CountingCache, default_cache_path, open_cache
from openevals.testing import FakeOpenAIServer
from tests.evaluation.helpers import JUDGE_KINDS, make_judge, qa_rows

VERDICT = {"reasoning": "The sum is right.", "score": True}


def test_get_set_counts_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "cache.sqlite"
    with SQLiteJudgeCache(path) as cache:
        assert cache.get("k1") is None
        cache.set("k1", {"data": {"score": True}, "text": "{}", "usage": None})
        assert cache.get("k1") == {"data": {"score": True}, "text": "{}", "usage": None}
        assert (cache.hits, cache.misses, cache.writes) == (1, 1, 1)
        assert len(cache) == 1
    with SQLiteJudgeCache(path) as again:
        assert again.get("k1") is not None
        again.clear()
        assert len(again) == 0
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode.lower() == "wal"


def test_closed_cache_and_bad_paths(tmp_path: Path) -> None:
    cache = SQLiteJudgeCache(tmp_path / "c.sqlite")
    cache.close()
    with pytest.raises(RuntimeError, match="closed"):
        cache.get("x")
    with pytest.raises(ValueError, match="is a directory"):
        SQLiteJudgeCache(tmp_path)
    with pytest.raises(TypeError, match="cache must be"):
        open_cache(3.5)


def test_many_threads_share_one_cache(tmp_path: Path) -> None:
    cache = SQLiteJudgeCache(tmp_path / "c.sqlite")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(50):
                cache.set(f"{n}-{i}", {"value": i})
                assert cache.get(f"{n}-{i}") == {"value": i}
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) == 400 and cache.hits == 400
    cache.close()


def test_counting_wrapper_and_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENEVALS_CACHE_DIR", str(tmp_path / "cachedir"))
    assert default_cache_path() == tmp_path / "cachedir" / "judge-cache.sqlite"
    cache, owned = open_cache(True)
    assert owned and isinstance(cache, SQLiteJudgeCache)
    counting = CountingCache(cache)
    counting.set("a", {"x": 1})
    assert counting.get("a") == {"x": 1} and counting.get("b") is None
    assert (counting.hits, counting.misses) == (1, 1)
    cache.close()


@pytest.mark.parametrize("kind", JUDGE_KINDS)
def test_a_cached_rerun_makes_no_model_calls(
    kind: str, fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.set_default_chat(json=VERDICT)
    judge = make_judge(kind, fake_openai)
    path = tmp_path / "judge.sqlite"
    rows = qa_rows(8)
    first = evaluate(rows, [judge], cache=path, concurrency=4, progress=False)
    assert len(fake_openai.chat_requests) == 8
    assert first.summary["cache"]["misses"] == 8 and first.summary["cache"]["hits"] == 0
    assert first.aggregates["correct"]["rate"] == 1.0
    name = first.evaluators[0]
    assert first.summary["evaluators"][name]["usage"]["total_tokens"] > 0
    assert first.rows[0]["evaluations"][name]["cache"] == {"hits": 0, "misses": 1}

    second = evaluate(rows, [judge], cache=path, concurrency=4, progress=False)
    assert len(fake_openai.chat_requests) == 8, "the rerun must not call the model"
    assert second.summary["cache"] == {"hits": 8, "misses": 0, "path": str(path)}
    assert second.rows[3]["evaluations"][name]["cache"] == {"hits": 1, "misses": 0}
    assert second.rows[3]["evaluations"][name]["usage"] is None, "a cache hit costs nothing"

    def verdicts(result: object) -> list[tuple[object, object, object]]:
        return [
            (res["key"], res["score"], res["comment"])
            for row in result.rows  # type: ignore[attr-defined]
            for res in row["evaluations"][name]["results"]
        ]

    assert verdicts(second) == verdicts(first)

    changed = [dict(row, outputs="wrong") for row in rows[:2]]
    evaluate(changed, [judge], cache=path, progress=False)
    assert len(fake_openai.chat_requests) == 10, "different requests are not served from cache"


async def test_async_judges_and_aevaluate_use_the_cache(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    from openevals.evaluation import aevaluate

    fake_openai.set_default_chat(json=VERDICT)
    judge = make_judge("openai-async", fake_openai)
    cache = SQLiteJudgeCache(tmp_path / "c.sqlite")
    await aevaluate(qa_rows(5), {"judge": judge}, cache=cache, progress=False)
    result = await aevaluate(qa_rows(5), {"judge": judge}, cache=cache, progress=False)
    assert len(fake_openai.chat_requests) == 5
    assert result.summary["evaluators"]["judge"]["cache"] == {"hits": 5, "misses": 0}
    assert cache.hits == 5 and cache.misses == 5
    cache.close()


def test_judge_cost_uses_the_price_table(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.set_default_chat(
        json=VERDICT, usage={"prompt_tokens": 100, "completion_tokens": 10}
    )
    judge = make_judge("openai-sync", fake_openai)
    result = evaluate(
        qa_rows(4),
        {"judge": judge},
        budget=Budget(prices={"gpt-test": (2.0, 10.0)}),
        progress=False,
    )
    info = result.summary["evaluators"]["judge"]
    assert info["model"] == "gpt-test"
    assert info["usage"] == {"input_tokens": 400, "output_tokens": 40, "total_tokens": 440}
    assert info["cost_usd"] == pytest.approx((400 * 2.0 + 40 * 10.0) / 1e6)
    unpriced = evaluate(qa_rows(1), {"judge": judge}, progress=False)
    assert unpriced.summary["evaluators"]["judge"]["cost_usd"] is None


def test_a_counting_cache_passes_on_only_the_cassette_extensions_and_can_be_copied() -> None:
    import copy

    class Replaying:
        replay_only = True
        closed = False

        def get(self, key: str) -> None:
            return None

        def set(self, key: str, value: dict[str, object]) -> None:
            return None

    wrapped = CountingCache(Replaying())
    assert wrapped.replay_only is True
    assert not hasattr(wrapped, "describe_request")  # the inner cache has none
    assert not hasattr(wrapped, "closed")  # not a cassette extension: not passed on
    duplicate = copy.copy(wrapped)  # copy probes names before `inner` is set
    assert duplicate.inner is wrapped.inner
