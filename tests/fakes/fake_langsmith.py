"""A tiny in-memory stand-in for the LangSmith HTTP API, served on 127.0.0.1.

It answers the handful of endpoints the ``langsmith`` client touches when tracing runs and when the
LangSmith pytest plugin tracks a test suite (datasets, projects, examples, feedback, run ingest),
and records every request so tests can assert what would have been sent. Nothing leaves the machine.
"""

from __future__ import annotations

import datetime as _dt
import email.parser
import email.policy
import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeLangSmith", "RecordedRequest"]


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat()


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def multipart_parts(self) -> dict[str, Any]:
        """Decode a ``multipart/form-data`` body into ``{part name: decoded JSON (or bytes)}``."""
        content_type = self.headers.get("Content-Type", "")
        raw = f"Content-Type: {content_type}\r\n\r\n".encode() + self.body
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
        parts: dict[str, Any] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                parts[str(name)] = payload
                continue
            try:
                parts[str(name)] = json.loads(payload)
            except ValueError:
                parts[str(name)] = payload
        return parts


@dataclass
class _State:
    requests: list[RecordedRequest] = field(default_factory=list)
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: dict[str, dict[str, Any]] = field(default_factory=dict)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    tags: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeLangSmith:
    """Start with ``FakeLangSmith()`` (or as a context manager); ``url`` is the API endpoint."""

    tenant_id = str(uuid.UUID(int=1))

    def __init__(self) -> None:
        self.state = _State()
        handler = type("_Handler", (_Handler,), {"state": self.state, "tenant_id": self.tenant_id})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeLangSmith:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def reset(self) -> None:
        """Forget every recorded request and stored object."""
        with self.state.lock:
            self.state.requests.clear()
            self.state.datasets.clear()
            self.state.sessions.clear()
            self.state.examples.clear()
            self.state.feedback.clear()
            self.state.tags.clear()

    # ------------------------------------------------------------------ stored data

    def add_dataset(self, name: str) -> str:
        """Store a dataset named ``name``; returns its id."""
        ds = {
            "id": str(uuid.uuid4()),
            "name": name,
            "description": None,
            "data_type": "kv",
            "created_at": _now(),
            "modified_at": _now(),
            "tenant_id": self.tenant_id,
        }
        with self.state.lock:
            self.state.datasets[ds["id"]] = ds
        return str(ds["id"])

    def add_example(
        self,
        dataset_id: str,
        inputs: dict[str, Any],
        outputs: dict[str, Any] | None = None,
        *,
        split: str | None = None,
        metadata: dict[str, Any] | None = None,
        example_id: str | None = None,
    ) -> str:
        """Store an example in a dataset (``split`` goes to ``metadata['dataset_split']``, as
        LangSmith keeps it); returns its id."""
        meta = dict(metadata or {})
        if split is not None:
            meta["dataset_split"] = [split]
        ex = {
            "id": example_id or str(uuid.uuid4()),
            "dataset_id": dataset_id,
            "inputs": inputs,
            "outputs": outputs,
            "metadata": meta or None,
            "created_at": _now(),
            "modified_at": _now(),
        }
        with self.state.lock:
            self.state.examples[str(ex["id"])] = ex
        return str(ex["id"])

    def tag_version(self, dataset_id: str, tag: str) -> None:
        """Name the dataset's current version ``tag``: listing examples ``as_of=tag`` then leaves
        out examples added later."""
        with self.state.lock:
            self.state.tags[(dataset_id, tag)] = len(self.state.examples)

    # ------------------------------------------------------------------ what was sent

    @property
    def requests(self) -> list[RecordedRequest]:
        with self.state.lock:
            return list(self.state.requests)

    def posted_runs(self) -> list[dict[str, Any]]:
        """Every run created through batch or multipart ingest, with inputs/outputs merged in."""
        runs: dict[str, dict[str, Any]] = {}
        for req in self.requests:
            if req.method != "POST":
                continue
            if req.path == "/runs/multipart":
                for name, value in req.multipart_parts().items():
                    op, _, rest = name.partition(".")
                    if op not in ("post", "patch"):
                        continue
                    run_id, _, attr = rest.partition(".")
                    run = runs.setdefault(run_id, {"id": run_id})
                    if attr:
                        run[attr] = value
                    elif isinstance(value, dict):
                        run.update(value)
            elif req.path == "/runs/batch":
                body = req.json()
                for op in ("post", "patch"):
                    for item in body.get(op) or []:
                        runs.setdefault(str(item["id"]), {}).update(item)
            elif req.path == "/runs":
                item = req.json()
                runs.setdefault(str(item["id"]), {}).update(item)
        return list(runs.values())

    def feedback(self) -> list[dict[str, Any]]:
        """Every feedback item received (``POST /feedback`` or multipart ``feedback.*`` parts)."""
        items: list[dict[str, Any]] = []
        for req in self.requests:
            if req.method == "POST" and req.path == "/feedback":
                items.append(req.json())
            elif req.method == "POST" and req.path == "/runs/multipart":
                for name, value in req.multipart_parts().items():
                    if name.startswith("feedback.") and isinstance(value, dict):
                        items.append(value)
        return items


