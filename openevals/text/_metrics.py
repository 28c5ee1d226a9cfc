"""The reference metrics as computed by their libraries: sacrebleu (BLEU, chrF, chrF++, TER) and
rouge-score (ROUGE-N, ROUGE-L, ROUGE-Lsum).

Every score is the library's own, on the texts as given; ROUGE-L and ROUGE-Lsum equal rouge-score's
but their longest common subsequences are computed without its quadratic table
(:mod:`openevals.text._lcs`), and TER refuses texts past :data:`TER_MAX_WORDS` words. This
module holds what the public evaluators share: the ``[text]`` extra check, option checks, text
checks, and one :class:`Metric` per family with a sentence-level and a corpus-level computation.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openevals._repr import show

_EXTRA_HINT = "install the text extra: pip install 'openevals-suite[text]'"


def require(module: str, package: str) -> Any:
    """Import ``module`` or raise ImportError naming the ``[text]`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"this reference metric needs the `{package}` package, which is not installed; "
            f"{_EXTRA_HINT}"
        ) from exc


# --------------------------------------------------------------------------- text checks


def as_hypothesis(value: Any, name: str = "outputs") -> str:
    """The hypothesis text of ``outputs``: a string or a message dict's string ``content``."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return str(value["content"])
    raise TypeError(
        f"`{name}` must be a string (or a message dict with a string 'content'); got "
        f"{type(value).__name__}"
    )


def as_references(value: Any, name: str = "reference_outputs") -> list[str]:
    """The reference texts of ``reference_outputs``: one string (or message dict) or a non-empty
    list of them (several references for the same output)."""
    if isinstance(value, (str, Mapping)):
        return [as_hypothesis(value, name)]
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        if not value:
            raise ValueError(f"`{name}` must hold at least one reference text; got an empty list")
        return [as_hypothesis(v, f"{name}[{i}]") for i, v in enumerate(value)]
    raise TypeError(
        f"`{name}` must be a reference string or a list of reference strings; got "
        f"{type(value).__name__}"
    )


def _flag(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be True or False; got {show(value)}")
    return value


def _count(value: Any, name: str, *, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low}; got {show(value)}")
    return value


# --------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Metric:
    """One configured library metric.

    ``sentence(hyp, refs)`` and ``corpus(hyps, refs_per_hyp)`` return ``{key: (score, metadata)}``
    (one key for the sacrebleu metrics, one per ROUGE type).
    """

    name: str
    keys: tuple[str, ...]
    scorer: Any
    sentence_scorer: Any
    kind: str  # "sacrebleu" or "rouge"

    def sentence(self, hyp: str, refs: list[str]) -> dict[str, tuple[float, dict[str, Any]]]:
        if self.name == "ter":
            _check_ter_length(hyp, refs, None)
        if self.kind == "rouge":
            scores = self.scorer.score_multi(refs, hyp)
            return {key: _rouge_value(scores[key]) for key in self.keys}
        result = self.sentence_scorer.sentence_score(hyp, refs)
        return {self.keys[0]: (float(result.score), self._details(self.sentence_scorer, result))}

    def corpus(
        self, hyps: Sequence[str], refs: Sequence[list[str]]
    ) -> dict[str, tuple[float, dict[str, Any]]]:
        if len(hyps) != len(refs):
            raise ValueError(
                f"`outputs` and `reference_outputs` must have the same length; got {len(hyps)} "
                f"and {len(refs)}"
            )
        if self.kind == "rouge":
            return self._rouge_corpus(hyps, refs)
        if self.name == "ter":
            for index, (hyp, ref) in enumerate(zip(hyps, refs, strict=True)):
                _check_ter_length(hyp, ref, index)
        width = max((len(r) for r in refs), default=1)
        # sacrebleu takes reference streams; a segment with fewer references gets None.
        streams = [[r[i] if i < len(r) else None for r in refs] for i in range(width)]
        result = self.scorer.corpus_score(list(hyps), streams)
        details = self._details(self.scorer, result)
        details["segments"] = len(hyps)
        return {self.keys[0]: (float(result.score), details)}

    def _details(self, scorer: Any, result: Any) -> dict[str, Any]:
        details: dict[str, Any] = {"signature": str(scorer.get_signature())}
        if self.name == "bleu":
            details.update(
                precisions=[float(p) for p in result.precisions],
                bp=float(result.bp),
                sys_len=int(result.sys_len),
                ref_len=int(result.ref_len),
            )
        elif self.name == "ter":
            details.update(num_edits=float(result.num_edits), ref_length=float(result.ref_length))
        return details

    def _rouge_corpus(
        self, hyps: Sequence[str], refs: Sequence[list[str]]
    ) -> dict[str, tuple[float, dict[str, Any]]]:
        totals = {key: [0.0, 0.0, 0.0] for key in self.keys}
        for hyp, ref in zip(hyps, refs, strict=True):
            scores = self.scorer.score_multi(ref, hyp)
            for key in self.keys:
                score = scores[key]
                row = totals[key]
                row[0] += score.precision
                row[1] += score.recall
                row[2] += score.fmeasure
        n = max(len(hyps), 1)
        return {
            key: (p_r_f[2] / n, {"precision": p_r_f[0] / n, "recall": p_r_f[1] / n, "segments": n})
            for key, p_r_f in totals.items()
        }


TER_MAX_WORDS = 1_000
"""The longest text (in whitespace-separated words) TER scores: sacrebleu's shift search tries up
to 1,000 shifts, each costing a beam edit distance over the whole text, so its time grows with the
length and reaches minutes near this limit on repetitive text (12,000 words did not finish in
200 s). Its beam and shift limits are not options of sacrebleu's API, so a bounded TER would not
equal sacrebleu's (see docs/benchmarks.md, ``benchmarks/long_texts.py --ter-sizes``)."""


def _check_ter_length(hyp: str, refs: Sequence[str], segment: int | None) -> None:
    """``ValueError`` naming :data:`TER_MAX_WORDS` when a text is longer."""
    for name, text in (("outputs", hyp), *(("reference_outputs", r) for r in refs)):
        words = len(text.split())
        if words > TER_MAX_WORDS:
            where = "" if segment is None else f" (segment {segment})"
            raise ValueError(
                f"TER scores texts of at most TER_MAX_WORDS = {TER_MAX_WORDS} words; "
                f"`{name}`{where} has {words}. Its shift search grows with the length (minutes "
                "near the limit), so split long texts into sentences or paragraphs and score "
                "them as segments with ter_batch (corpus TER), or use chrF or ROUGE"
            )


def _rouge_value(score: Any) -> tuple[float, dict[str, Any]]:
    return float(score.fmeasure), {
        "precision": float(score.precision),
        "recall": float(score.recall),
    }


def bleu_metric(*, effective_order: bool = False, **options: Any) -> Metric:
    """sacrebleu BLEU with ``options`` (those of ``bleu_batch``: ``lowercase``, ``tokenize``,
    ``smooth_method``, ``smooth_value``, ``max_ngram_order``); the sentence form uses
    ``effective_order``, the corpus form leaves it off."""
    metrics = require("sacrebleu.metrics", "sacrebleu")
    bleu_cls = metrics.BLEU
    _flag(options["lowercase"], "lowercase")
    _flag(effective_order, "effective_order")
    tokenize, smooth_method = options["tokenize"], options["smooth_method"]
    if tokenize is not None and (
        not isinstance(tokenize, str) or tokenize not in bleu_cls.TOKENIZERS
    ):
        raise ValueError(
            f"`tokenize` must be one of {sorted(bleu_cls.TOKENIZERS)} or None (sacrebleu's default"
            f" '13a'); got {show(tokenize)}"
        )
    if not isinstance(smooth_method, str) or smooth_method not in bleu_cls.SMOOTH_DEFAULTS:
        raise ValueError(
            f"`smooth_method` must be one of {sorted(bleu_cls.SMOOTH_DEFAULTS)}; got "
            f"{show(smooth_method)}"
        )
    smooth_value = options["smooth_value"]
    if smooth_value is not None and (
        isinstance(smooth_value, bool) or not isinstance(smooth_value, (int, float))
    ):
        raise TypeError(f"`smooth_value` must be a number or None; got {show(smooth_value)}")
    _count(options["max_ngram_order"], "max_ngram_order", low=1)
    corpus = bleu_cls(**options, effective_order=False)
    sentence = bleu_cls(**options, effective_order=effective_order)
    return Metric("bleu", ("bleu",), corpus, sentence, "sacrebleu")


def chrf_metric(*, feedback_key: str | None, **options: Any) -> Metric:
    """sacrebleu chrF (``word_order=0``) or chrF++ (``word_order=2``) with ``options`` (those of
    ``chrf_batch`` but ``feedback_key``: ``char_order``, ``word_order``, ``beta``, ``lowercase``,
    ``whitespace``, ``eps_smoothing``)."""
    metrics = require("sacrebleu.metrics", "sacrebleu")
    for name, low in (("char_order", 1), ("word_order", 0), ("beta", 1)):
        _count(options[name], name, low=low)
    for name in ("lowercase", "whitespace", "eps_smoothing"):
        _flag(options[name], name)
    key = _key(feedback_key, "chrf++" if options["word_order"] > 0 else "chrf")
    scorer = metrics.CHRF(**options)
    return Metric("chrf", (key,), scorer, scorer, "sacrebleu")


def ter_metric(**flags: bool) -> Metric:
    """sacrebleu TER (an edit rate: lower is better) with ``flags`` (those of ``ter_batch``:
    ``normalized``, ``no_punct``, ``asian_support``, ``case_sensitive``)."""
    metrics = require("sacrebleu.metrics", "sacrebleu")
    for name, value in flags.items():
        _flag(value, name)
    scorer = metrics.TER(**flags)
    return Metric("ter", ("ter",), scorer, scorer, "sacrebleu")


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_ROUGE_TYPE = re.compile(r"rouge[1-9]|rougeL|rougeLsum")


def _check_sentence_data() -> None:
    """``split_summaries`` splits ROUGE-Lsum texts with nltk's ``sent_tokenize``, which needs the
    ``punkt_tab`` data that ``pip install`` does not bring: refuse at creation, with the fix,
    rather than raise nltk's LookupError on every call."""
    nltk = require("nltk", "rouge-score")
    try:
        nltk.data.find("tokenizers/punkt_tab")
    except LookupError:
        raise ValueError(
            "`split_summaries=True` splits ROUGE-Lsum texts into sentences with nltk, which needs "
            "its 'punkt_tab' data, not installed here: run `python -m nltk.downloader punkt_tab` "
            "once, or leave split_summaries off and put each sentence on its own line"
        ) from None


def rouge_metric(
    *,
    rouge_types: Sequence[str],
    use_stemmer: bool,
    split_summaries: bool,
    tokenizer: Any,
) -> Metric:
    """rouge-score's ``RougeScorer`` for these types; ``tokenizer`` is passed through (an object
    with a ``tokenize(text)`` method, e.g. from ``rouge_score.tokenizers``)."""
    require("rouge_score.rouge_scorer", "rouge-score")
    if isinstance(rouge_types, str) or not isinstance(rouge_types, Sequence):
        raise TypeError(
            f"`rouge_types` must be a list of ROUGE types such as {list(ROUGE_TYPES)}; got "
            f"{show(rouge_types)}"
        )
    types = tuple(rouge_types)
    bad = [t for t in types if not isinstance(t, str) or not _ROUGE_TYPE.fullmatch(t)]
    if bad or not types or len(set(types)) != len(types):
        raise ValueError(
            "`rouge_types` must be distinct ROUGE types 'rouge1'..'rouge9', 'rougeL' or "
            f"'rougeLsum'; got {show(list(types))}"
        )
    _flag(use_stemmer, "use_stemmer")
    _flag(split_summaries, "split_summaries")
    if split_summaries and "rougeLsum" in types:
        _check_sentence_data()
    if tokenizer is not None and not callable(getattr(tokenizer, "tokenize", None)):
        raise TypeError(
            "`tokenizer` must be None or an object with a tokenize(text) method (see "
            f"rouge_score.tokenizers); got {type(tokenizer).__name__}"
        )
    from openevals.text._lcs import RougeL

    scorer = RougeL(
        types, use_stemmer=use_stemmer, split_summaries=split_summaries, tokenizer=tokenizer
    )
    return Metric("rouge", types, scorer, scorer, "rouge")


def _key(value: str | None, default: str) -> str:
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`feedback_key` must be a non-empty string or None; got {show(value)}")
    return value
