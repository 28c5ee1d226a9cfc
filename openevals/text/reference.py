"""Classic reference metrics: BLEU, chrF, chrF++ and TER through sacrebleu; ROUGE-1/2/L/Lsum
through rouge-score. Needs the ``[text]`` extra (``pip install 'openevals-suite[text]'``).

Each metric comes in three forms:

* ``create_<metric>_evaluator`` / ``create_async_<metric>_evaluator``: one output against its
  reference(s) (sentence level), an evaluator like every other;
* ``<metric>_batch(outputs, reference_outputs)``: the corpus-level score of many outputs, computed
  by the library over the whole corpus (corpus BLEU pools n-gram counts, so it is not the mean of
  sentence BLEU; corpus ROUGE is the mean of the per-pair scores, as rouge-score reports it);
* :func:`reference_batch_metric`: the corpus score as a dataset-level metric of the batch runner
  (``evaluate(..., batch_metrics=[reference_batch_metric("bleu")])``), exact over the whole run
  whatever ``batch_size`` is.

Scores are the libraries' own, on their own scale: BLEU, chrF and TER in 0-100 (TER is an edit
rate: lower is better, and it can exceed 100); ROUGE F-measures in 0-1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from openevals._contract import EvaluatorInfo, run_scorer
from openevals._declare import async_twin, derive, evaluator_for
from openevals._repr import show
from openevals.text._metrics import (
    ROUGE_TYPES,
    Metric,
    as_hypothesis,
    as_references,
    bleu_metric,
    chrf_metric,
    rouge_metric,
    ter_metric,
)
from openevals.types import EvaluatorResult, SimpleAsyncEvaluator, SimpleEvaluator

__all__ = [
    "CorpusBatchMetric",
    "bleu_batch",
    "chrf_batch",
    "create_async_bleu_evaluator",
    "create_async_chrf_evaluator",
    "create_async_rouge_evaluator",
    "create_async_ter_evaluator",
    "create_bleu_evaluator",
    "create_chrf_evaluator",
    "create_rouge_evaluator",
    "create_ter_evaluator",
    "reference_batch_metric",
    "rouge_batch",
    "ter_batch",
]

_PASSES = ("outputs", "reference_outputs")
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _info(metric: Metric) -> EvaluatorInfo:
    return EvaluatorInfo(run_name=metric.name, feedback_keys=metric.keys, pure=True)


def _results(metric: Metric, values: dict[str, tuple[float, dict[str, Any]]]) -> Any:
    if metric.kind == "rouge":
        return [
            {"key": key, "score": score, "comment": None, "metadata": meta}
            for key, (score, meta) in values.items()
        ]
    (score, meta) = values[metric.keys[0]]
    return score, None, meta


def _scorer(metric: Metric) -> Callable[..., Any]:
    def score(*, outputs: Any, reference_outputs: Any) -> Any:
        hyp = as_hypothesis(outputs)
        refs = as_references(reference_outputs)
        return _results(metric, metric.sentence(hyp, refs))

    return score


def _evaluator(metric: Metric, doc: str | None, *, is_async: bool) -> Any:
    """The sync or async evaluator of ``metric``, documented by the sync factory's ``doc``."""
    return evaluator_for(
        is_async,
        _scorer(metric),
        _info(metric),
        passes=_PASSES,
        paired=True,
        name=f"{metric.name}_async" if is_async else metric.name,
        module=__name__,
        doc=doc,
        returns="list[EvaluatorResult]" if metric.kind == "rouge" else None,
    )


def _sentence_forms(
    corpus: Callable[Concatenate[Any, Any, _P], object], metric: Callable[..., Metric], doc: str
) -> tuple[Callable[_P, SimpleEvaluator], Callable[_P, SimpleAsyncEvaluator]]:
    """``create_<metric>_evaluator`` and its async twin, documented by ``doc``: the options of the
    corpus declaration ``corpus`` (those after ``outputs`` and ``reference_outputs``), the
    sentence-level evaluator."""

    def build(options: dict[str, Any], *, is_async: bool = False) -> Any:
        return _evaluator(metric(**options), doc, is_async=is_async)

    name = f"create_{metric.__name__.removesuffix('_metric')}_evaluator"
    factory = derive(corpus, build, name=name, returns="SimpleEvaluator", doc=doc, drop=2)
    sync = cast(Callable[_P, SimpleEvaluator], factory)
    return sync, async_twin(sync, partial(build, is_async=True), returns="SimpleAsyncEvaluator")


def _one(result: Any) -> EvaluatorResult:
    """The result kind of a corpus metric with one key."""
    return cast(EvaluatorResult, result)


