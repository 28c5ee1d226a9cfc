"""Record judge answers once, replay them in CI: :class:`Cassette`.

A cassette is a judge cache kept as a reviewable JSONL text file. Recording, every answer a judge
gets from its model is written with what it answered (model, a hash of the prompt, the messages,
the answer). Replaying, the judge gets the recorded answer and never calls the model: a request
with no recorded answer raises :class:`CassetteMissError` naming the model and the prompt hash.

Keys are the judge cache's keys (SHA-256 of the canonical JSON of model, structured-output rung,
messages, schema and model parameters), so they are the same in every run, process and Python
version. Secrets are never written: nothing of the client (keys, headers) is part of a request,
and every text is cleaned of the environment's secret values
(:class:`openevals.evaluation.redact.Redactor`) before it is written.

Use it wherever a judge cache goes::

    with Cassette("tests/judges.jsonl", mode="replay"):
        judge(inputs=..., outputs=...)               # any judge, sync or async

    evaluate(rows, [judge], cache=Cassette("tests/judges.jsonl", mode="replay"))

The format: a first line ``{"openevals_cassette": 1}``, then one object per answer with ``key``,
``model``, ``prompt_sha256``, ``rung``, ``messages`` and ``answer``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from contextvars import Token
from pathlib import Path
from typing import Any, ClassVar, Literal

from openevals._repr import show

__all__ = ["FORMAT_VERSION", "Cassette", "CassetteError", "CassetteMissError"]

FORMAT_VERSION = 1
_HEADER = "openevals_cassette"
_FIELDS = ("key", "model", "prompt_sha256", "answer")
Mode = Literal["replay", "record", "auto"]
_MODES = ("replay", "record", "auto")


class CassetteError(ValueError):
    """A cassette file that cannot be read: unknown format version, a corrupted line, an entry
    whose shape is not a recorded answer. The message names the file and the line."""


class CassetteMissError(LookupError):
    """Replaying, a judge asked for an answer the cassette does not hold (or holds in a shape
    the request no longer fits). No model was called."""


def _prompt_hash(messages: Any) -> str:
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Cassette:
    """A judge cache in a JSONL file, for deterministic, offline judge tests.

    Args:
        path: the JSONL file.
        mode: ``"replay"`` (default: answers come from the file only; a miss raises
            :class:`CassetteMissError`), ``"record"`` (every judge call reaches the model and the
            file is written anew), ``"auto"`` (replay what is recorded, record what is not).

    A cassette is a context manager that makes itself the active judge cache, and a cache
    backend for ``evaluate(..., cache=...)``. It pickles as its path and mode, so the Ray engine
    reopens it where it runs (a recording reopened there appends).
    """

    shared_storage: ClassVar[bool] = False
    replay_only: bool

    def __init__(self, path: str | os.PathLike[str], mode: Mode = "replay") -> None:
        if mode not in _MODES:
            raise ValueError(f"`mode` must be one of {_MODES}; got {show(mode)}")
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"`path` must be a file path; got {type(path).__name__}")
        self.path = Path(path)
        self.mode: Mode = mode
        self.replay_only = mode == "replay"
        self._lock = threading.Lock()
        self._entries: dict[str, dict[str, Any]] = {}
        self._requests: dict[str, tuple[str, str, str, Any]] = {}
        self._tokens: list[Token[Any]] = []
        self.hits = self.misses = 0
        if mode == "record":
            self._start_file()
        else:
            self._load()

    # ------------------------------------------------------------------ the file
    def _start_file(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps({_HEADER: FORMAT_VERSION}) + "\n", encoding="utf-8")

    def _load(self) -> None:
        if not self.path.exists():
            if self.mode == "replay":
                raise FileNotFoundError(
                    f"cassette {self.path} does not exist; record it first with "
                    "Cassette(path, mode='record') (or mode='auto')"
                )
            self._start_file()
            return
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                item = self._decode(number, raw)
                if item is None:
                    continue
                if number == 1:
                    self._check_header(item)
                    continue
                if not isinstance(item, dict) or any(f not in item for f in _FIELDS):
                    raise CassetteError(
                        f"{self.path}, line {number}: not a recorded answer (needs the fields "
                        f"{list(_FIELDS)}); re-record the cassette"
                    )
                if not isinstance(item["answer"], dict):
                    raise CassetteError(
                        f"{self.path}, line {number}: `answer` must be an object; got "
                        f"{type(item['answer']).__name__}; re-record the cassette"
                    )
                self._entries[str(item["key"])] = item

    def _decode(self, number: int, raw: bytes) -> Any:
        """Line ``number`` of the file as JSON (``None`` for a blank line); ``CassetteError``
        naming the file and the line when it is not UTF-8 or not JSON, or nested too deeply."""
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CassetteError(
                f"{self.path}, line {number}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                f"column {exc.start + 1}); the file is corrupted, re-record it"
            ) from None
        if not line.strip():
            return None
        try:
            return json.loads(line)
        except RecursionError:
            raise CassetteError(
                f"{self.path}, line {number}: nested too deeply to read as JSON (deeper than "
                "Python's recursion limit); no judge records that, so the file is corrupted, "
                "re-record it"
            ) from None
        except json.JSONDecodeError as exc:
            raise CassetteError(
                f"{self.path}, line {number}: not a JSON object ({exc.msg}); the file is "
                "corrupted, re-record it"
            ) from None

    def _check_header(self, item: Any) -> None:
        version = item.get(_HEADER) if isinstance(item, dict) else None
        if version != FORMAT_VERSION:
            raise CassetteError(
                f"{self.path}, line 1: not an openevals cassette of format version "
                f"{FORMAT_VERSION} (found {show(version)}); re-record it with this version of "
                "openevals"
            )

    # ------------------------------------------------------------------ the cache protocol
    def describe_request(self, key: str, material: dict[str, Any]) -> None:
        """Called by the judge core before ``get``: what the request is, for the file and for a
        miss's message."""
        messages = material.get("messages")
        entry = (str(material.get("model")), _prompt_hash(messages), str(material.get("rung")))
        with self._lock:
            self._requests[key] = (*entry, messages)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.mode == "record":
            return None
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self.misses += 1
                return None
            self.hits += 1
            return dict(entry["answer"])

    def set(self, key: str, value: dict[str, Any]) -> None:
        if self.replay_only:
            return
        from openevals.evaluation.redact import Redactor

        redactor = Redactor()
        with self._lock:
            model, prompt, rung, messages = self._requests.get(key, ("?", "?", "?", None))
            entry = {
                "key": key,
                "model": model,
                "prompt_sha256": prompt,
                "rung": rung,
                "messages": redactor.data(messages),
                "answer": redactor.data(value),
            }
            self._entries[key] = entry
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")

    def miss(self, key: str, stale: bool) -> CassetteMissError:
        """The error for a request replay cannot answer (raised by the judge core)."""
        with self._lock:
            model, prompt, _, _ = self._requests.get(key, ("?", "?", "?", None))
        why = (
            "holds an answer that no longer fits the request (its shape changed: another "
            "number of samples, or an answer the schema now rejects)"
            if stale
            else "has no answer for it"
        )
        return CassetteMissError(
            f"cassette {self.path} {why}: model {show(model)}, prompt sha256 {prompt[:16]}... "
            f"(key {key[:16]}...). The prompt, model or judge options changed since recording; "
            "re-record with Cassette(path, mode='record') or mode='auto'. No model was called."
        )

    def close(self) -> None:
        """Nothing to release (every answer is written when it is recorded)."""

    def __reduce__(self) -> tuple[Any, ...]:
        mode = "auto" if self.mode == "record" else self.mode
        return (Cassette, (str(self.path), mode))

    # ------------------------------------------------------------------ the active cache
    def __enter__(self) -> Cassette:
        from openevals._judge.cache import active_cache

        self._tokens.append(active_cache.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        from openevals._judge.cache import active_cache

        with contextlib.suppress(ValueError):
            active_cache.reset(self._tokens.pop())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r}, answers={len(self)})"
