"""Progress in a notebook without ipywidgets, and live intervals of rates (issue 40, item 5)."""

from __future__ import annotations

import sys
import types
import warnings
from typing import Any

import pytest

from openevals import evaluate
from openevals.report import progress as progress_module
from openevals.report.progress import PlainProgress, RichProgress, make_progress


class ZMQInteractiveShell:  # what a Jupyter kernel's get_ipython() returns (by class name)
    pass


def _in_a_notebook(monkeypatch: pytest.MonkeyPatch, *, widgets: bool) -> None:
    fake = types.ModuleType("IPython")
    fake.get_ipython = ZMQInteractiveShell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", fake)
    real = progress_module.importlib.util.find_spec
    monkeypatch.setattr(
        progress_module.importlib.util,
        "find_spec",
        lambda name, *a: (
            (object() if widgets else None) if name == "ipywidgets" else real(name, *a)
        ),
    )


def test_a_notebook_without_ipywidgets_gets_one_plain_line_and_no_warnings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _in_a_notebook(monkeypatch, widgets=False)
    assert isinstance(make_progress(True), PlainProgress)
    rows = [{"outputs": "a", "reference_outputs": "a" if n % 2 else "b"} for n in range(20)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(rows, ["exact_match"], progress=True)
    err = capsys.readouterr().err
    assert "\rEvaluating: 20/20 rows, 0 with errors" in err and err.endswith("\n")
    _in_a_notebook(monkeypatch, widgets=True)
    assert isinstance(make_progress(True), RichProgress)


def test_live_intervals_of_a_rate_stay_in_0_1_and_use_the_final_method() -> None:
    snapshots: list[dict[str, Any]] = []
    rows = [{"outputs": "a", "reference_outputs": "a" if n == 1 else "b"} for n in range(3)]
    result = evaluate(rows, ["exact_match"], progress=snapshots.append, concurrency=1)
    running = [s["running"]["exact_match"] for s in snapshots if s["running"]]
    assert running, "the callback saw running aggregates"
    for live in running:
        low, high = live["ci95"]
        assert 0.0 <= low <= high <= 1.0
    assert running[-1]["ci_method"] == result.aggregates["exact_match"]["ci_method"]
