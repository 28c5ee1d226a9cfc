"""The retrieval ranking metrics, each described once, and their configured form.

:data:`METRICS` holds one :class:`MetricSpec` per metric: its name (also the feedback key, with
``@k`` appended when ``k`` is given), the formula in words, the options it takes besides the
common ones (with their defaults and accepted values), a one-line description and its formula
(:mod:`openevals.rag._ranking_formulas`), which scores a single query as a batch of one.

The public functions of :mod:`openevals.rag.ranking` are derived from typed option dataclasses
(for readers and type checkers); ``tests/rag/test_ranking_table.py`` checks every one of them
against this table (parameter names, order, kinds, defaults and annotations), and their
docstrings are generated from it (:func:`docstring`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, cast, get_args

from openevals._repr import show
from openevals.rag import _ranking_formulas as formulas
from openevals.rag._items import ItemKey, Judged, judge, validate_key
from openevals.types import EvaluatorResult

RecallMode = Literal["multi_hit", "single_hit"]
PrecisionDenominator = Literal["k", "retrieved"]
APNormalization = Literal["relevant", "retrieved_relevant", "all_relevant"]
EmptyReference = Literal["zero", "one", "skip", "raise"]

DEFAULT_METRICS = ("recall", "precision", "mrr", "map", "ndcg", "hit_rate")


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Option:
    """One keyword option of the public functions."""

    name: str
    annotation: str
    """The annotation as the public signatures spell it."""
    default: Any
    doc: str
    choices: tuple[str, ...] = ()
    """Accepted values, for options typed by a ``Literal`` alias (checked at creation)."""


def _choice(name: str, alias: Any, default: str, doc: str) -> Option:
    return Option(name, alias_name(alias), default, doc, get_args(alias))


def alias_name(alias: Any) -> str:
    return next(name for name, value in _ALIASES.items() if value is alias)


_ALIASES = {
    "RecallMode": RecallMode,
    "PrecisionDenominator": PrecisionDenominator,
    "APNormalization": APNormalization,
    "EmptyReference": EmptyReference,
}

K = Option("k", "int | None", None, "score the first k retrieved positions (None: all of them)")
KEY = Option(
    "key",
    "ItemKey",
    None,
    "how items are identified: 'id', 'content', a callable item -> hashable, or None (the id "
    "when there is one, else the content, else the item itself)",
)
EMPTY_REFERENCE = _choice(
    "empty_reference",
    EmptyReference,
    "zero",
    "the score when the reference holds no relevant item: 0.0, 1.0, None (left out of batch "
    "means) or a ValueError",
)
FEEDBACK_KEY = Option(
    "feedback_key", "str | None", None, "the result's key (default: the metric name, @k)"
)
COMMON_OPTIONS = (K, KEY, EMPTY_REFERENCE, FEEDBACK_KEY)

Formula = Callable[..., tuple[Any, dict[str, list[Any]]]]


@dataclass(frozen=True)
class MetricSpec:
    """One ranking metric: what it computes and which options it takes."""

    name: str
    """Metric name and base feedback key (``name@k`` when ``k`` is given)."""
    summary: str
    """One-line description."""
    formula: str
    """The score, in words."""
    compute: Formula
    """The formula: a batch of judged queries -> per-query scores and metadata columns."""
    options: tuple[Option, ...] = ()
    """Options of this metric besides the common ones (they come right after ``k``)."""
    aliases: tuple[str, ...] = ()
    """Other names accepted by ``create_retrieval_evaluator(metrics=...)``."""
    uses_ideal: bool = False
    """Whether the formula reads the ideal gains (batches build them only then)."""

    @property
    def feedback_key(self) -> str:
        return f"{self.name}@k"


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "recall",
        "Recall of the top k retrieved items.",
        "relevant items in the top k / relevant items",
        formulas.recall,
        (
            _choice(
                "mode",
                RecallMode,
                "multi_hit",
                "'multi_hit': the fraction of relevant items found; 'single_hit': 1.0 when at "
                "least one relevant item is in the top k, else 0.0",
            ),
        ),
    ),
    MetricSpec(
        "precision",
        "Precision of the top k retrieved items.",
        "relevant items in the top k / k (without k: / items retrieved)",
        formulas.precision,
        (
            _choice(
                "denominator",
                PrecisionDenominator,
                "k",
                "'k': divide by k, the standard P@k; 'retrieved': by the items actually in the "
                "top k",
            ),
        ),
    ),
    MetricSpec(
        "hit_rate",
        "Whether a relevant item is in the top k.",
        "1.0 when a relevant item is in the top k, else 0.0",
        formulas.hit_rate,
    ),
    MetricSpec(
        "reciprocal_rank",
        "Reciprocal rank of the first relevant item in the top k; its batch mean is the MRR.",
        "1 / rank of the first relevant item in the top k (0.0 if none)",
        formulas.reciprocal_rank,
        aliases=("mrr",),
    ),
    MetricSpec(
        "average_precision",
        "Average precision of the top k; its batch mean is the MAP.",
        "the sum of precision@i over the ranks i <= k holding a relevant item, / the "
        "normaliser chosen by normalize_by",
        formulas.average_precision,
        (
            _choice(
                "normalize_by",
                APNormalization,
                "relevant",
                "'relevant': min(k, relevant items), so a perfect top k scores 1.0 (without k: "
                "relevant items, the TREC definition); 'all_relevant': every relevant item even "
                "when k is smaller, as trec_eval's map_cut_k and ranx's map@k; "
                "'retrieved_relevant': the relevant items found in the top k (graphrag-eval)",
            ),
        ),
        aliases=("map",),
    ),
    MetricSpec(
        "ndcg",
        "Normalised discounted cumulative gain of the top k.",
        "DCG / ideal DCG; gain = the reference item's relevance (1 when ungraded), discount = "
        "log2(rank + 1); the ideal list ranks the reference's relevances highest first",
        formulas.ndcg,
        uses_ideal=True,
    ),
)
BY_NAME: dict[str, MetricSpec] = {
    **{alias: spec for spec in METRICS for alias in spec.aliases},
    **{spec.name: spec for spec in METRICS},
}


def factory_options(spec: MetricSpec) -> tuple[Option, ...]:
    """Keyword options of ``create_<name>_evaluator`` (and its async twin), in order."""
    return (K, *spec.options, KEY, EMPTY_REFERENCE, FEEDBACK_KEY)


def batch_options(spec: MetricSpec) -> tuple[Option, ...]:
    """Keyword options of ``<name>_batch``, in order (after the two lists)."""
    return (K, *spec.options, KEY, EMPTY_REFERENCE)


SUITE_METRICS = Option(
    "metrics",
    "Sequence[str]",
    DEFAULT_METRICS,
    "metric names: " + ", ".join(" or ".join((s.name, *s.aliases)) for s in METRICS),
)
SUITE_K = Option(
    "k", "int | Sequence[int] | None", None, "one cutoff, a list of cutoffs, or None (all)"
)


def suite_options() -> tuple[Option, ...]:
    """Keyword options of ``create_retrieval_evaluator``: every metric's own options."""
    return (SUITE_METRICS, SUITE_K, *(o for s in METRICS for o in s.options), KEY, EMPTY_REFERENCE)


