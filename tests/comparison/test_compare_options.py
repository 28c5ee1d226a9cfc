"""Every option of ``compare`` / ``acompare`` is checked before any run is read: a wrong type is
a ``TypeError`` and a value out of range a ``ValueError``, both naming the option."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openevals.comparison import acompare, compare
from tests.comparison.test_compare import _run

BAD = [
    ({"group_by": ["topic"]}, TypeError, "`group_by` must be one row field name as a str"),
    ({"group_by": 3}, TypeError, "`group_by`"),
    ({"group_by": ""}, ValueError, "`group_by` must name a row field"),
    ({"group_by": "extra..topic"}, ValueError, "`group_by`"),
    ({"alpha": "0.05"}, TypeError, "`alpha`"),
    ({"alpha": float("nan")}, ValueError, "`alpha`"),
    ({"alpha": 0.0}, ValueError, "`alpha`"),
    ({"min_effect": "0.1"}, TypeError, "`min_effect`"),
    ({"min_effect": float("nan")}, ValueError, "`min_effect`"),
    ({"min_effect": float("inf")}, ValueError, "`min_effect`"),
    ({"seed": -1}, ValueError, "`seed`"),
    ({"seed": 1.5}, TypeError, "`seed`"),
    ({"seed": True}, TypeError, "`seed`"),
    ({"test": ["auto"]}, TypeError, "`test`"),
    ({"resamples": "2000"}, TypeError, "`resamples`"),
    ({"resamples": 2000.0}, TypeError, "`resamples`"),
    ({"max_rows": -1}, ValueError, "`max_rows`"),
    ({"max_rows": None}, TypeError, "`max_rows`"),
    ({"keys": 5}, TypeError, "`keys`"),
    ({"keys": [1]}, TypeError, "`keys`"),
    ({"lower_is_better": "ok"}, TypeError, "`lower_is_better`"),
    ({"lower_is_better": None}, TypeError, "`lower_is_better`"),
    ({"lower_is_better": [None]}, TypeError, "`lower_is_better`"),
    ({"judge": "judge"}, TypeError, "`judge`"),
    ({"judge_options": "cache"}, TypeError, "`judge_options` must be a dict"),
    ({"judge_options": [("cache", 1)]}, TypeError, "`judge_options` must be a dict"),
    ({"judge_options": {1: 2, "x": 3}}, ValueError, "`judge_options` takes"),
]


@pytest.mark.parametrize(("kwargs", "error", "words"), BAD)
def test_bad_option_names_the_option(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    run = _run({"ok": [True, False]})
    with pytest.raises(error, match=words.replace("`", ".").replace("(", r"\(")):
        compare(run, run, **kwargs)
    with pytest.raises(error, match=words.replace("`", ".").replace("(", r"\(")):
        asyncio.run(acompare(run, run, **kwargs))


def test_good_options_still_pass() -> None:
    run = _run({"ok": [True, False] * 4}, topic=["a", "b"] * 4)
    comparison = compare(
        run, run, group_by="topic", alpha=0.1, min_effect=0, seed=0, resamples=100, max_rows=0
    )
    assert set(comparison.groups) == {"a", "b"}
