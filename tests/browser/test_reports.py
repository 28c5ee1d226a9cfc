"""The HTML reports in a real browser: Debian's headless Chromium driven by Playwright.

Run with ``make browser`` (it installs Chromium when it is missing); ``make test`` leaves these out.
Each test writes a report, opens it from disk and checks that its filters show exactly the rows
they should.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals.comparison import compare
from openevals.evaluation import EvaluatorSpec, evaluate

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("OPENEVALS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.fail(f"Chromium not found at {CHROMIUM}; `make browser` installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


def _visible(page: Any) -> int:
    return int(
        page.eval_on_selector_all(
            "#rows tbody tr", "rs => rs.filter(r => r.style.display !== 'none').length"
        )
    )


def _flaky(*, outputs: str, **_: Any) -> bool:
    if outputs.startswith("bad"):
        raise RuntimeError("cannot score")
    return outputs.endswith("ok")


def test_run_report_filters(browser: Any, tmp_path: Path) -> None:
    rows = [
        {
            "id": f"r{i}",
            "outputs": ("bad " if i % 4 == 0 else "") + f"answer {i} ok",
            "reference_outputs": f"answer {i} ok",
        }
        for i in range(12)
    ]
    result = evaluate(rows, [EvaluatorSpec(_flaky, name="flaky"), "exact_match"], progress=False)
    assert sum(r["status"] == "error" for r in result.rows) == 3
    path = result.report_html(tmp_path / "run.html")
    page = browser.new_page()
    page.goto(path.resolve().as_uri())
    assert _visible(page) == 12
    page.select_option("#status", "error")
    assert _visible(page) == 3
    page.select_option("#status", "all")
    page.fill("#q", "answer 5 ")
    assert _visible(page) == 1
    page.fill("#q", "")
    page.select_option("#evaluator", "flaky")
    assert _visible(page) == 3
    assert page.inner_text("#shown") == "3"
    page.close()


def test_comparison_report_filters(browser: Any, tmp_path: Path) -> None:
    def run(flip: set[int]) -> Any:
        data = [
            {
                "id": f"r{i}",
                "outputs": "yes" if (i % 3 != 0) != (i in flip) else "no",
                "reference_outputs": "yes",
                "score": i / 20 + (0.2 if i in flip else 0.0),
            }
            for i in range(20)
        ]
        spec = EvaluatorSpec(
            lambda *, value, **_: {"key": "quality", "score": min(1.0, value)},
            name="quality",
            fields={"value": "score"},
        )
        return evaluate(data, ["exact_match", spec], progress=False)

    comparison = compare(run(set()), run({0, 3, 4}))
    path = comparison.report_html(tmp_path / "compare.html")
    page = browser.new_page()
    page.goto(path.resolve().as_uri())
    total = len(comparison.changed)
    assert total > 0 and _visible(page) == total
    assert "of" in page.inner_text("#shown")
    page.select_option("#key", "exact_match")
    flips = [r for r in comparison.changed if r.key == "exact_match"]
    assert _visible(page) == len(flips) == 3
    page.select_option("#change", "pass -> fail")
    assert _visible(page) == sum(1 for r in flips if r.change == "pass -> fail") == 1
    page.select_option("#change", "all")
    page.select_option("#key", "all")
    page.fill("#q", "r4")
    assert _visible(page) == sum(1 for r in comparison.changed if r.id == "r4")
    assert page.locator("svg").count() >= 1  # the paired plot of the continuous key
    page.close()
