"""Token usage bookkeeping and a small, overridable price table for cost estimates.

Prices are US dollars per million tokens, ``(input, output)``. They are list prices at the time of
writing and only meant for rough estimates: pass ``budget=Budget(prices={"my-model": (0.5, 1.5)})``
to ``evaluate`` (or ``{"gpt-4.1-mini": {"input": 0.4, "output": 1.6}}``) to add or override
entries; :class:`Budget`'s ``max_cost`` stops a run once its estimated cost reaches the cap.
A model name matches an entry exactly, else the longest entry it starts with (so dated snapshots
such as ``gpt-4.1-mini-2025-04-14`` use the ``gpt-4.1-mini`` price); unknown models get no cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from openevals._repr import show

__all__ = [
    "DEFAULT_PRICES",
    "Budget",
    "add_usage",
    "budget_of",
    "estimate_cost",
    "merge_prices",
    "normalize_usage",
    "price_for",
]

DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.0),
    "gpt-4o-mini": (0.15, 0.60),
    "o3": (2.0, 8.0),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-5-haiku": (0.80, 4.0),
    "claude-3-5-sonnet": (3.0, 15.0),
}

_USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


def _price_pair(name: str, value: Any) -> tuple[float, float]:
    if isinstance(value, Mapping):
        try:
            pair = (value["input"], value["output"])
        except KeyError:
            raise ValueError(
                f"prices[{show(name)}] must have 'input' and 'output' (USD per 1M tokens); got "
                f"keys {show(sorted(value))}"
            ) from None
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        raise TypeError(
            f"prices[{show(name)}] must be (input, output) or {{'input': ..., 'output': ...}} "
            f"in USD per 1M tokens; got {show(value)}"
        )
    out = []
    for part in pair:
        if isinstance(part, bool) or not isinstance(part, (int, float)) or part < 0:
            raise ValueError(
                f"prices[{show(name)}] must hold non-negative numbers; got {show(value)}"
            )
        out.append(float(part))
    return (out[0], out[1])


def merge_prices(overrides: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """The default table updated with ``overrides`` (validated; the argument is not modified)."""
    table = dict(DEFAULT_PRICES)
    if overrides is None:
        return table
    if not isinstance(overrides, Mapping):
        raise TypeError(
            f"prices must be a dict of model name -> (input, output); got {type(overrides).__name__}"
        )
    for name, value in overrides.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"prices keys must be model names (str); got {show(name)}")
        table[name] = _price_pair(name, value)
    return table


def price_for(
    model: str | None, prices: Mapping[str, tuple[float, float]]
) -> tuple[float, float] | None:
    """The ``(input, output)`` price of ``model``: exact match, else the longest prefix match."""
    if not model:
        return None
    name = model.split(":", 1)[1] if ":" in model else model
    exact = prices.get(name)
    if exact is not None:
        return exact
    best: str | None = None
    for entry in prices:
        if name.startswith(entry) and (best is None or len(entry) > len(best)):
            best = entry
    return prices[best] if best is not None else None


def normalize_usage(value: Any) -> dict[str, int] | None:
    """A usage mapping as ``{input_tokens, output_tokens, total_tokens}`` (``None`` if not one).

    Accepts our keys and OpenAI's (``prompt_tokens`` / ``completion_tokens``).
    """
    if not isinstance(value, Mapping):
        return None
    raw_in = value.get("input_tokens", value.get("prompt_tokens"))
    raw_out = value.get("output_tokens", value.get("completion_tokens"))
    raw_total = value.get("total_tokens")
    if raw_in is None and raw_out is None and raw_total is None:
        return None
    try:
        tokens_in = int(raw_in or 0)
        tokens_out = int(raw_out or 0)
        total = int(raw_total) if raw_total is not None else tokens_in + tokens_out
    except (TypeError, ValueError):
        return None
    return {"input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": total}


def add_usage(
    total: dict[str, int] | None, more: Mapping[str, int] | None
) -> dict[str, int] | None:
    """``total + more`` key by key (either may be ``None``); returns a new dict."""
    if more is None:
        return None if total is None else dict(total)
    base: dict[str, int] = dict(total) if total is not None else {k: 0 for k in _USAGE_KEYS}
    for key in _USAGE_KEYS:
        base[key] = base.get(key, 0) + int(more.get(key, 0))
    return base


def estimate_cost(
    model: str | None, usage: Mapping[str, int] | None, prices: Mapping[str, tuple[float, float]]
) -> float | None:
    """Estimated USD cost of ``usage`` on ``model``; ``None`` when the model has no price."""
    if usage is None:
        return None
    price = price_for(model, prices)
    if price is None:
        return None
    return (
        usage.get("input_tokens", 0) * price[0] + usage.get("output_tokens", 0) * price[1]
    ) / 1e6


@dataclass(frozen=True, kw_only=True)
class Budget:
    """The money side of a run: ``evaluate(..., budget=Budget(prices=..., max_cost=...))``.

    Args:
        prices: model -> ``(input, output)`` USD per 1M tokens (or ``{"input": ...,
            "output": ...}``), merged over :data:`DEFAULT_PRICES`; every cost the run reports
            (per evaluation, per evaluator, in total) is estimated with them.
        max_cost: a cap in USD on the estimated cost of this run's own calls (pairs resumed from
            an ``output=`` file cost nothing again). Once the cost reaches it, no new row
            starts; rows already started finish (so the run may end a little past the cap),
            every finished row is kept, and the result says where it stopped
            (``result.stopped``). A rerun with the same ``output=`` resumes where it stopped.
            Costs come from the token usage judges report and the prices: a model without a
            price costs nothing, so it never reaches the cap.

    Raises:
        TypeError / ValueError: ``prices`` not a dict of model -> price pair, or ``max_cost``
            not a number >= 0 (naming it).
    """

    prices: Mapping[str, Any] | None = None
    max_cost: float | None = None
    table: dict[str, tuple[float, float]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", merge_prices(self.prices))
        if self.prices is not None:
            object.__setattr__(self, "prices", dict(self.prices))
        max_cost = self.max_cost
        if max_cost is None:
            return
        if isinstance(max_cost, bool) or not isinstance(max_cost, (int, float)):
            raise TypeError(
                "Budget(max_cost=) must be a number of US dollars or None; got "
                f"{type(max_cost).__name__} {show(max_cost)}"
            )
        if not math.isfinite(max_cost) or max_cost < 0:
            raise ValueError(
                f"Budget(max_cost=) must be a finite number >= 0 (US dollars); got {show(max_cost)}"
            )
        object.__setattr__(self, "max_cost", float(max_cost))

    def reached(self, spent: float) -> bool:
        """Whether a run that has spent ``spent`` USD must start nothing new."""
        return self.max_cost is not None and spent >= self.max_cost


def budget_of(value: Any) -> Budget:
    """``budget=`` of ``evaluate``: a :class:`Budget`, or ``None`` for the default prices and no
    cap."""
    if value is None:
        return Budget()
    if not isinstance(value, Budget):
        raise TypeError(
            "budget must be a Budget(prices=..., max_cost=...) or None; got "
            f"{type(value).__name__} {show(value)}"
        )
    return value
