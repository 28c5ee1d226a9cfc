"""Public call shapes stay as they were: ``signatures.json`` is the snapshot of ``main`` before the
evaluator families moved onto the contract (see ``signature_snapshot.py``). New keyword-only
options with defaults (``samples=``, ``systems=``, ...) may follow the old parameters."""

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


def _parameters(signature: str) -> tuple[list[str], str]:
    """``"(a, *, b: 'int' = 1) -> 'X'"`` -> (["a", "*", "b: 'int' = 1"], "'X'"), split at top-level
    commas only."""
    head, _, returns = (
        signature.rpartition(") -> ") if ") -> " in signature else (signature, "", "")
    )
    inner = head[1:] if head.startswith("(") else head
    inner = inner[:-1] if not returns and inner.endswith(")") else inner
    parts, depth, current = [], 0, ""
    for char in inner:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts, returns


def _compatible(before: str | None, now: str | None) -> bool:
    """Every old parameter kept, in order, with its annotation and default; new ones only after
    them, keyword-only with a default; the same return annotation."""
    if before is None or now is None:
        return before == now
    old, old_returns = _parameters(before)
    new, new_returns = _parameters(now)
    added = new[len(old) :]
    keyword_only = "*" in old or any(p.startswith("*") for p in new[: len(old)])
    return (
        new[: len(old)] == old
        and old_returns == new_returns
        and all(" = " in p or "=" in p for p in added)
        and (not added or keyword_only)
    )


def test_every_public_callable_keeps_its_signature(current: dict[str, Any]) -> None:
    before = {k: v for k, v in SNAPSHOT["names"].items() if k not in CHANGED}
    now = {k: v for k, v in current["names"].items() if k not in CHANGED}
    missing = sorted(set(before) - set(now))
    assert missing == [], "public names that disappeared"
    changed = {
        k: (before[k], now[k])
        for k in before
        if {**before[k], "signature": None} != {**now[k], "signature": None}
        or not _compatible(before[k].get("signature"), now[k].get("signature"))
    }
    assert changed == {}


def test_signature_check_refuses_removed_reordered_or_required_parameters() -> None:
    old = "(*, a: 'int' = 1, b: 'str' = 'x') -> 'R'"
    assert _compatible(
        old, "(*, a: 'int' = 1, b: 'str' = 'x', c: 'Mapping[str, int] | None' = None) -> 'R'"
    )
    assert not _compatible(old, "(*, a: 'int' = 1) -> 'R'")
    assert not _compatible(old, "(*, b: 'str' = 'x', a: 'int' = 1) -> 'R'")
    assert not _compatible(old, "(*, a: 'int' = 1, b: 'str' = 'x', c: 'int') -> 'R'")
    assert not _compatible(old, "(*, a: 'int' = 2, b: 'str' = 'x') -> 'R'")
    assert not _compatible(old, "(*, a: 'int' = 1, b: 'str' = 'x') -> 'S'")
    assert not _compatible("(a, b=1)", "(a, b=1, c=2)")  # a new positional parameter


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
