"""CodeEvaluator and AsyncCodeEvaluator share one constructor (code/base.py ``_CodeEvaluatorBase``);
each class adds only its call form."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from openevals._contract import EvaluatorInfo, info_of
from openevals.code.base import AsyncCodeEvaluator, CodeEvaluator
from openevals.code.extraction import CodeExtraction


def _scorer(*, outputs: Any, **kwargs: Any) -> bool:
    return "return" in outputs


async def _ascorer(*, outputs: Any, **kwargs: Any) -> bool:
    return "return" in outputs


def _codes(codes: list[str]) -> list[tuple[bool, str | None]]:
    return [("return" in c, None) for c in codes]


async def _acodes(codes: list[str]) -> list[tuple[bool, str | None]]:
    return _codes(codes)


def test_both_classes_store_the_same_state_and_describe_themselves() -> None:
    info = EvaluatorInfo(run_name="check", feedback_keys=("ok",))
    extraction = CodeExtraction(strategy="none")
    sync = CodeEvaluator(
        scorer=_scorer, extraction=extraction, run_name="check", feedback_key="ok", info=info
    )
    asyn = AsyncCodeEvaluator(
        scorer=_ascorer, extraction=extraction, run_name="check", feedback_key="ok", info=info
    )
    for evaluator in (sync, asyn):
        assert (evaluator.run_name, evaluator.feedback_key, evaluator.code_sink) == (
            "check",
            "ok",
            None,
        )
        assert evaluator.extraction is extraction and evaluator.batch_scorer is None
    assert info_of(sync) == info
    assert info_of(asyn) == info.as_async()
    assert not hasattr(sync, "batch") and not hasattr(asyn, "abatch")
    sync_result = sync(outputs="return 1")
    assert sync_result == asyncio.run(asyn(outputs="return 1"))
    bare = CodeEvaluator(scorer=_scorer, extraction=extraction, run_name="r", feedback_key="k")
    assert info_of(bare) is None


def test_a_batch_scorer_gives_batch_or_abatch() -> None:
    extraction = CodeExtraction(strategy="none")
    sync = CodeEvaluator(
        scorer=_scorer,
        extraction=extraction,
        run_name="r",
        feedback_key="k",
        batch_scorer=_codes,
    )
    asyn = AsyncCodeEvaluator(
        scorer=_ascorer,
        extraction=extraction,
        run_name="r",
        feedback_key="k",
        batch_scorer=_acodes,
    )
    outputs = ["return 1", "pass"]
    assert sync.batch(outputs) == asyncio.run(asyn.abatch(outputs))
    assert [r["score"] for r in sync.batch(outputs)] == [True, False]


def test_the_constructor_is_written_once_and_each_class_adds_its_call_form() -> None:
    assert "__init__" not in vars(CodeEvaluator) and "__init__" not in vars(AsyncCodeEvaluator)
    assert inspect.signature(CodeEvaluator) == inspect.signature(AsyncCodeEvaluator)
    assert not inspect.iscoroutinefunction(CodeEvaluator.__call__)
    assert inspect.iscoroutinefunction(AsyncCodeEvaluator.__call__)
    # Two sibling classes, as before: isinstance still tells the sync form from the async one.
    assert not issubclass(AsyncCodeEvaluator, CodeEvaluator)
    assert not issubclass(CodeEvaluator, AsyncCodeEvaluator)
