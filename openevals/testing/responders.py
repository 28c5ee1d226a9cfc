"""A fake-server responder that answers any structured request with a minimal valid instance.

Used to run documentation examples (whose prompts and schemas vary) against the fake OpenAI
server: booleans are ``false``, numbers the first allowed value (or the middle of their range),
strings ``"example"``, arrays empty, objects with every property.
"""

from __future__ import annotations

from typing import Any

__all__ = ["instance_for", "schema_responder"]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {})
        return dict(node)
    return schema


def instance_for(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return instance_for(schema[key][0], root)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {k: instance_for(v, root) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("number", "integer"):
        low, high = schema.get("minimum", 0), schema.get("maximum", 1)
        middle = (low + high) / 2
        return int(middle) if kind == "integer" else float(middle)
    if kind == "null":
        return None
    return "example"


def _requested_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return dict(fmt["json_schema"]["schema"])
    if fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        return dict(fmt["schema"])
    tools = body.get("tools") or []
    if tools:
        return dict(tools[0]["function"].get("parameters") or {})
    return None


def schema_responder(body: dict[str, Any]) -> dict[str, Any]:
    """``FakeOpenAIServer.set_responder`` callback: a valid answer for whatever was asked."""
    schema = _requested_schema(body)
    if schema is None:
        return {"content": "An example reply."}
    return {"json": instance_for(schema)}
