"""The viewer's pages and its one write (labels), through Starlette's test client."""

from __future__ import annotations

import re
from typing import Any

import pytest

from openevals.store import RunStore
from openevals.viewer.app import create_app, parse_label
from openevals.viewer.serve import check_host

pytest.importorskip("starlette")


def _client(store: RunStore, **options: Any) -> Any:
    from starlette.testclient import TestClient

    return TestClient(create_app(store, **options), base_url="http://127.0.0.1")


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


def test_runs_list_and_filters(store: RunStore) -> None:
    client = _client(store)
    page = client.get("/").text
    assert page.count('class="run"') == 3
    assert client.get("/?tag=main").text.count('class="run"') == 1
    assert client.get("/?evaluator=nope").text.count('class="run"') == 0
    assert client.get("/?commit=zzzz").text.count('class="run"') == 0


def test_run_page_pages_and_filters_in_the_database(store: RunStore) -> None:
    client = _client(store)
    first = client.get("/runs/3").text
    assert first.count('class="row status-') == 50
    assert 'id="next"' in first and 'id="prev"' not in first
    last = client.get("/runs/3?page=3").text
    assert last.count('class="row status-') == 20 and 'id="next"' not in last
    failing = client.get("/runs/3?key=exact_match&below=0").text
    assert failing.count('class="row status-') == 50  # 60 fail; first page of them
    assert client.get("/runs/3?q=question%2017").text.count('class="row status-') == 1
    assert "histogram of exact_match" in first
    assert client.get("/runs/latest").status_code == 200
    assert client.get("/runs/nope").status_code == 404


def test_hostile_values_render_as_text(store: RunStore) -> None:
    client = _client(store)
    for url in ("/runs/2", "/runs/2/rows/1", "/runs/2?q=script"):
        html = client.get(url).text
        assert "<script>window.pwned" not in html
        assert "&lt;script&gt;window.pwned" in html
        assert "<img src=x onerror" not in html


def test_secrets_are_redacted(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    row = store.row(2, 5)
    monkeypatch.setenv("MY_API_KEY", "question 5")  # what the row holds, as if it were a secret
    html = _client(store).get("/runs/2/rows/5").text
    assert row["inputs"] == {"q": "question 5"}
    assert "question 5" not in html and "[REDACTED]" in html


def test_labels_need_the_csrf_token_and_same_origin(store: RunStore) -> None:
    client = _client(store)
    token = _csrf(client.get("/runs/1/rows/3").text)
    url = "/runs/1/rows/3/label"
    assert client.post(url, data={"labeller": "ann", "value": "fail"}).status_code == 403
    assert (
        client.post(url, data={"csrf": "forged", "labeller": "ann", "value": "fail"}).status_code
        == 403
    )
    foreign = {"origin": "http://evil.example"}
    refused = client.post(
        url, data={"csrf": token, "labeller": "ann", "value": "fail"}, headers=foreign
    )
    assert refused.status_code == 403
    assert store.labels(1) == []
    done = client.post(
        url,
        data={"csrf": token, "labeller": "ann", "value": "fail", "reason": "wrong"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    [label] = store.labels(1)
    assert (label.row_id, label.labeller, label.value, label.reason) == (
        "r3",
        "ann",
        False,
        "wrong",
    )
    assert "wrong" in client.get("/runs/1/rows/3").text
    empty = client.post(url, data={"csrf": token, "labeller": " ", "value": "pass"})
    assert empty.status_code == 400


def test_agreement_between_two_labellers_is_shown(store: RunStore) -> None:
    for i in range(10):
        store.add_label(1, f"r{i}", labeller="ann", value=i % 2 == 0)
        store.add_label(1, f"r{i}", labeller="bob", value=i % 2 == 0 or i == 3)
    html = _client(store).get("/runs/1").text
    assert "ann vs bob: Cohen's kappa" in html
    from openevals.calibration.agreement import categorical_agreement

    expected = categorical_agreement(
        [i % 2 == 0 for i in range(10)], [i % 2 == 0 or i == 3 for i in range(10)]
    )
    assert f"{expected.kappa.value:.3f}" in html


def test_compare_and_trend_pages(store: RunStore) -> None:
    client = _client(store)
    html = client.get("/compare?a=1&b=3").text
    assert '<tr class="verdict-regressed"><td>exact_match</td>' in html
    assert html.count("/runs/3/row?id=") >= 50
    assert (
        client.get("/runs/3/row?id=r70", follow_redirects=False).headers["location"]
        == "/runs/3/rows/70"
    )
    trend = client.get("/trend?key=exact_match").text
    assert trend.count('class="regressed"') >= 2  # the row and the dot of run 3
    assert 'id="trend-chart"' in trend


def test_token_and_host_rules(store: RunStore) -> None:
    guarded = _client(store, token="s3cret")
    assert guarded.get("/").status_code == 401
    assert guarded.get("/?token=wrong").status_code == 401
    assert guarded.get("/?token=s3cret").status_code == 200  # sets the cookie and redirects
    assert guarded.get("/runs/1").status_code == 200
    from starlette.testclient import TestClient

    rebinding = TestClient(create_app(store), base_url="http://evil.example")
    assert rebinding.get("/").status_code == 400
    assert check_host("127.0.0.1", None) is None
    assert check_host("::1", None) is None
    with pytest.raises(ValueError, match="needs a token"):
        check_host("0.0.0.0", None)
    assert check_host("0.0.0.0", "t") == "t"


def test_label_text_parsing() -> None:
    assert parse_label("pass") is True and parse_label("FAIL") is False
    assert parse_label("3") == 3 and parse_label("0.5") == 0.5
    assert parse_label("partly correct") == "partly correct"
    assert parse_label("nan") == "nan" and parse_label("inf") == "inf"


def test_groups_and_the_calibration_section(tmp_path: Any) -> None:
    from openevals import evaluate, exact_match
    from openevals.calibration import calibrate, stored_labels
    from openevals.evaluation.recordrun import record_result

    rows = [
        {
            "id": f"r{i}",
            "outputs": "a" if i % 3 else "b",
            "reference_outputs": "a",
            "cat": "xy"[i % 2],
        }
        for i in range(30)
    ]
    with RunStore(tmp_path / "runs.db") as store:
        evaluate(rows, [exact_match], progress=False, group_by="cat", store=store)
        for i in range(10):  # the person passes r0 and r3, which the judge fails
            store.add_label(1, f"r{i}", labeller="ann", value=i % 3 != 0 or i in (0, 3))

        def judge(*, outputs: str, reference_outputs: str) -> dict[str, Any]:
            return {"key": "correct", "score": outputs == reference_outputs}

        report = calibrate(stored_labels(1, store=store), judge, progress=False)
        record_result(
            store, report.result, kind="calibrate", extra={"calibration": report.to_dict()}
        )
        client = _client(store)
        grouped = client.get("/runs/1").text
        assert grouped.count('<tr><td>x</td><td>exact_match</td><td class="n">15</td>') == 1
        calibration = client.get("/runs/2").text
        assert "Calibration: correct vs labels" in calibration
        assert '<a href="/runs/2/row?id=r0">r0</a>: person True, judge False' in calibration
        assert client.get("/runs/2/row?id=r3", follow_redirects=False).headers["location"] == (
            "/runs/2/rows/3"
        )
