"""Every judge factory's signature: unchanged from before the options were declared once, plus
``samples`` / ``score_weighting``, and in agreement with its declaration in
``openevals._judge.options`` (so the two cannot drift apart)."""

from __future__ import annotations

import importlib
import inspect
import json
from typing import Any

import pytest

from openevals._judge.options import FACTORIES, OPTIONS
from tests.contract.snapshot import (
    JUDGE_FILE,
    JUDGE_MODULES,
    NEW_JUDGE_OPTIONS,
    default_text,
    judge_signature,
)

MODULES = JUDGE_MODULES
NEW = NEW_JUDGE_OPTIONS

# The snapshot (long prompt defaults as a hash of their text); rewrite it for an intended change
# with `python -m tests.contract.snapshot --update` (see CONTRIBUTING.md).
BEFORE: dict[str, str] = json.loads(JUDGE_FILE.read_text(encoding="utf-8"))


def _factory(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def _kept(factory: Any, before: str) -> bool:
    """The snapshot's parameters come first, unchanged; options added since (keyword-only, with
    a default, as a new judge option lands in every family) may follow them."""
    params = [p for p in inspect.signature(factory).parameters.values() if p.name not in NEW]
    return any(
        judge_signature(factory, k) == before and all(p.default is not p.empty for p in params[k:])
        for k in range(len(params) + 1)
    )


@pytest.mark.parametrize("path", sorted(BEFORE))
def test_signature_is_unchanged_apart_from_the_new_options(path: str) -> None:
    sig = inspect.signature(_factory(path))
    assert _kept(_factory(path), BEFORE[path])
    assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
    added = {p.name: f"{p.annotation} = {default_text(p.default)}" for p in sig.parameters.values()}
    assert added["samples"] == NEW["samples"]
    if "output_schema" in sig.parameters or "continuous" in sig.parameters:
        assert added["score_weighting"] == NEW["score_weighting"]


def _declared() -> dict[str, Any]:
    for module in MODULES:
        importlib.import_module(module)
    return dict(FACTORIES)


def test_every_recorded_judge_factory_is_still_declared() -> None:
    # A judge added since the snapshot passes as it is (as a new deterministic factory does in
    # tests/compat); ``python -m tests.contract.snapshot --update`` records it, so that later
    # changes to it show. A recorded judge that is gone fails.
    declared = _declared()
    assert {path.split(":")[1] for path in BEFORE} <= set(declared)


def _disagreements(spec: Any, params: Any) -> list[str]:
    """How a factory's parameters differ from its declaration (empty: they agree)."""
    problems = []
    for option in spec.takes:
        param = params.get(option)
        if param is None:
            problems.append(f"{option}: not a parameter")
            continue
        if param.annotation != OPTIONS[option].annotation:
            problems.append(f"{option}: annotation {param.annotation!r}")
        expected = inspect.Parameter.empty if spec.required(option) else spec.default(option)
        if param.default is not expected and param.default != expected:
            problems.append(f"{option}: default {param.default!r}")
    # No judge option may be taken without being declared (it would bypass the shared checks).
    problems += [f"{p}: not declared" for p in params if p in OPTIONS and p not in spec.takes]
    return problems


@pytest.mark.parametrize("name", sorted({p.split(":")[1] for p in BEFORE}))
def test_signature_agrees_with_the_declaration(name: str) -> None:
    spec = _declared()[name]
    path = next(p for p in BEFORE if p.endswith(":" + name))
    assert _disagreements(spec, inspect.signature(_factory(path)).parameters) == []
    twin = _declared()[spec.async_twin or spec.sync_twin or ""]
    assert twin.takes == spec.takes and dict(twin.defaults) == dict(spec.defaults)
    assert twin.is_async != spec.is_async


def test_the_snapshot_check_allows_only_added_options_at_the_end() -> None:
    def before(*, prompt: Any, model: str | None = None) -> None: ...

    def added(*, prompt: Any, model: str | None = None, new: int = 0) -> None: ...

    def reordered(*, model: str | None = None, prompt: Any) -> None: ...

    def required(*, prompt: Any, model: str | None = None, new: int) -> None: ...

    stored = judge_signature(before)
    assert _kept(added, stored)
    assert not _kept(reordered, stored)
    assert not _kept(required, stored)


def test_a_drifted_signature_is_caught() -> None:
    """The agreement check really compares defaults, annotations and undeclared options."""
    spec = _declared()["create_code_llm_as_judge"]

    def drifted(
        *,
        prompt: Any,
        feedback_key: str = "score",
        judge: Any = None,
        model: str | None = None,
        system: int | None = None,
        continuous: bool = False,
        choices: Any = None,
        use_reasoning: bool = True,
        few_shot_examples: Any = None,
        max_retries: int = 5,
        samples: int = 1,
        score_weighting: Any = None,
        output_schema: Any = None,
    ) -> None: ...

    problems = _disagreements(spec, inspect.signature(drifted).parameters)
    assert any(p.startswith("feedback_key: default") for p in problems)
    assert any(p.startswith("max_retries: default") for p in problems)
    assert any(p.startswith("system: annotation") for p in problems)
    assert "output_schema: not declared" in problems
