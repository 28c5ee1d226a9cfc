"""LangSmith datasets as evaluation rows.

Each LangSmith ``Example`` becomes a row the way LangSmith's own ``evaluate()`` hands it to an
evaluator: the example's ``inputs`` are the row's ``inputs``, its ``outputs`` the row's
``reference_outputs`` (``{}`` when it has none), and its id the row id, so results match back to
the examples. A non-empty ``metadata`` (which holds the example's ``dataset_split``) becomes the
row's ``metadata`` column, so ``group_by="dataset_split"`` works. The outputs to score usually
come from ``target=``.

Three ways in:

* ``evaluate("langsmith://NAME", ...)`` - options after ``?``: ``split`` (repeatable, or
  comma-separated) and ``version`` (a version tag or an ISO-8601 time, LangSmith's ``as_of``);
  for example ``"langsmith://qa?split=test&version=prod"``. The client is ``langsmith.Client()``,
  configured by the environment (``LANGSMITH_API_KEY``, ``LANGSMITH_ENDPOINT``).
* :func:`langsmith_dataset` - the same with keyword options and an optional ``client``.
* any iterable of ``Example`` objects, such as ``client.list_examples(dataset_name=...)``.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote

from openevals._repr import show
from openevals.data.sources import Source, peek_iterable, require

__all__ = ["LangSmithDataset", "example_row", "langsmith_dataset", "open_examples", "parse_uri"]

SCHEME = "langsmith://"
_OPTIONS = ("split", "version")


def _is_example(value: Any) -> bool:
    kind = type(value)
    if not kind.__module__.startswith("langsmith"):
        return False
    schemas = require("langsmith.schemas", "langsmith", "a LangSmith example")
    return isinstance(value, schemas.Example)


def example_row(example: Any) -> dict[str, Any]:
    """One LangSmith ``Example`` as a row dict (``id``, ``inputs``, ``reference_outputs`` and a
    non-empty ``metadata``); the example is not modified."""
    row: dict[str, Any] = {
        "id": str(example.id),
        "inputs": dict(example.inputs or {}),
        "reference_outputs": dict(example.outputs or {}),
    }
    if example.metadata:
        row["metadata"] = dict(example.metadata)
    return row


def _splits(split: str | Sequence[str] | None) -> list[str] | None:
    if split is None:
        return None
    items = [split] if isinstance(split, str) else split
    if isinstance(items, (bytes, Mapping)) or not isinstance(items, Iterable):
        raise TypeError(f"split must be a str or a list of str; got {type(split).__name__}")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise TypeError(f"split must name non-empty splits; got {show(item)}")
        out.extend(part.strip() for part in item.split(",") if part.strip())
    return out


class LangSmithDataset:
    """A LangSmith dataset, read as rows when a run starts (see the module docstring).

    Iterating it yields row dicts; it is re-iterable (each pass lists the examples again).
    """

    def __init__(
        self,
        name: str,
        *,
        split: str | Sequence[str] | None = None,
        version: str | _dt.datetime | None = None,
        client: Any = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a LangSmith dataset name; got {show(name)}")
        if version is not None and not isinstance(version, (str, _dt.datetime)):
            raise TypeError(
                f"version must be a version tag (str) or a datetime; got {type(version).__name__}"
            )
        self.name = name
        self.splits = _splits(split)
        self.version = version
        self.client = client
        self._dataset_id: Any = None

    @property
    def uri(self) -> str:
        """The ``langsmith://`` form of this dataset (what errors call it)."""
        options = [f"split={s}" for s in self.splits or ()]
        if self.version is not None:
            options.append(f"version={self.version}")
        return SCHEME + self.name + ("?" + "&".join(options) if options else "")

    def _client(self) -> Any:
        if self.client is None:
            langsmith = require("langsmith", "langsmith", "A LangSmith dataset")
            self.client = langsmith.Client()
        return self.client

    def resolve(self) -> Any:
        """The dataset's id, looked up once.

        Raises:
            ValueError: no dataset of that name exists.
        """
        if self._dataset_id is None:
            utils = require("langsmith.utils", "langsmith", "A LangSmith dataset")
            client = self._client()
            try:
                dataset = client.read_dataset(dataset_name=self.name)
            except utils.LangSmithNotFoundError:
                raise ValueError(
                    f"{self.uri}: no LangSmith dataset named {show(self.name)} at "
                    f"{getattr(client, 'api_url', 'the LangSmith API')}; check the name and the "
                    "workspace of LANGSMITH_API_KEY"
                ) from None
            self._dataset_id = dataset.id
        return self._dataset_id

    def __iter__(self) -> Iterator[dict[str, Any]]:
        dataset_id = self.resolve()
        examples = self._client().list_examples(
            dataset_id=dataset_id, splits=self.splits, as_of=self.version
        )
        for example in examples:
            yield example_row(example)

    def open(self) -> Source:
        """Check that the dataset exists and return it as a :class:`Source`."""
        self.resolve()
        return Source(name=self.uri, records=self.__iter__)

    def __repr__(self) -> str:
        return f"LangSmithDataset({self.uri!r})"


