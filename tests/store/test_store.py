"""The run store: recording, reopening, filters, paging, labels, concurrency and kills."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate, exact_match, levenshtein_distance, load_run
from openevals.evaluation.recordrun import git_commit, histogram
from openevals.store import RunStore, open_store
from openevals.store._rows import CHUNKS_PER_COMMIT

ROOT = Path(__file__).resolve().parents[2]


def _rows(n: int = 30) -> list[dict[str, Any]]:
    return [
        {"inputs": {"q": i}, "outputs": str(i % 3), "reference_outputs": "1", "cat": "ab"[i % 2]}
        for i in range(n)
    ]


def test_a_recorded_run_reopens_equal(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    live = evaluate(
        _rows(), [exact_match, levenshtein_distance], progress=False, group_by="cat", store=db
    )
    run_id = live.summary["run_id"]
    again = load_run(run_id, store=db)
    assert again.aggregates == live.aggregates
    assert again.by_group == live.by_group
    assert list(again.rows) == list(live.rows)
    assert again.rows[-1] == live.rows[-1]
    assert again.to_pandas().shape == live.to_pandas().shape
    with RunStore(db) as store:
        run = store.run(run_id)
    assert run.rows == 30 and run.complete and run.kind == "run"
    assert run.evaluator_names == ["exact_match", "levenshtein_distance"]
    assert run.evaluators[0]["feedback_keys"] == ["exact_match"]
    assert run.details["histograms"]["exact_match"]["counts"] == [20, 10]


def test_store_argument_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENEVALS_STORE", str(tmp_path / "env.db"))
    evaluate(_rows(3), [exact_match], progress=False, store=True)
    with RunStore() as store:
        assert [r.rows for r in store.runs()] == [3]
        evaluate(_rows(4), [exact_match], progress=False, store=store)
        assert [r.rows for r in store.runs()] == [4, 3]  # the caller's store stays open
    with pytest.raises(TypeError, match="store must be True"):
        evaluate(_rows(3), [exact_match], progress=False, store=3)
    with pytest.raises(TypeError, match="`store` must be True"):
        open_store(3.5)
    evaluate(_rows(3), [exact_match], progress=False, store=False)
    with RunStore() as store:
        assert len(store.runs()) == 2


def test_filters_refs_and_tags(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    data = tmp_path / "data.jsonl"
    data.write_text("".join(f'{{"outputs": "{i}", "reference_outputs": "1"}}\n' for i in range(3)))
    evaluate(str(data), [exact_match], progress=False, store=db)
    evaluate(_rows(5), [levenshtein_distance], progress=False, store=db)
    with RunStore(db) as store:
        store.tag(1, "main")
        assert [r.id for r in store.runs(dataset=str(data))] == [1]
        assert [r.id for r in store.runs(evaluator="levenshtein_distance")] == [2]
        assert [r.id for r in store.runs(evaluator="levenshtein")] == []
        assert [r.id for r in store.runs(tag="main")] == [1]
        commit = git_commit()
        assert commit is not None  # the tests run in the repository
        assert len(store.runs(commit=commit[:7])) == 2
        assert store.run("latest").id == 2
        assert store.run("main").id == 1
        assert store.run("2").id == 2
        with pytest.raises(ValueError, match="has no run 'nope'"):
            store.run("nope")
        with pytest.raises(TypeError, match="a run is named by"):
            store.run(2.0)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="a tag must be"):
            store.tag(1, "123")


def test_paging_and_row_filters(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    rows = _rows(100)
    rows[7]["outputs"] = "50% off_sale"
    evaluate(rows, [exact_match], progress=False, store=db)
    with RunStore(db) as store:
        page = store.rows(1, offset=10, limit=5)
        assert [r["pos"] for r in page] == [10, 11, 12, 13, 14]
        assert [r["index"] for r in page] == [10, 11, 12, 13, 14]
        assert store.count(1, key="exact_match", above=1) == 32  # row 7 no longer matches
        assert store.count(1, key="exact_match", below=0) == 68
        found = store.rows(1, search="50% off_")
        assert [r["pos"] for r in found] == [7]
        assert store.count(1, search="0%") == 1  # % is literal, not a wildcard
        assert store.count(1, status="error") == 0
        assert store.row(1, 99)["inputs"] == {"q": 99}
        with pytest.raises(ValueError, match="no row at position"):
            store.row(1, 100)
        assert sum(1 for _ in store.iter_rows(1, chunk=7)) == 100


def test_labels_newest_per_person(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    result = evaluate(_rows(4), [exact_match], progress=False, store=db)
    first = result.rows[0]["id"]
    with RunStore(db) as store:
        store.add_label(1, first, labeller="ann", value=True, reason="fine")
        store.add_label(1, first, labeller="ann", value=False, reason="on second look")
        store.add_label(1, first, labeller="bob", value=True)
        labels = {(lab.labeller, lab.value) for lab in store.labels(1)}
        assert labels == {("ann", False), ("bob", True)}
        assert [lab.reason for lab in store.labels(1, labeller="ann")] == ["on second look"]
        with pytest.raises(ValueError, match="labeller's name"):
            store.add_label(1, first, labeller=" ", value=True)
        with pytest.raises(ValueError, match="has no row"):
            store.add_label(1, "missing", labeller="ann", value=True)


def test_two_writers_at_once(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    RunStore(db).close()
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            evaluate(_rows(n), [exact_match], progress=False, store=db)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in (12000, 9000)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    with RunStore(db) as store:
        runs = store.runs()
        assert sorted(r.rows for r in runs) == [9000, 12000]
        for run in runs:
            assert store.count(run.id) == run.rows


_KILLED = """
import os, sys
from openevals.store.runs import RowChunk, RunStore
store = RunStore(sys.argv[1])
run = store.begin(kind="run", name="doomed")
def chunks():
    for number in range(10**7):
        if number == 40:
            print("writing", flush=True)
        ids = [str(number * 10 + at) for at in range(10)]
        body = '{"rows": [' + ", ".join('{"id": "%s"}' % i for i in ids) + "]}"
        yield RowChunk(first=number * 10, ids=ids, errors=[False] * 10, scores={}, body=body)