# --------------------------------------------------------------------------- docstrings


def _options_doc(options: Sequence[Option]) -> str:
    lines = []
    for option in options:
        accepted = f" ({' | '.join(map(repr, option.choices))})" if option.choices else ""
        lines.append(f"    {option.name}{accepted}, default {option.default!r}: {option.doc}.")
    return "\n".join(lines)


def docstring(name: str) -> str:
    """The docstring of the public ranking function ``name``, written from the table."""
    if name.endswith("_batch"):
        spec = BY_NAME[name.removesuffix("_batch")]
        head = (
            f"{spec.summary} Scores retrieved_lists[i] against reference_lists[i] for each "
            f"query and returns :class:`BatchScores` (per-query scores and their mean)."
        )
        options = batch_options(spec)
    elif name == "create_retrieval_evaluator":
        head = (
            "Several ranking metrics over one judged ranking; returns a list of results, one "
            "per metric and k (k may be a list, e.g. k=[1, 5, 10])."
        )
        options = suite_options()
    else:
        spec = BY_NAME[name.removeprefix("create_").removesuffix("_evaluator")]
        head = f"{spec.summary} Feedback key ``{spec.feedback_key}`` (``{spec.name}`` without k)."
        options = factory_options(spec)
    body = "" if name == "create_retrieval_evaluator" else f"\n\nScore: {spec.formula}."
    return f"{head}{body}\n\nOptions (keyword-only):\n{_options_doc(options)}\n"


# --------------------------------------------------------------------------- configured metrics


def _check_k(k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"`k` must be a positive int or None; got {type(k).__name__} {show(k)}")
    if k < 1:
        raise ValueError(f"`k` must be >= 1 (or None for the whole list); got {k}")
    return k


def _check_choice(option: Option, value: Any) -> Any:
    if value not in option.choices:
        raise ValueError(
            f"`{option.name}` must be one of {list(option.choices)!r}; got {show(value)}"
        )
    return value


def _check_feedback_key(feedback_key: Any, default: str) -> str:
    if feedback_key is None:
        return default
    if not isinstance(feedback_key, str) or not feedback_key:
        raise TypeError(f"`feedback_key` must be a non-empty string; got {show(feedback_key)}")
    return feedback_key


def empty_reference_error(feedback_key: str, param: str) -> ValueError:
    return ValueError(
        f"{feedback_key}: `{param}` holds no relevant item, so the metric is undefined "
        "(empty_reference='raise'); pass relevant items or choose "
        "empty_reference='zero'|'one'|'skip'"
    )


EMPTY_SCORES: dict[str, float | None] = {"zero": 0.0, "one": 1.0, "skip": None}


