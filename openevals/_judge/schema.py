"""Output schemas for the judge: the default score schema and user-supplied ones.

A user schema may be a Pydantic model class, a TypedDict class, a JSON-schema dict, or an OpenAI
structured-output format (``{"name": ..., "schema": {...}}`` or ``{"type": "json_schema",
"json_schema": {...}}``). Everything is normalised into :class:`SchemaSpec` on a deep copy: the
caller's object is never modified.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from openevals._repr import show

ReturnKind = Literal["score", "dict", "pydantic", "text"]


@dataclass(frozen=True)
class SchemaSpec:
    """A JSON schema plus what the judge should do with answers that follow it."""

    name: str
    schema: dict[str, Any]
    strict: bool = True
    description: str | None = None
    kind: ReturnKind = "dict"
    pydantic_model: Any = None
    # For the default score schema: the validation rules.
    score_type: Literal["boolean", "continuous", "choices"] | None = None
    choices: tuple[float, ...] = field(default_factory=tuple)
    use_reasoning: bool = True
    # The caller's own schema (before strict-mode rewriting): answers are validated against it,
    # so optional fields stay optional on servers that do not enforce the sent schema.
    validation_schema: dict[str, Any] | None = None

    def openai_json_schema(self) -> dict[str, Any]:
        """The ``json_schema`` member of an OpenAI ``response_format``."""
        out: dict[str, Any] = {"name": self.name, "schema": self.schema, "strict": self.strict}
        if self.description:
            out["description"] = self.description
        return out

    def tool(self) -> dict[str, Any]:
        """The schema as one OpenAI function tool (for forced tool-call structured output)."""
        function: dict[str, Any] = {"name": self.name, "parameters": self.schema}
        function["description"] = self.description or "Record the structured answer."
        return {"type": "function", "function": function}

    def langchain_schema(self) -> Any:
        """What to hand to ``with_structured_output``: the Pydantic class, else a titled dict."""
        if self.pydantic_model is not None:
            return self.pydantic_model
        schema = copy.deepcopy(self.schema)
        schema.setdefault("title", self.name)
        if self.description:
            schema.setdefault("description", self.description)
        return schema


TEXT_ANSWER = SchemaSpec(
    name="text",
    schema={"type": "string"},
    strict=False,
    description="A free-text reply (the simulated user's next message).",
    kind="text",
)
"""The answer of a model call that wants the reply's text, not a JSON object: asked on the
``plain`` rung only (no response format, no tool, no JSON instruction); any non-empty text is
valid."""


def _score_property(
    continuous: bool, choices: Sequence[float] | None
) -> tuple[dict[str, Any], str]:
    if choices:
        listed = ", ".join(repr(c) for c in choices)
        return (
            {
                "type": "number",
                "enum": list(choices),
                "description": f"The score. It must be exactly one of: {listed}.",
            },
            "choices",
        )
    if continuous:
        return (
            {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "The score as a number from 0.0 (worst) to 1.0 (best), inclusive.",
            },
            "continuous",
        )
    return (
        {
            "type": "boolean",
            "description": "The verdict, true or false, with the meaning the instructions give it.",
        },
        "boolean",
    )


def default_score_schema(
    *, continuous: bool, choices: Sequence[float] | None, use_reasoning: bool
) -> SchemaSpec:
    """The schema the judge answers with when the caller gives none: reasoning first, then score."""
    score_prop, score_type = _score_property(continuous, choices)
    properties: dict[str, Any] = {}
    if use_reasoning:
        properties["reasoning"] = {
            "type": "string",
            "description": (
                "Step-by-step reasoning about the criteria, written before deciding; end by "
                "stating the score it leads to."
            ),
        }
    properties["score"] = score_prop
    schema = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return SchemaSpec(
        name="score",
        schema=schema,
        strict=True,
        description="The evaluation of the material against the criteria.",
        kind="score",
        score_type=score_type,  # type: ignore[arg-type]
        choices=tuple(float(c) for c in choices or ()),
        use_reasoning=use_reasoning,
    )


def strictify(schema: Any) -> Any:
    """Return a copy usable with OpenAI strict mode: closed objects, every property required."""
    if isinstance(schema, Mapping):
        out = {k: strictify(v) for k, v in schema.items()}
        if out.get("type") == "object" or "properties" in out:
            props = out.get("properties")
            if isinstance(props, Mapping):
                out.setdefault("additionalProperties", False)
                out["required"] = list(props)
        return out
    if isinstance(schema, list):
        return [strictify(v) for v in schema]
    return schema


def _is_pydantic_model_class(obj: Any) -> bool:
    return (
        isinstance(obj, type)
        and hasattr(obj, "model_json_schema")
        and hasattr(obj, "model_validate")
    )


def _is_typeddict_class(obj: Any) -> bool:
    return (
        isinstance(obj, type)
        and issubclass(obj, dict)
        and hasattr(obj, "__annotations__")
        and hasattr(obj, "__total__")
    )


def normalize_output_schema(output_schema: Any) -> SchemaSpec:
    """Turn any supported ``output_schema`` into a :class:`SchemaSpec` (never mutating it)."""
    is_model = _is_pydantic_model_class(output_schema)
    if is_model or _is_typeddict_class(output_schema):
        if is_model:
            schema = output_schema.model_json_schema()
        else:
            from pydantic import TypeAdapter

            schema = TypeAdapter(output_schema).json_schema()
        name = str(schema.pop("title", output_schema.__name__))
        description = schema.pop("description", None)
        if not is_model:
            description = description or (output_schema.__doc__ or "").strip() or None
        return SchemaSpec(
            name=_safe_name(name),
            schema=strictify(schema),
            description=description,
            kind="pydantic" if is_model else "dict",
            pydantic_model=output_schema if is_model else None,
        )
    if isinstance(output_schema, Mapping):
        data = copy.deepcopy(dict(output_schema))
        if data.get("type") == "json_schema" and isinstance(data.get("json_schema"), Mapping):
            data = dict(data["json_schema"])
        if "schema" in data and isinstance(data["schema"], Mapping) and "name" in data:
            original = dict(data["schema"])
            strict = bool(data.get("strict", True))
            return SchemaSpec(
                name=_safe_name(str(data["name"])),
                schema=strictify(original) if strict else original,
                strict=strict,
                description=data.get("description"),
                validation_schema=original,
            )
        if "properties" in data or data.get("type") == "object":
            name = str(data.pop("title", "output"))
            description = data.pop("description", None)
            return SchemaSpec(
                name=_safe_name(name),
                schema=strictify(data),
                description=description,
                validation_schema=data,
            )
        raise ValueError(
            "`output_schema` dict must be a JSON schema of an object (with 'properties') or an "
            "OpenAI structured-output format {'name': ..., 'schema': {...}}; got keys "
            f"{show(sorted(output_schema))}"
        )
    raise TypeError(
        "`output_schema` must be a Pydantic model class, a TypedDict class, a JSON-schema dict or an "
        f"OpenAI structured-output format dict; got {show(output_schema)}"
    )


def _safe_name(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)[:64]
    return cleaned or "output"
