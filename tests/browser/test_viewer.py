"""``openevals view`` in a real browser: Debian's headless Chromium driven by Playwright against
the viewer served by uvicorn on 127.0.0.1 (``make browser``)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openevals.calibration import calibrate, stored_labels
from openevals.store import RunStore
from tests.browser.test_reports import browser  # noqa: F401 (the shared Chromium fixture)
from tests.viewer.conftest import HOSTILE, fill

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, RunStore]]:
    import uvicorn

    from openevals.viewer.app import create_app

    store = fill(tmp_path / "runs.db")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", store
    server.should_exit = True
    thread.join(10)
    store.close()


def _rows(page: Any) -> int:
    return int(page.locator("#rows tbody tr.row").count())


def test_navigation_filters_and_paging(browser: Any, served: tuple[str, RunStore]) -> None:  # noqa: F811
    base, _ = served
    page = browser.new_page()
    page.goto(base + "/")
    assert page.locator("#runs tr.run").count() == 3
    page.fill("#f-tag", "main")
    page.click("#run-filters button[type=submit]")
    assert page.locator("#runs tr.run").count() == 1
    page.click("#runs tr.run a")
    assert page.url.endswith("/runs/1")
    assert "exact_match" in page.inner_text("#aggregates")
    assert page.locator("svg.hist rect").count() == 2
    page.goto(base + "/runs/3")
    assert _rows(page) == 50 and page.inner_text("#page") == "page 1"
    page.click("#next")
    assert page.inner_text("#page") == "page 2" and _rows(page) == 50
    page.keyboard.press("ArrowRight")
    page.wait_for_url("**page=3")
    assert _rows(page) == 20
    page.keyboard.press("ArrowLeft")
    page.wait_for_url("**page=2")
    page.goto(base + "/runs/3")
    page.select_option("#key", "exact_match")
    page.fill("#below", "0")
    page.click("#row-filters button[type=submit]")
    assert _rows(page) == 50 and page.locator("#next").count() == 1
    page.click("#next")
    assert _rows(page) == 10  # 60 failing rows
    page.goto(base + "/runs/3")
    page.fill("#q", "question 77")
    page.press("#q", "Enter")
    assert _rows(page) == 1
    page.click("#rows tr.row td.text")  # a click on the row opens it
    page.wait_for_url("**/runs/3/rows/77")
    assert "question 77" in page.inner_text("#inputs")
    page.close()


def test_compare_and_trend(browser: Any, served: tuple[str, RunStore]) -> None:  # noqa: F811
    base, _ = served
    page = browser.new_page()
    page.goto(base + "/compare")
    page.select_option("#a", "1")
    page.select_option("#b", "3")
    page.click("#compare-form button[type=submit]")
    assert page.inner_text("#keys tr.verdict-regressed td.verdict") == "regressed"
    assert page.locator("#flips tbody tr").count() >= 50
    page.click("#flips tbody tr:first-child a")
    page.wait_for_url("**/runs/3/rows/*")
    page.goto(base + "/trend")
    assert page.locator("#trend-chart circle.regressed").count() == 1
    assert page.locator("#trend tbody tr.regressed").count() == 1
    assert page.locator("#trend-chart circle").count() == 3
    page.close()


def test_hostile_rows_render_as_text(browser: Any, served: tuple[str, RunStore]) -> None:  # noqa: F811
    base, _ = served
    page = browser.new_page()
    for url in ("/runs/2", "/runs/2/rows/1"):
        page.goto(base + url)
        assert page.evaluate("window.pwned") is None
        assert page.locator("img[src=x]").count() == 0
    assert HOSTILE in page.inner_text("#outputs")
    page.close()


JUDGE_ANSWERS = {"a": True, "b": False}


def _judge(*, outputs: str, **_: Any) -> dict[str, Any]:
    return {"key": "correct", "score": JUDGE_ANSWERS.get(outputs, False)}


def test_label_in_the_browser_then_calibrate(browser: Any, served: tuple[str, RunStore]) -> None:  # noqa: F811
    base, store = served
    page = browser.new_page()
    # Run 3: rows 0-59 answer "a" (right), 60-119 answer "b" (wrong). The person marks rows
    # 55-64; they disagree with the judge on rows 58 and 62.
    for pos in range(55, 65):
        page.goto(f"{base}/runs/3/rows/{pos}")
        if pos == 55:
            page.fill("#labeller", "ann")
        else:
            assert page.input_value("#labeller") == "ann"  # remembered
        verdict = (pos < 60) != (pos in (58, 62))
        page.fill("#value", "pass" if verdict else "fail")
        page.fill("#reason", f"checked row {pos}")
        page.click("#save-label")
        page.wait_for_url(f"**/runs/3/rows/{pos}")
        assert f"checked row {pos}" in page.inner_text("#label-list")
    page.goto(f"{base}/runs/3")
    assert "ann" in page.inner_text("#labels")
    page.close()
    labelled = stored_labels(3, store=store)
    assert len(labelled) == 10
    report = calibrate(labelled, _judge, progress=False)
    assert report.n == 10
    assert {row.id for row in report.disagreements} == {"r58", "r62"}
