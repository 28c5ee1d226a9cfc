"""Public call shapes stay as they were: ``signatures.json`` is the snapshot of ``main`` before the
evaluator families moved onto the contract (see ``signature_snapshot.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openevals.code import base
from tests.compat.signature_snapshot import snapshot

SNAPSHOT: dict[str, Any] = json.loads(
    Path(__file__).with_name("signatures.json").read_text(encoding="utf-8")
)

# Deliberate differences, each with its reason. The code evaluator classes became one sync and one
# async class; the old names are aliases whose constructor accepts every old constructor call.
CHANGED: dict[str, str] = {
    f"openevals.code.base:{name}": "alias of the merged code evaluator class"
    for name in base.__all__
    if name.endswith("Evaluator")
}


@pytest.fixture(scope="module")
def current() -> dict[str, Any]:
    return snapshot()


def test_every_public_callable_keeps_its_signature(current: dict[str, Any]) -> None:
    before = {k: v for k, v in SNAPSHOT["names"].items() if k not in CHANGED}
    now = {k: v for k, v in current["names"].items() if k not in CHANGED}
    missing = sorted(set(before) - set(now))
    assert missing == [], "public names that disappeared"
    changed = {k: (before[k], now[k]) for k in before if before[k] != now[k]}
    assert changed == {}


def test_every_evaluator_keeps_its_call_shape(current: dict[str, Any]) -> None:
    before, now = SNAPSHOT["evaluators"], current["evaluators"]
    assert sorted(now) == sorted(before)
    changed = {k: (before[k], now[k]) for k in before if before[k] != now[k]}
    assert changed == {}


def test_the_code_classes_accept_every_old_constructor_call() -> None:
    def scorer(**kwargs: Any) -> bool:
        return True

    def batch_scorer(codes: Any) -> list[tuple[bool, str | None]]:
        return [(True, None)] * len(codes)

    extraction = base.CodeExtraction()
    common = {"scorer": scorer, "extraction": extraction, "run_name": "r", "feedback_key": "k"}
    for name in ("CodeEvaluator", "CodeCheckEvaluator", "AsyncCodeEvaluator"):
        assert not hasattr(getattr(base, name)(**common), "batch")
    assert base.BatchCodeCheckEvaluator(**common, batch_scorer=batch_scorer).batch
    made = base.AsyncBatchCodeCheckEvaluator(**common, batch_scorer=batch_scorer, code_sink="x")
    assert made.abatch and not hasattr(made, "batch")