def _each(result: Any) -> list[EvaluatorResult]:
    """The result kind of corpus ROUGE: one result per type."""
    return cast("list[EvaluatorResult]", result)


def _corpus_form(
    declared: Callable[_P, object], metric: Callable[..., Metric], kind: Callable[[Any], _R]
) -> Callable[_P, _R]:
    """``<metric>_batch``: the arguments of ``declared`` (``outputs``, ``reference_outputs`` and
    the options), the corpus-level result as ``kind`` types it; documented by ``declared``."""

    def build(options: dict[str, Any]) -> _R:
        outputs, reference_outputs = options.pop("outputs"), options.pop("reference_outputs")
        return kind(_corpus(metric(**options), outputs, reference_outputs))

    name = f"{metric.__name__.removesuffix('_metric')}_batch"
    returns = kind.__annotations__["return"]
    return derive(declared, build, name=name, returns=returns, doc=declared.__doc__ or "")


def _pairs(outputs: Any, reference_outputs: Any) -> tuple[list[str], list[list[str]]]:
    for value, name in ((outputs, "outputs"), (reference_outputs, "reference_outputs")):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
            raise TypeError(
                f"`{name}` must be a list with one entry per output; got {type(value).__name__}"
            )
    hyps = [as_hypothesis(v, f"outputs[{i}]") for i, v in enumerate(outputs)]
    refs = [as_references(v, f"reference_outputs[{i}]") for i, v in enumerate(reference_outputs)]
    if len(hyps) != len(refs):
        raise ValueError(
            f"`outputs` and `reference_outputs` must have the same length; got {len(hyps)} and "
            f"{len(refs)}"
        )
    return hyps, refs


def _corpus(metric: Metric, outputs: Any, reference_outputs: Any) -> Any:
    hyps, refs = _pairs(outputs, reference_outputs)
    values = metric.corpus(hyps, refs)
    return run_scorer(_info(metric), lambda: _results(metric, values))


# --------------------------------------------------------------------------- options
# Each public function is derived (openevals._declare.derive) from a dataclass whose fields are its
# arguments; a corpus form's dataclass adds the options to _Corpus's data (positional, first).


@dataclass(frozen=True)
class _Corpus:
    outputs: Sequence[Any]
    reference_outputs: Sequence[Any]


@dataclass(frozen=True, kw_only=True)
class _BleuCorpus(_Corpus):
    """Corpus BLEU of the outputs against their references (sacrebleu's ``corpus_score``: n-gram
    counts and lengths pooled over the corpus). ``reference_outputs[i]`` is a string or a list of
    references for ``outputs[i]``. Returns one result, key ``bleu``."""

    lowercase: bool = False
    tokenize: str | None = None
    smooth_method: str = "exp"
    smooth_value: float | None = None
    max_ngram_order: int = 4


@dataclass(frozen=True, kw_only=True)
class _BleuSentence(_BleuCorpus):
    """The options of create_bleu_evaluator: the corpus options and ``effective_order``."""

    effective_order: bool = True


@dataclass(frozen=True, kw_only=True)
class _ChrfCorpus(_Corpus):
    """Corpus chrF / chrF++ (sacrebleu's ``corpus_score``: character n-gram statistics pooled over
    the corpus). Returns one result, key ``chrf`` (``chrf++`` with ``word_order > 0``)."""

    char_order: int = 6
    word_order: int = 0
    beta: int = 2
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False
    feedback_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class _TerCorpus(_Corpus):
    """Corpus TER (sacrebleu's ``corpus_score``: total edits over total reference length).
    Returns one result, key ``ter``."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False


@dataclass(frozen=True, kw_only=True)
class _RougeCorpus(_Corpus):
    """Corpus ROUGE: per type, the mean F-measure over the pairs (mean precision and recall in
    metadata), one result per type."""

    rouge_types: Sequence[str] = ROUGE_TYPES
    use_stemmer: bool = False
    split_summaries: bool = False
    tokenizer: Any = None


# --------------------------------------------------------------------------- the public functions

bleu_batch = _corpus_form(_BleuCorpus, bleu_metric, _one)
create_bleu_evaluator, create_async_bleu_evaluator = _sentence_forms(
    _BleuSentence,
    bleu_metric,
    """Sentence BLEU (sacrebleu, 0-100) of ``outputs`` against ``reference_outputs`` (a string or
    a list of references), key ``bleu``; metadata: n-gram precisions, brevity penalty, lengths and
    sacrebleu's signature. Options are sacrebleu's ``BLEU`` options (``tokenize``: ``'13a'`` by
    default, ``'intl'``, ``'char'``, ``'zh'``, ``'none'``, ...). Raises ImportError naming the
    ``[text]`` extra when sacrebleu is missing, ValueError/TypeError for a bad option.""",
)

chrf_batch = _corpus_form(_ChrfCorpus, chrf_metric, _one)
create_chrf_evaluator, create_async_chrf_evaluator = _sentence_forms(
    chrf_batch,
    chrf_metric,
    """Sentence chrF (sacrebleu, 0-100), key ``chrf``; ``word_order=2`` gives chrF++ (key
    ``chrf++``). Options are sacrebleu's ``CHRF`` options. Raises ImportError naming the
    ``[text]`` extra when sacrebleu is missing, ValueError/TypeError for a bad option.""",
)

ter_batch = _corpus_form(_TerCorpus, ter_metric, _one)
create_ter_evaluator, create_async_ter_evaluator = _sentence_forms(
    ter_batch,
    ter_metric,
    """Sentence TER (sacrebleu; an edit rate in percent, lower is better), key ``ter``; metadata:
    the number of edits and the reference length. Options are sacrebleu's ``TER`` options.""",
)

