"""``python -m tests.contract.snapshot``: checks, and with ``--update`` rewrites, the snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.contract import snapshot


def test_check_passes_for_the_judge_file_and_update_rewrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = tmp_path / "judge.json"
    compat = tmp_path / "compat.json"
    monkeypatch.setattr(snapshot, "JUDGE_FILE", judge)
    monkeypatch.setattr(snapshot, "COMPAT_FILE", compat)
    judge.write_text(json.dumps({"openevals.llm:create_llm_as_judge": "stale"}))
    assert snapshot.main([]) == 1
    out = capsys.readouterr().out
    assert "judge.json: openevals.llm:create_llm_as_judge differs" in out
    assert snapshot.main(["--update"]) == 0
    assert json.loads(judge.read_text()) == snapshot.judge_snapshot()
    assert json.loads(compat.read_text()) == json.loads(json.dumps(snapshot.compat_snapshot()))
    assert snapshot.main([]) == 0


def test_the_stored_judge_snapshot_is_current() -> None:
    stored = json.loads(snapshot.JUDGE_FILE.read_text(encoding="utf-8"))
    assert stored == snapshot.judge_snapshot()
    assert snapshot.differences(snapshot.JUDGE_FILE, snapshot.judge_snapshot()) == []
    assert snapshot.differences(snapshot.JUDGE_FILE, {**stored, "x:y": "z"}) == ["x:y"]
