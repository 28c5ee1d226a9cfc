"""Rows stored a chunk at a time: a columnar block as one chunk of columns, read back equal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate, exact_match, levenshtein_distance, load_run
from openevals.evaluation import store as row_store
from openevals.evaluation.recordrun import row_chunks
from openevals.evaluation.store import ResultRows
from openevals.store import RunStore


def _rows(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {
            "inputs": {"q": i},
            "outputs": f'Say "HI" {i}' if i == 2500 else str(i % 3),
            "reference_outputs": "1",
        }
        if i % 7 == 0:
            row["cat"] = "x"  # some blocks have another column: stored as dicts
        out.append(row)
    return out


@pytest.fixture
def spilled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_store, "SPILL_AFTER", 1500)  # a large run's rows, on 3,000 rows


def test_columnar_blocks_are_stored_as_columns_and_read_back_equal(
    tmp_path: Path, spilled: None
) -> None:
    data = [{k: v for k, v in row.items() if k != "cat"} for row in _rows(3000)]
    db = tmp_path / "runs.db"
    live = evaluate(data, [exact_match, levenshtein_distance], progress=False, store=db)
    assert isinstance(live.rows, ResultRows)
    chunks = list(row_chunks(live.rows))
    assert [c.first for c in chunks[:3]] == [0, 1024, 2048]
    assert all(c.body.startswith('{"n": ') for c in chunks)  # columns, not a dict per row
    assert chunks[0].scores["exact_match"][:4] == [False, True, False, False]
    again = load_run(live.summary["run_id"], store=db)
    assert list(again.rows) == list(live.rows)
    assert again.rows[2999] == live.rows[2999]


def test_filters_paging_and_lookups_across_chunks(tmp_path: Path, spilled: None) -> None:
    db = tmp_path / "runs.db"
    live = evaluate(_rows(3000), [exact_match], progress=False, store=db, group_by="cat")
    with RunStore(db) as store:
        assert store.count(1) == 3000
        assert list(store.iter_rows(1)) == list(live.rows)
        page = store.rows(1, offset=1020, limit=10)  # across two chunks
        assert [r["pos"] for r in page] == list(range(1020, 1030))
        assert page == [{"pos": p, **live.rows[p]} for p in range(1020, 1030)]
        found = store.rows(1, search='say "hi"')
        assert [r["pos"] for r in found] == [2500]
        assert store.rows(1, search="no such words") == []
        hits = store.rows(1, key="exact_match", above=1, offset=400, limit=700)
        expected = [p for p in range(3000) if p % 3 == 1 and p != 2500][400:1100]
        assert [r["pos"] for r in hits] == expected
        assert store.count(1, key="exact_match", below=0) == 2000 + 1
        assert store.count(1, status="success") == 3000
        assert store.rows(1, status="error") == []
        assert store.count(1, status="pending") == 0  # no row has another status
        last = live.rows[2999]["id"]
        assert store.position(1, last) == 2999
        assert store.position(1, "missing") is None
        assert store.row(1, 1024)["index"] == 1024
        with pytest.raises(ValueError, match="no row at position"):
            store.row(1, 3000)
        store.add_label(1, last, labeller="ann", value=True)
        assert [lab.row_id for lab in store.labels(1)] == [last]


def test_a_block_with_failed_pairs_and_other_columns_reads_back_equal(
    tmp_path: Path, spilled: None
) -> None:
    from openevals.evaluation.spec import EvaluatorSpec

    data = _rows(2100)
    for pos, row in enumerate(data):
        row["cat"] = "ab"[pos % 2]
        if pos % 5 == 0:
            row["reference_outputs"] = None  # exact_match fails on this row
    evaluators = {"exact_match": EvaluatorSpec(exact_match, fail_fast=False)}
    db = tmp_path / "runs.db"
    live = evaluate(data, evaluators, progress=False, store=db, group_by="cat")
    assert isinstance(live.rows, ResultRows)
    assert all(c.body.startswith('{"n": ') for c in row_chunks(live.rows))
    with RunStore(db) as store:
        assert list(store.iter_rows(1)) == list(live.rows)
        failed = store.rows(1, status="error", offset=200, limit=3)
        assert [r["pos"] for r in failed] == [1000, 1005, 1010]
        assert failed[0]["evaluations"]["exact_match"]["error"] is not None
        assert store.count(1, status="error") == 420
        assert store.count(1, status="success") == 1680


def test_recording_reads_each_spilled_block_once(
    tmp_path: Path, spilled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = evaluate(_rows(3000), [exact_match], progress=False)  # ids numbered when read
    spilled_parts = [p for p in live.rows._parts if isinstance(p, row_store._Spilled)]  # type: ignore[union-attr]
    assert spilled_parts
    loads = []
    real = row_store._Spilled.load
    monkeypatch.setattr(row_store._Spilled, "load", lambda self: loads.append(1) or real(self))
    chunks = list(row_chunks(live.rows))
    assert sum(len(c) for c in chunks) == 3000
    assert len(loads) == len(spilled_parts)  # settled and read in one go
    assert [r["id"] for r in live.rows][-1] == chunks[-1].ids[-1]


def test_a_block_of_a_run_with_a_cache_reads_back_equal(tmp_path: Path, spilled: None) -> None:
    data = [{k: v for k, v in row.items() if k != "cat"} for row in _rows(2100)]
    db = tmp_path / "runs.db"
    live = evaluate(data, [exact_match], progress=False, store=db, cache=str(tmp_path / "cache.db"))
    assert isinstance(live.rows, ResultRows)
    assert all(c.body.startswith('{"n": ') for c in row_chunks(live.rows))
    assert live.rows[0]["evaluations"]["exact_match"]["cache"] is not None
    with RunStore(db) as store:
        assert list(store.iter_rows(1)) == list(live.rows)


def test_rows_found_by_ids_with_quotes_wildcards_and_accents(tmp_path: Path) -> None:
    names = ['say "hi"', "50%_off", "back\\slash", "café", "CAFÉ", "a"]
    data = [{"id": name, "outputs": "1", "reference_outputs": "1"} for name in names]
    db = tmp_path / "runs.db"
    evaluate(data, [exact_match], progress=False, store=db)
    with RunStore(db) as store:
        assert [store.position(1, name) for name in names] == list(range(6))
        assert store.position(1, "A") is None  # ids match exactly
        assert store.position(1, "50%") is None
        assert [r["id"] for r in store.rows(1, search="Café")] == ["café", "CAFÉ"]
        assert store.rows(1, search="cafe") == []
        assert [r["id"] for r in store.rows(1, search='Y "HI')] == ['say "hi"']


def test_a_store_with_one_record_per_row_is_chunked_when_opened(tmp_path: Path) -> None:
    import json
    import sqlite3

    db = tmp_path / "old.db"
    RunStore(db).close()
    with sqlite3.connect(db) as old:  # the layout before chunks: a record per row
        old.execute(
            "CREATE TABLE rows (run_id BIGINT NOT NULL, pos INTEGER NOT NULL, row_id TEXT NOT "
            "NULL, status TEXT NOT NULL, scores TEXT NOT NULL, body TEXT NOT NULL, "
            "PRIMARY KEY (run_id, pos))"
        )
        for run_id, count in ((1, 1500), (2, 3)):
            old.execute(
                "INSERT INTO runs (id, kind, created_at, evaluators, models, aggregates, details, "
                "row_count, complete) VALUES (?, 'run', 'now', '[]', '[]', '{}', '{}', ?, 1)",
                (run_id, count),
            )
            old.executemany(
                "INSERT INTO rows VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        run_id,
                        pos,
                        f"r{pos}",
                        "error" if pos == 2 else "success",
                        json.dumps({"k": pos % 2 == 0}),
                        json.dumps({"id": f"r{pos}", "index": pos, "outputs": f"out {pos}"}),
                    )
                    for pos in range(count)
                ],
            )
    with RunStore(db) as store:
        tables = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master")}
        assert "rows" not in tables
        assert store.count(1) == 1500 and store.count(2) == 3
        assert store.row(1, 1400) == {
            "pos": 1400,
            "id": "r1400",
            "index": 1400,
            "outputs": "out 1400",
        }
        assert [r["pos"] for r in store.rows(2, status="error")] == [2]
        assert store.count(1, key="k", above=1) == 750
        assert store.position(1, "r1499") == 1499