class _Handler(BaseHTTPRequestHandler):
    state: _State
    tenant_id: str
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        req = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers=dict(self.headers.items()),
            body=body,
        )
        with self.state.lock:
            self.state.requests.append(req)
            status, payload = self._route(req)
        self._send(status, payload)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    # ------------------------------------------------------------------ routes

    def _route(self, req: RecordedRequest) -> tuple[int, Any]:
        segments = [s for s in req.path.split("/") if s]
        head = segments[0] if segments else ""
        if head == "info":
            return 200, {"version": "fake", "batch_ingest_config": {}}
        if head == "datasets":
            return self._datasets(req, segments)
        if head == "sessions":
            return self._sessions(req, segments)
        if head == "examples":
            return self._examples(req, segments)
        if head == "feedback" and req.method == "POST":
            item = req.json()
            item.setdefault("id", str(uuid.uuid4()))
            self.state.feedback.append(item)
            return 200, {**item, "created_at": _now(), "modified_at": _now()}
        return 200, {}

    def _datasets(self, req: RecordedRequest, segments: list[str]) -> tuple[int, Any]:
        if req.method == "POST" and len(segments) == 1:
            body = req.json()
            ds = {
                "id": str(uuid.uuid4()),
                "name": body["name"],
                "description": body.get("description"),
                "data_type": body.get("data_type", "kv"),
                "created_at": _now(),
                "modified_at": _now(),
                "tenant_id": self.tenant_id,
                "metadata": body.get("extra", {}).get("metadata") if body.get("extra") else None,
            }
            self.state.datasets[ds["id"]] = ds
            return 200, ds
        if req.method == "GET" and len(segments) == 1:
            names = req.query.get("name")
            found = [d for d in self.state.datasets.values() if not names or d["name"] in names]
            return 200, found
        if len(segments) >= 2 and segments[1] in self.state.datasets:
            if len(segments) == 2:
                return 200, self.state.datasets[segments[1]]
            return 200, {}
        return 404, {"detail": "dataset not found"}

    def _sessions(self, req: RecordedRequest, segments: list[str]) -> tuple[int, Any]:
        if req.method == "POST" and len(segments) == 1:
            body = req.json()
            session = {
                "id": body.get("id") or str(uuid.uuid4()),
                "name": body.get("name", "default"),
                "start_time": body.get("start_time") or _now(),
                "tenant_id": self.tenant_id,
                "reference_dataset_id": body.get("reference_dataset_id"),
                "extra": body.get("extra"),
            }
            self.state.sessions[session["id"]] = session
            return 200, session
        if req.method == "GET" and len(segments) == 1:
            names = req.query.get("name")
            found = [s for s in self.state.sessions.values() if not names or s["name"] in names]
            if not found and not names:
                found = [
                    {
                        "id": str(uuid.uuid4()),
                        "name": "x",
                        "start_time": _now(),
                        "tenant_id": self.tenant_id,
                    }
                ]
            return 200, found
        if len(segments) == 2 and segments[1] in self.state.sessions:
            if req.method == "PATCH":
                self.state.sessions[segments[1]].update(req.json())
            return 200, self.state.sessions[segments[1]]
        return 404, {"detail": "session not found"}

    def _examples(self, req: RecordedRequest, segments: list[str]) -> tuple[int, Any]:
        if req.method == "POST" and len(segments) == 1:
            body = req.json()
            ex = {
                "id": body.get("id") or str(uuid.uuid4()),
                "dataset_id": body.get("dataset_id"),
                "inputs": body.get("inputs") or {},
                "outputs": body.get("outputs"),
                "metadata": body.get("metadata"),
                "created_at": _now(),
                "modified_at": _now(),
            }
            self.state.examples[str(ex["id"])] = ex
            return 200, ex
        if req.method == "GET" and len(segments) == 1:
            return 200, self._list_examples(req)
        if len(segments) == 2 and segments[1] in self.state.examples:
            if req.method == "PATCH":
                self.state.examples[segments[1]].update(req.json())
            return 200, self.state.examples[segments[1]]
        if len(segments) == 2 and req.method == "GET":
            return 404, {"detail": "example not found"}
        return 200, {}

    def _list_examples(self, req: RecordedRequest) -> list[dict[str, Any]]:
        """``GET /examples``: filtered by ``dataset``, ``splits`` and ``as_of`` (a tag made with
        :meth:`FakeLangSmith.tag_version`), paged by ``offset`` / ``limit``."""
        dataset = (req.query.get("dataset") or [None])[0]
        splits = set(req.query.get("splits") or ())
        found = [
            ex
            for ex in self.state.examples.values()
            if dataset is None or ex.get("dataset_id") == dataset
        ]
        as_of = (req.query.get("as_of") or [None])[0]
        if as_of is not None and as_of != "latest":
            if (dataset, as_of) not in self.state.tags:
                return []
            cutoff = self.state.tags[(str(dataset), as_of)]
            order = list(self.state.examples)
            found = [ex for ex in found if order.index(str(ex["id"])) < cutoff]
        if splits:
            found = [
                ex
                for ex in found
                if splits & set((ex.get("metadata") or {}).get("dataset_split") or ["base"])
            ]
        offset = int((req.query.get("offset") or ["0"])[0])
        limit = int((req.query.get("limit") or ["100"])[0])
        return found[offset : offset + limit]