store.add_chunks(run, chunks())
"""


def test_a_killed_recording_leaves_a_consistent_store(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    evaluate(_rows(5), [exact_match], progress=False, store=db)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(db)], stdout=subprocess.PIPE, env=env, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "writing"
    child.send_signal(signal.SIGKILL)
    child.wait()
    with RunStore(db) as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [r.id for r in store.runs()] == [1]
        assert store.run("latest").id == 1
        doomed = store.runs(complete=False)[0]
        assert doomed.name == "doomed" and not doomed.complete
        assert store.count(doomed.id) % (10 * CHUNKS_PER_COMMIT) == 0  # whole transactions only
    with pytest.raises(ValueError, match="incomplete"):
        load_run(doomed.id, store=db)


def test_histogram_bins_and_git_outside_a_repository(tmp_path: Path) -> None:
    assert histogram([True, False, True]) == {"edges": [0.0, 0.5, 1.0], "counts": [1, 2]}
    assert histogram([None, float("nan")]) is None
    binned = histogram([0.0, 0.25, 0.5, 1.0])
    assert binned is not None and sum(binned["counts"]) == 4 and len(binned["counts"]) == 20
    assert git_commit(str(tmp_path)) is None


def test_a_directory_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is a directory"):
        RunStore(tmp_path)
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="not a usable SQLite database"):
        RunStore(bad)


def test_a_run_with_an_output_file_stores_its_rows_at_once(tmp_path: Path) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "out.jsonl"
    live = evaluate(_rows(20), [exact_match], progress=False, output=out, store=db)
    with RunStore(db) as store:
        run = store.run(live.summary["run_id"])
        assert run.details["rows_in"] == "store" and run.output == str(out)
        assert store.count(run.id) == 20  # a viewer needs no copy from the file first
        assert run.fingerprint is not None


def _pointer_record(store: RunStore, out: Path, rows: int) -> int:
    """A run recorded with its rows left in its output file (as earlier versions did)."""
    run_id = store.begin(kind="run", output=str(out))
    store.finish(
        run_id,
        aggregates={},
        details={"rows_in": "file"},
        rows=rows,
        error_rows=0,
        cost_usd=None,
        elapsed_sec=None,
    )
    return run_id


def test_a_record_with_its_rows_in_its_output_file_copies_them_when_needed(
    tmp_path: Path,
) -> None:
    db, out = tmp_path / "runs.db", tmp_path / "out.jsonl"
    live = evaluate(_rows(20), [exact_match], progress=False, output=out)
    with RunStore(db) as store:
        run_id = _pointer_record(store, out, 20)
        assert store.count(run_id) == 0
        again = load_run(run_id, store=store)  # the first reader copies them in
        assert list(again.rows) == list(live.rows)
        assert store.count(run_id) == 20
        assert store.run(run_id).details["rows_in"] == "store"
        assert store.run(run_id).fingerprint is not None
        gone = _pointer_record(store, tmp_path / "gone.jsonl", 5)
    with pytest.raises(ValueError, match="no longer exists"):
        load_run(gone, store=db)


def test_a_dataset_file_is_fingerprinted_by_its_bytes(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "a", "reference_outputs": "a"}\n', encoding="utf-8")
    evaluate(str(data), [exact_match], progress=False, store=db)
    evaluate(str(data), [exact_match], progress=False, store=db)
    data.write_text('{"outputs": "a", "reference_outputs": "b"}\n', encoding="utf-8")
    evaluate(str(data), [exact_match], progress=False, store=db)
    with RunStore(db) as store:
        prints = [run.fingerprint for run in store.runs()]
    assert prints[1] == prints[2] != prints[0]


def test_aevaluate_records_and_a_broken_store_only_warns(tmp_path: Path) -> None:
    import asyncio

    from openevals import aevaluate

    db = tmp_path / "runs.db"
    result = asyncio.run(aevaluate(_rows(6), [exact_match], progress=False, store=db))
    with RunStore(db) as store:
        assert store.run(result.summary["run_id"]).rows == 6
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    with pytest.warns(RuntimeWarning, match="not recorded in the run store"):
        kept = evaluate(_rows(6), [exact_match], progress=False, store=blocked / "runs.db")
    assert len(kept.rows) == 6 and "run_id" not in kept.summary
