"""The worker side of a distributed run, without Ray: pure evaluators take the columnar path on
a worker too, and its outcomes are those of the per-row code (issue 25)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openevals import exact_match, levenshtein_distance
from openevals.data.rows import load_rows
from openevals.evaluation import blocks
from openevals.evaluation.engines import worker as worker_module
from openevals.evaluation.engines.worker import WorkerRun, WorkItem
from openevals.evaluation.options import RunOptions

EVALUATORS = {"exact_match": exact_match, "levenshtein_distance": levenshtein_distance}
VALUE = st.one_of(st.sampled_from(["a", "b", "alpha beta", ""]), st.none(), st.just({"k": [1]}))


def _outcomes(items: list[WorkItem], *, columnar: bool, cache: Any = None) -> list[Any]:
    mp = pytest.MonkeyPatch()
    blocks_seen: list[int] = []
    real_add = WorkerRun.add_block

    def spy(self: WorkerRun, block: Any) -> None:
        blocks_seen.append(len(block))
        real_add(self, block)

    mp.setattr(WorkerRun, "add_block", spy)
    if not columnar:
        mp.setattr(worker_module, "columnar_fits", lambda run: False)
    try:
        options = RunOptions(progress=False, group_by="topic", cache=cache)
        found = WorkerRun(EVALUATORS, options).run_items(items)
    finally:
        mp.undo()
    if columnar and not any(item.evals for item in items):
        assert sum(blocks_seen) == len(items), "every row went through a column block"
    return [(o.target, {name: (p[0], p[1], p[3]) for name, p in o.pairs.items()}) for o in found]


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.tuples(VALUE, VALUE, st.sampled_from([None, "x"])), max_size=12),
    block=st.sampled_from([1, 3, 1024]),
)
def test_worker_outcomes_are_the_same_on_both_paths(values: list[Any], block: int) -> None:
    data = [
        {"id": f"r{i}", "outputs": o, "reference_outputs": r, **({"topic": t} if t else {})}
        for i, (o, r, t) in enumerate(values)
    ]
    items = [WorkItem(row=row) for row in load_rows(data)]
    mp = pytest.MonkeyPatch()
    mp.setattr(blocks, "BLOCK_ROWS", block)
    try:
        fast = _outcomes(items, columnar=True)
    finally:
        mp.undo()
    assert fast == _outcomes(items, columnar=False)


def test_a_partly_scored_row_takes_the_per_row_code() -> None:
    rows = load_rows([{"id": "a", "outputs": "x", "reference_outputs": "x"}])
    earlier = {"exact_match": {"status": "success", "results": [], "kind": "eval"}}
    items = [WorkItem(row=rows[0], evals=earlier)]
    found = _outcomes(items, columnar=True)
    assert set(found[0][1]) == {"levenshtein_distance"}


def test_batch_forms_stay_off_while_langsmith_needs_each_call() -> None:
    # As on the local engine (blocks.pure_batch_forms): a worker built while every call must be
    # traced or reported scores row by row, so each call reaches LangSmith (or the hook).
    from openevals.utils import result_hook

    options = RunOptions(progress=False)
    assert set(WorkerRun(EVALUATORS, options).forms) == set(EVALUATORS)
    token = result_hook.set(lambda run_name, kwargs, results: None)
    try:
        assert WorkerRun(EVALUATORS, options).forms == {}
    finally:
        result_hook.reset(token)
