"""The evaluators of a batch run: resolving ``evaluators=``, the arguments of one call, and what
a call returns.

``evaluators=`` may be callables, :class:`~openevals.evaluation.spec.EvaluatorSpec` objects,
registry names (``"exact_match"``, ``"recall:k=5"``) or a dict of name -> any of those. Each
becomes a :class:`RunEvaluator`: a unique name (it identifies finished work on resume), the
callable, the keyword arguments it accepts, its field mapping, and its
:class:`~openevals._contract.EvaluatorInfo` (``None`` for a foreign callable).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._contract import (
    EvaluatorInfo,
    async_twin_of,
    display_name,
    info_of,
    is_async_callable,
)
from openevals._judge.cache import active_cache
from openevals._repr import show
from openevals.data.columns import GRAPHRAG_COLUMNS
from openevals.data.rows import MISSING, field_at
from openevals.evaluation.cache import CountingCache
from openevals.evaluation.fingerprint import evaluator_fingerprint
from openevals.evaluation.pricing import add_usage, normalize_usage
from openevals.evaluation.records import Outcome
from openevals.evaluation.spec import EvaluatorSpec

__all__ = [
    "Outcome",
    "RunEvaluator",
    "counting_cache",
    "normalize_many",
    "normalize_results",
    "prepare_evaluators",
    "refuse_missing_outputs",
    "usage_of",
]

InThread = Callable[[Callable[[], Any]], Awaitable[Any]]


@dataclass(frozen=True)
class RunEvaluator:
    """One evaluator of a run, inspected once."""

    name: str
    fn: Callable[..., Any]
    info: EvaluatorInfo | None
    is_async: bool
    accepts: frozenset[str] | None
    fields: Mapping[str, str]
    inline: bool
    requires: frozenset[str] = frozenset()
    """The row fields it cannot be called without (required keyword parameters, through
    ``fields``); only the first part of a dotted path."""
    fail_fast: bool = True
    """Identical failures of its first evaluations stop the run (:mod:`.failfast`)."""
    fingerprint: str = ""
    """Its identity as a hash (:mod:`.fingerprint`): a recorded pair of another is not reused."""

    def kwargs_for(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of one call: the row fields it accepts, mapped by ``fields``."""
        view: Mapping[str, Any] = fields
        if self.fields:
            mapped = dict(fields)
            for arg, path in self.fields.items():
                value = field_at(fields, path)
                if value is MISSING:
                    raise KeyError(
                        f"evaluator {show(self.name)} reads {show(arg)} from row field "
                        f"{show(path)}, which this row does not have (fields: "
                        f"{show(sorted(fields))})"
                    )
                mapped[arg] = value
            view = mapped
        if self.accepts is None:
            return dict(view)
        return {k: v for k, v in view.items() if k in self.accepts}

    def call_inline(self, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Call it on this thread (cheap, pure, sync evaluators); returns normalised results."""
        value = self.fn(**self.kwargs_for(fields))
        if inspect.isawaitable(value):
            close = getattr(value, "close", None)
            if callable(close):
                close()
            raise TypeError(
                f"evaluator {show(self.name)} was marked inline but returned an awaitable"
            )
        return normalize_results(value, self.name)

    async def call(self, fields: Mapping[str, Any], in_thread: InThread) -> list[dict[str, Any]]:
        """Await it (async evaluators) or run it through ``in_thread``; normalised results."""
        kwargs = self.kwargs_for(fields)
        if self.is_async:
            value = await self.fn(**kwargs)
        else:
            value = await in_thread(functools.partial(self.fn, **kwargs))
        if inspect.isawaitable(value):
            value = await value
        return normalize_results(value, self.name)


class counting_cache:  # used like a function: ``with counting_cache(cache) as counting:``
    """Make ``cache`` the judge cache of the calls inside, counting their hits and misses
    (:attr:`counts`; ``None``: no cache, nothing to count)."""

    __slots__ = ("cache", "counting", "token")

    def __init__(self, cache: Any) -> None:
        self.cache = cache
        self.counting: CountingCache | None = None
        self.token: Any = None

    def __enter__(self) -> counting_cache:
        if self.cache is not None:
            self.counting = CountingCache(self.cache)
            self.token = active_cache.set(self.counting)
        return self

    @property
    def counts(self) -> tuple[int, int] | None:
        counting = self.counting
        return None if counting is None else (counting.hits, counting.misses)

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            active_cache.reset(self.token)


def _keywords(
    fn: Callable[..., Any], fields: Mapping[str, str]
) -> tuple[frozenset[str] | None, frozenset[str]]:
    """``(accepts, requires)`` of ``fn``: the keyword names it accepts (``None`` when it takes
    ``**kwargs`` or is opaque), and the row fields a call needs: its keyword parameters without a
    default, each read from the row field ``fields`` maps it to (the field of its own name by
    default)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None, frozenset()
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    keyword = [p for p in params if p.kind in kinds]
    requires = frozenset(
        fields.get(p.name, p.name).partition(".")[0] for p in keyword if p.default is p.empty
    )
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None, requires
    return frozenset(p.name for p in keyword), requires


def _provides_outputs(data: Any, fields: frozenset[str] | None) -> bool | None:
    """Can a row of ``data`` have ``outputs`` (under its own or its graphrag-eval name)? Known
    for tables (``fields``, their columns) and a non-empty list of dicts (any row holds it);
    ``None`` for streams and files, which are not read ahead."""
    if fields is not None:
        return "outputs" in fields
    if not isinstance(data, (list, tuple)) or not data:
        return None
    names = ("outputs", *(col for col, f in GRAPHRAG_COLUMNS.items() if f == "outputs"))
    return any(isinstance(row, Mapping) and any(n in row for n in names) for row in data)


def refuse_missing_outputs(
    evaluators: Sequence[RunEvaluator], data: Any, fields: frozenset[str] | None, source: str
) -> None:
    """Refuse, before any call, a run whose ``data`` has no ``outputs`` at all (``fields``: a
    table's row fields, if known) while an evaluator requires them and no ``target`` makes them.

    Raises:
        ValueError: naming the missing column, the evaluators that need it and ``target=``.
    """
    needing = [ev.name for ev in evaluators if "outputs" in ev.requires]
    if not needing or _provides_outputs(data, fields) is not False:
        return
    raise ValueError(
        f"{source} has no 'outputs' (no column or row field of that name), and "
        f"evaluator{'s' if len(needing) > 1 else ''} "
        f"{', '.join(show(n) for n in needing[:5])}{', ...' if len(needing) > 5 else ''} "
        f"{'need' if len(needing) > 1 else 'needs'} it (a required `outputs` argument); add the "
        "outputs to score as an 'outputs' column, or pass target= (a function of the row's "
        "inputs) to produce them"
    )


def _items(evaluators: Any) -> list[tuple[str | None, Any]]:
    if isinstance(evaluators, Mapping):
        return list(evaluators.items())
    if callable(evaluators) or isinstance(evaluators, (str, EvaluatorSpec)):
        return [(None, evaluators)]
    if isinstance(evaluators, Iterable):
        return [(None, e) for e in evaluators]
    raise TypeError(
        "evaluators must be a list of evaluator callables (or names such as 'exact_match'), "
        f"or a dict of name -> evaluator; got {type(evaluators).__name__}"
    )


def _spec_of(item: Any, model: str | None) -> EvaluatorSpec:
    if isinstance(item, str):
        from openevals.evaluation.registry import build_evaluator

        return build_evaluator(item, model=model)
    if isinstance(item, EvaluatorSpec):
        return item
    if callable(item):
        return EvaluatorSpec(evaluator=item)
    raise TypeError(
        "each evaluator must be a callable, an EvaluatorSpec or a name such as "
        f"'exact_match'; got {type(item).__name__}"
    )


def prepare_evaluators(evaluators: Any, *, model: str | None = None) -> list[RunEvaluator]:
    """Resolve the ``evaluators=`` argument into named, inspected evaluators."""
    items = _items(evaluators)
    if not items:
        raise ValueError("evaluators is empty; pass at least one evaluator")
    out: list[RunEvaluator] = []
    used: set[str] = set()
    for explicit, item in items:
        if explicit is not None and (not isinstance(explicit, str) or not explicit):
            raise TypeError(f"evaluator names must be non-empty strings; got {show(explicit)}")
        spec = _spec_of(item, model)
        given = explicit or spec.name
        name = given or display_name(spec.evaluator)
        if name in used:
            if given is not None:
                raise ValueError(
                    f"evaluator name {show(name)} is used twice; names identify results (and "
                    "finished work on resume), so give each evaluator its own name"
                )
            n = 2
            while f"{name}_{n}" in used:
                n += 1
            name = f"{name}_{n}"
        used.add(name)
        fn = spec.evaluator
        info = info_of(fn)
        is_async = is_async_callable(fn)
        inline = spec.inline if spec.inline is not None else info is not None and info.pure
        # A sync judge that owns its client is awaited through its async twin: no worker thread.
        twin = None if is_async or inline else async_twin_of(fn)
        accepts, requires = _keywords(fn, spec.fields or {})
        out.append(
            RunEvaluator(
                name=name,
                fn=fn if twin is None else twin,
                info=info,
                is_async=is_async or twin is not None,
                accepts=accepts,
                fields=dict(spec.fields or {}),
                inline=inline and not is_async,
                requires=requires,
                fail_fast=spec.fail_fast,
                fingerprint=evaluator_fingerprint(name, fn, info, spec.fields or {}),
            )
        )
    return out


# --------------------------------------------------------------------------- what a call returns


_RESULT_KEYS = frozenset({"key", "score", "comment", "metadata"})


def _clean_result(value: Mapping[str, Any]) -> dict[str, Any]:
    out = {
        "key": value["key"],
        "score": value["score"],
        "comment": value.get("comment"),
        "metadata": value.get("metadata"),
    }
    if value.get("source_run_id") is not None:
        out["source_run_id"] = value["source_run_id"]
    return out


def normalize_results(value: Any, name: str) -> list[dict[str, Any]]:
    """An evaluator's return value as a list of ``EvaluatorResult`` dicts (``TypeError`` if it
    is none of the accepted shapes)."""
    if type(value) is dict and value.keys() == _RESULT_KEYS:  # already clean: kept as it is
        return [value]
    if isinstance(value, Mapping):
        if "key" in value and "score" in value:
            return [_clean_result(value)]
        if "score" in value:
            comment = value.get("reasoning", value.get("comment"))
            return [{"key": name, "score": value["score"], "comment": comment, "metadata": None}]
        return [{"key": name, "score": None, "comment": None, "metadata": {"value": dict(value)}}]
    if isinstance(value, list) and all(
        isinstance(v, Mapping) and "key" in v and "score" in v for v in value
    ):
        return [_clean_result(v) for v in value]
    if isinstance(value, (bool, int, float)):
        return [{"key": name, "score": value, "comment": None, "metadata": None}]
    raise TypeError(
        f"evaluator {show(name)} returned {type(value).__name__}; expected an EvaluatorResult dict "
        "({'key', 'score', ...}), a list of them, or a number/bool"
    )


def normalize_many(values: Sequence[Any], name: str) -> list[list[dict[str, Any]]]:
    """:func:`normalize_results` of each of ``values`` (a batch form's return value), with the
    common case - every value a clean result dict - checked in one pass."""
    if all(type(v) is dict and v.keys() == _RESULT_KEYS for v in values):
        return [[v] for v in values]
    return [normalize_results(v, name) for v in values]


def usage_of(results: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """The token usage reported in the results' metadata (each usage dict counted once)."""
    total: dict[str, int] | None = None
    seen: set[int] = set()
    for result in results:
        metadata = result.get("metadata")
        if not isinstance(metadata, Mapping):
            continue
        raw = metadata.get("usage")
        if raw is None or id(raw) in seen:
            continue
        seen.add(id(raw))
        total = add_usage(total, normalize_usage(raw))
    return total
