"""A run store with three recorded runs of the same rows (the last one worse), for the viewer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals import evaluate, exact_match
from openevals.store import RunStore

HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'


def make_rows(n: int, bad_from: int, *, hostile: bool = False) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        out = "b" if i >= bad_from else "a"
        if hostile and i == 1:
            out = HOSTILE
        rows.append(
            {
                "id": f"r{i}",
                "inputs": {"q": f"question {i}"},
                "outputs": out,
                "reference_outputs": "a",
            }
        )
    return rows


def fill(path: Path) -> RunStore:
    evaluate(make_rows(120, 110), [exact_match], progress=False, store=path)
    evaluate(make_rows(120, 108, hostile=True), [exact_match], progress=False, store=path)
    evaluate(make_rows(120, 60), [exact_match], progress=False, store=path)
    store = RunStore(path)
    store.tag(1, "main")
    return store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    opened = fill(tmp_path / "runs.db")
    yield opened
    opened.close()