def langsmith_dataset(
    name: str,
    *,
    split: str | Sequence[str] | None = None,
    version: str | _dt.datetime | None = None,
    client: Any = None,
) -> LangSmithDataset:
    """A LangSmith dataset to pass as ``data`` to ``evaluate`` / ``aevaluate`` / ``calibrate``.

    Args:
        name: the dataset's name.
        split: a split name or a list of them (LangSmith's ``splits``); default: every example.
        version: a version tag or a time (LangSmith's ``as_of``); default: the latest version.
        client: a ``langsmith.Client``; default: ``langsmith.Client()`` from the environment.

    Raises:
        ValueError / TypeError: a bad option. An unknown dataset raises ``ValueError`` when the
            run opens it.
    """
    return LangSmithDataset(name, split=split, version=version, client=client)


def parse_uri(text: str) -> LangSmithDataset:
    """``"langsmith://NAME?split=...&version=..."`` as a :class:`LangSmithDataset`.

    Raises:
        ValueError: no name, or an unknown option.
    """
    rest = text[len(SCHEME) :]
    raw_name, _, query = rest.partition("?")
    name = unquote(raw_name).strip()
    if not name:
        raise ValueError(
            f"data: {show(text)} names no dataset; write 'langsmith://NAME' (options: "
            "?split=test&version=TAG)"
        )
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(
            f"data: {show(text)} has unknown option(s) {show(unknown)}; accepted: {list(_OPTIONS)}"
        )
    versions = options.get("version", [])
    if len(versions) > 1 or (versions and not versions[0]):
        raise ValueError(
            f"data: {show(text)} must give one non-empty version; got {show(versions)}"
        )
    given = options.get("split", [])
    if any(not part.strip() for s in given for part in s.split(",")):
        raise ValueError(
            f"data: {show(text)} has an empty split name (split=); name the split "
            "('?split=test') or leave the option out to read every split"
        )
    splits = given or None
    return LangSmithDataset(name, split=splits, version=versions[0] if versions else None)


def open_examples(data: Any) -> Source | None:
    """A :class:`LangSmithDataset` or an iterable of LangSmith ``Example`` objects as a source;
    ``None`` for anything else (a one-shot iterator of other items comes back as a plain source,
    since its first item was read to tell)."""
    if isinstance(data, LangSmithDataset):
        return data.open()
    if (
        isinstance(data, (str, bytes, bytearray, Mapping))
        or not isinstance(data, Iterable)
        or (isinstance(data, Sequence) and not isinstance(data, (list, tuple)))
    ):
        return None
    one_shot = iter(data) is data
    if not one_shot and not isinstance(data, (list, tuple)):
        return None
    peeked = peek_iterable(data)
    if peeked is None:
        return None
    first, items = peeked
    if _is_example(first):
        return Source(name="LangSmith examples", records=lambda: (example_row(e) for e in items))
    if one_shot:
        return Source(name="data", records=lambda: items)
    return None