rouge_batch = _corpus_form(_RougeCorpus, rouge_metric, _each)
create_rouge_evaluator, create_async_rouge_evaluator = _sentence_forms(
    rouge_batch,
    rouge_metric,
    """ROUGE F-measures (rouge-score, 0-1) of ``outputs`` against ``reference_outputs``: one result
    per type in ``rouge_types`` (key = the type, e.g. ``rouge1``, ``rougeLsum``), precision and
    recall in metadata. With several references, rouge-score's ``score_multi`` keeps the best one
    per type. ``tokenizer`` (an object with ``tokenize(text)``) is passed to ``RougeScorer``.""",
)


# --------------------------------------------------------------------------- batch-runner metric


class CorpusBatchMetric:
    """A dataset-level metric for ``evaluate(batch_metrics=[...])`` whose value is the corpus
    score of the whole run.

    Called with a batch (columns ``outputs`` and ``reference_outputs``) it returns that batch's
    corpus score ``{key: {"value": ..., ...}}``. The batch runner also uses :meth:`collect` on
    each batch and :meth:`finish` once at the end, so the run's value is computed over every row at
    once instead of summing per-batch values.
    """

    def __init__(self, metric: Metric, name: str) -> None:
        self.metric = metric
        self.__name__ = name

    def collect(self, batch: Mapping[str, Sequence[Any]]) -> tuple[list[str], list[list[str]]]:
        """The batch's hypotheses and references (checked)."""
        if "outputs" not in batch or "reference_outputs" not in batch:
            raise ValueError(
                f"batch metric {show(self.__name__)} needs the `outputs` and `reference_outputs` "
                f"columns; got {show(sorted(batch))}"
            )
        return _pairs(list(batch["outputs"]), list(batch["reference_outputs"]))

    def finish(self, parts: Sequence[tuple[list[str], list[list[str]]]]) -> dict[str, Any]:
        """The corpus score over all collected parts: ``{key: {"value": score, **metadata}}``."""
        hyps = [h for part in parts for h in part[0]]
        refs = [r for part in parts for r in part[1]]
        values = self.metric.corpus(hyps, refs)
        return {key: {"value": score, **meta} for key, (score, meta) in values.items()}

    def __call__(self, batch: Mapping[str, Sequence[Any]]) -> dict[str, Any]:
        return self.finish([self.collect(batch)])

    def __repr__(self) -> str:
        return f"CorpusBatchMetric({self.__name__!r})"


def reference_batch_metric(name: str, **options: Any) -> CorpusBatchMetric:
    """The corpus-level ``name`` metric (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``,
    ``"rouge"``) as a dataset-level metric of the batch runner, with the options of its ``*_batch``
    function. Raises ValueError for an unknown name or option."""
    import inspect

    # name -> (its *_batch function, whose keyword options it takes; the metric builder)
    kinds: dict[str, tuple[Callable[..., Any], Callable[..., Metric]]] = {
        "bleu": (bleu_batch, bleu_metric),
        "chrf": (chrf_batch, chrf_metric),
        "chrf++": (chrf_batch, chrf_metric),
        "ter": (ter_batch, ter_metric),
        "rouge": (rouge_batch, rouge_metric),
    }
    if name not in kinds:
        raise ValueError(f"`name` must be one of {sorted(kinds)}; got {show(name)}")
    function, make = kinds[name]
    accepted = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    allowed = {p.name for p in accepted}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(
            f"reference_batch_metric({show(name)}) does not take {show(unknown)}; accepted: "
            f"{sorted(allowed)}"
        )
    if name == "chrf++":
        options.setdefault("word_order", 2)
    settings = {p.name: options.get(p.name, p.default) for p in accepted}
    return CorpusBatchMetric(make(**settings), name)
