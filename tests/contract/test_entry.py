"""``async_entry``: each async run function is made from its sync function's explicit signature,
so the options are declared once and every async form takes exactly what the sync form takes."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from openevals._declare import async_entry
from openevals.audit.run import aaudit_judge, audit_judge
from openevals.calibration.crossval import across_validate, cross_validate
from openevals.calibration.run import acalibrate, calibrate
from openevals.comparison.paired import acompare, compare
from openevals.comparison.sequential import asequential_compare, sequential_compare
from openevals.evaluation.runner import aevaluate, evaluate

PAIRS = [
    (evaluate, aevaluate),
    (calibrate, acalibrate),
    (cross_validate, across_validate),
    (audit_judge, aaudit_judge),
    (compare, acompare),
    (sequential_compare, asequential_compare),
]


@pytest.mark.parametrize(("sync", "twin"), PAIRS, ids=[s.__name__ for s, _ in PAIRS])
def test_every_async_run_function_has_its_sync_signature(sync: Any, twin: Any) -> None:
    assert inspect.signature(twin) == inspect.signature(sync)
    assert inspect.iscoroutinefunction(twin)
    assert twin.__name__ == f"a{sync.__name__}"
    assert twin.__module__ == sync.__module__
    assert (twin.__doc__ or "").startswith(f"Async twin of :func:`{sync.__name__}`")


def _sync(a: int, *, b: str = "x", c: float = 0.5) -> str:
    """The sync form."""
    return f"{a}{b}{c}"


async def _body(**arguments: Any) -> str:
    return repr(sorted(arguments.items()))


def test_the_body_gets_every_argument_by_name_with_the_defaults() -> None:
    twin = async_entry(_sync, _body, name="_async", doc="Async twin.")
    assert asyncio.run(twin(1, c=2.0)) == repr([("a", 1), ("b", "x"), ("c", 2.0)])
    assert twin.__annotations__ == _sync.__annotations__


def test_a_call_the_sync_form_refuses_is_refused() -> None:
    twin = async_entry(_sync, _body, name="_async", doc="Async twin.")
    with pytest.raises(TypeError, match="'a'"):
        asyncio.run(twin(b="y"))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^_async\(\) got an unexpected keyword argument 'd'$"):
        asyncio.run(twin(1, d=3))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        asyncio.run(twin(1, "y"))  # type: ignore[misc]


def test_aevaluate_builds_its_options_as_evaluate_does() -> None:
    """One construction (RunOptions.from_call): the same bad option, the same message."""
    for bad in ({"concurrency": 0}, {"group_by": ""}, {"trials": "x"}, {"engine": "spark"}):
        with pytest.raises((TypeError, ValueError)) as sync_error:
            evaluate([{"outputs": 1}], [lambda **kw: 1], progress=False, **bad)
        with pytest.raises((TypeError, ValueError)) as async_error:
            asyncio.run(aevaluate([{"outputs": 1}], [lambda **kw: 1], progress=False, **bad))
        assert type(async_error.value) is type(sync_error.value)
        assert str(async_error.value) == str(sync_error.value)