@dataclass(frozen=True)
class Metric:
    """One metric with validated options."""

    spec: MetricSpec
    feedback_key: str
    k: int | None
    options: Mapping[str, Any]
    """The metric's own options (``mode``, ``denominator``, ``normalize_by``)."""
    key: ItemKey
    empty_reference: EmptyReference
    formula: Formula = field(repr=False)
    """``spec.compute`` with this metric's own options bound."""

    @property
    def run_name(self) -> str:
        return self.feedback_key

    def result(self, judged: Judged) -> EvaluatorResult:
        one = formulas.batch_of_one(judged, self.k)
        metadata: dict[str, Any] = {
            "k": self.k,
            "relevant": judged.n_relevant,
            "retrieved": judged.retrieved,
            "retrieved_relevant": one.found,
        }
        if judged.duplicates:
            metadata["duplicates"] = judged.duplicates
        if judged.n_relevant == 0:
            if self.empty_reference == "raise":
                raise empty_reference_error(self.feedback_key, "reference_outputs")
            score = EMPTY_SCORES[self.empty_reference]
            return _result(self.feedback_key, score, self.empty_comment(), metadata)
        value, extra = self.formula(one, self.k)
        for name, column in extra.items():
            metadata[name] = column[0]
        return _result(self.feedback_key, float(value), None, metadata)

    def empty_comment(self) -> str:
        """The comment of a query whose reference holds no relevant item."""
        score = EMPTY_SCORES[self.empty_reference]
        return (
            f"reference_outputs holds no relevant item; scored {score} "
            f"(empty_reference={self.empty_reference!r})"
        )

    def score(
        self, *, outputs: Any = None, reference_outputs: Any = None
    ) -> tuple[float | None, str | None, dict[str, Any] | None]:
        r = self.result(judge(outputs, reference_outputs, self.key, self.k))
        return r["score"], r["comment"], r["metadata"]


def _result(
    key: str, score: float | None, comment: str | None, metadata: dict[str, Any]
) -> EvaluatorResult:
    # ``score`` is None only under empty_reference="skip" (LangSmith accepts score-less feedback).
    return cast(
        EvaluatorResult, {"key": key, "score": score, "comment": comment, "metadata": metadata}
    )


def build_metric(name: str, options: Mapping[str, Any]) -> Metric:
    """Check ``options`` (a public function's arguments, by name) and configure metric ``name``.

    Entries other than this metric's options (``outputs`` lists, ``feedback_key`` of a batch
    form that has none) are ignored.
    """
    spec = BY_NAME[name]
    k = _check_k(options.get("k"))
    own = {o.name: _check_choice(o, options.get(o.name, o.default)) for o in spec.options}
    key = validate_key(options.get("key"))
    empty = _check_choice(EMPTY_REFERENCE, options.get("empty_reference", "zero"))
    base = spec.name if k is None else f"{spec.name}@{k}"
    return Metric(
        spec=spec,
        feedback_key=_check_feedback_key(options.get("feedback_key"), base),
        k=k,
        options=own,
        key=key,
        empty_reference=empty,
        formula=partial(spec.compute, **own) if own else spec.compute,
    )


@dataclass(frozen=True)
class Suite:
    """Several metrics scored over one judged ranking (one judgement per call)."""

    metrics: tuple[Metric, ...]
    key: ItemKey
    limit: int | None
    """The largest k (None when some metric scores the whole list)."""
    run_name: str = "retrieval_metrics"

    @property
    def feedback_key(self) -> str:
        return self.run_name

    def score(self, *, outputs: Any = None, reference_outputs: Any = None) -> list[Any]:
        judged = judge(outputs, reference_outputs, self.key, self.limit)
        return [m.result(judged) for m in self.metrics]


def build_suite(options: Mapping[str, Any]) -> Suite:
    """Check the arguments of ``create_retrieval_evaluator`` and configure its metrics."""
    metrics = options["metrics"]
    accepted = sorted(BY_NAME)
    if isinstance(metrics, str) or not isinstance(metrics, (list, tuple)) or not metrics:
        raise TypeError(
            f"`metrics` must be a non-empty list/tuple of metric names from {accepted!r}; "
            f"got {show(metrics)}"
        )
    names: list[str] = []
    for m in metrics:
        if not isinstance(m, str) or m not in BY_NAME:
            raise ValueError(f"unknown metric {show(m)} in `metrics`; accepted: {accepted!r}")
        if BY_NAME[m].name not in names:
            names.append(BY_NAME[m].name)
    k = options["k"]
    if isinstance(k, (list, tuple)):
        if not k:
            raise ValueError("`k` must be an int, None or a non-empty list of ints; got []")
        ks = list(dict.fromkeys(k))
    else:
        ks = [k]
    built = tuple(build_metric(name, {**options, "k": one_k}) for name in names for one_k in ks)
    cutoffs = [m.k for m in built]
    limit = None if None in cutoffs else max(cast("list[int]", cutoffs))
    return Suite(metrics=built, key=validate_key(options["key"]), limit=limit)
