"""LangSmith datasets as evaluation data, against the fake LangSmith API over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import langsmith
import pytest

import openevals
from openevals.data.langsmith_source import parse_uri
from openevals.data.rows import count_rows, load_rows
from openevals.evaluation import langsmith_dataset
from tests.fakes.fake_langsmith import FakeLangSmith

pytestmark = pytest.mark.usefixtures("tracing_off")


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as server:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", server.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "test-key")
        yield server


@pytest.fixture
def qa(fake: FakeLangSmith) -> tuple[str, list[str]]:
    dataset = fake.add_dataset("qa")
    ids = [
        fake.add_example(
            dataset,
            {"question": f"q{i}"},
            {"answer": f"A{i}"},
            split="test" if i % 2 else "train",
        )
        for i in range(5)
    ]
    return dataset, ids


def _answer(inputs: dict[str, Any]) -> dict[str, Any]:
    number = inputs["question"][1:]
    return {"answer": f"A{number}" if number != "3" else "wrong"}


def test_examples_map_as_langsmith_evaluate_maps_them(qa: tuple[str, list[str]]) -> None:
    _, ids = qa
    rows = load_rows("langsmith://qa")
    assert [r.id for r in rows] == ids
    assert rows[0].fields == {
        "inputs": {"question": "q0"},
        "reference_outputs": {"answer": "A0"},
        "metadata": {"dataset_split": ["train"]},
    }


def test_example_ids_come_back_as_row_ids(qa: tuple[str, list[str]]) -> None:
    _, ids = qa
    result = openevals.evaluate("langsmith://qa", ["exact_match"], target=_answer, progress=False)
    assert [r["id"] for r in result.rows] == ids
    scores = {r["id"]: r["evaluations"]["exact_match"]["results"][0]["score"] for r in result.rows}
    assert scores == {i: n != 3 for n, i in enumerate(ids)}
    frame = result.to_pandas()
    assert list(frame["id"]) == ids


async def test_aevaluate_with_a_split_and_group_by(qa: tuple[str, list[str]]) -> None:
    _, ids = qa
    result = await openevals.aevaluate(
        "langsmith://qa?split=test", ["exact_match"], target=_answer, progress=False
    )
    assert [r["id"] for r in result.rows] == [ids[1], ids[3]]
    grouped = openevals.evaluate(
        "langsmith://qa", ["exact_match"], target=_answer, group_by="dataset_split", progress=False
    )
    assert set(grouped.by_group["per_group"]) == {'["test"]', '["train"]'}  # type: ignore[index]


def test_version_option_reads_the_tagged_version(fake: FakeLangSmith) -> None:
    dataset = fake.add_dataset("versions")
    first = fake.add_example(dataset, {"q": 1}, {"a": 1})
    fake.tag_version(dataset, "v1")
    fake.add_example(dataset, {"q": 2}, {"a": 2})
    assert [r.id for r in load_rows("langsmith://versions?version=v1")] == [first]
    assert len(load_rows("langsmith://versions")) == 2
    assert [r.id for r in load_rows(langsmith_dataset("versions", version="v1"))] == [first]


def test_langsmith_dataset_with_a_client_and_pages(fake: FakeLangSmith) -> None:
    dataset = fake.add_dataset("big")
    ids = [fake.add_example(dataset, {"q": i}, {"a": i}) for i in range(230)]  # 3 pages
    client = langsmith.Client(api_url=fake.url, api_key="k")
    source = langsmith_dataset("big", client=client)
    assert [r.id for r in load_rows(source)] == ids
    assert [r.id for r in load_rows(source)] == ids  # re-iterable
    assert count_rows(source) is None
    assert count_rows("langsmith://big") is None


def test_an_iterator_of_examples(qa: tuple[str, list[str]], fake: FakeLangSmith) -> None:
    _, ids = qa
    client = langsmith.Client(api_url=fake.url, api_key="k")
    result = openevals.evaluate(
        client.list_examples(dataset_name="qa"), ["exact_match"], target=_answer, progress=False
    )
    assert [r["id"] for r in result.rows] == ids
    examples = list(client.list_examples(dataset_name="qa"))
    assert [r.id for r in load_rows(examples)] == ids
    assert count_rows(examples) == 5
    before = [e.model_dump() if hasattr(e, "model_dump") else dict(e) for e in examples]
    load_rows(examples)
    after = [e.model_dump() if hasattr(e, "model_dump") else dict(e) for e in examples]
    assert before == after


def test_unknown_dataset_is_a_clear_error(fake: FakeLangSmith) -> None:
    with pytest.raises(ValueError, match=r"langsmith://nope: no LangSmith dataset named 'nope'"):
        openevals.evaluate("langsmith://nope", ["exact_match"], progress=False)


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("langsmith://", "names no dataset"),
        ("langsmith://qa?splt=test", r"unknown option\(s\) \['splt'\]"),
        ("langsmith://qa?version=a&version=b", "one non-empty version"),
        ("langsmith://qa?version=", "one non-empty version"),
        ("langsmith://qa?split=", r"empty split name \(split=\)"),
        ("langsmith://qa?split=test&split=", "empty split name"),
        ("langsmith://qa?split=test,", "empty split name"),
    ],
)
def test_bad_uris(uri: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_uri(uri)


def test_uri_options_parse() -> None:
    source = parse_uri("langsmith://my%20data?split=test,dev&split=train&version=prod")
    assert source.name == "my data"
    assert source.splits == ["test", "dev", "train"]
    assert source.version == "prod"


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="dataset name"):
        langsmith_dataset("")
    with pytest.raises(TypeError, match="version must be"):
        langsmith_dataset("x", version=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="split must"):
        langsmith_dataset("x", split=[1])  # type: ignore[list-item]
