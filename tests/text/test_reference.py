"""Reference metrics: every score equals sacrebleu's / rouge-score's own."""

from __future__ import annotations

import asyncio
import copy
import importlib
import random
from statistics import mean
from typing import Any

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer, tokenizers
from sacrebleu.metrics import BLEU, CHRF, TER

from openevals.evaluation import BatchMetrics, evaluate
from openevals.evaluation.registry import SpecError, build_batch_metric, build_evaluator
from openevals.text import (
    bleu_batch,
    chrf_batch,
    create_async_bleu_evaluator,
    create_async_chrf_evaluator,
    create_async_rouge_evaluator,
    create_async_ter_evaluator,
    create_bleu_evaluator,
    create_chrf_evaluator,
    create_rouge_evaluator,
    create_ter_evaluator,
    reference_batch_metric,
    rouge_batch,
    ter_batch,
)

_WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "under",
    "mat",
    "house",
    "quickly",
    "slowly",
    "red",
    "green",
    "big",
    "small",
    "and",
    "or",
    "but",
    "then",
    "it",
    "was",
    "is",
    "were",
    "seen",
    "heard",
    "Paris",
    "Berlin",
    "model",
    "answer,",
    "question.",
    "report!",
    "data's",
    "x-ray",
]


def corpus(n: int, seed: int = 7) -> tuple[list[str], list[str]]:
    """``n`` deterministic (hypothesis, reference) pairs: references are random sentences,
    hypotheses are edited copies (dropped, swapped, replaced words), some empty-ish."""
    rng = random.Random(seed)
    hyps, refs = [], []
    for _ in range(n):
        ref = [rng.choice(_WORDS) for _ in range(rng.randint(3, 25))]
        hyp = list(ref)
        for _ in range(rng.randint(0, 6)):
            op = rng.random()
            if op < 0.3 and len(hyp) > 1:
                hyp.pop(rng.randrange(len(hyp)))
            elif op < 0.6:
                hyp[rng.randrange(len(hyp))] = rng.choice(_WORDS)
            elif len(hyp) > 1:
                i, j = rng.randrange(len(hyp)), rng.randrange(len(hyp))
                hyp[i], hyp[j] = hyp[j], hyp[i]
        if rng.random() < 0.05:
            hyp = hyp[:1]
        hyps.append(" ".join(hyp))
        refs.append(" ".join(ref))
    return hyps, refs


HYPS, REFS = corpus(1200)


# --------------------------------------------------------------------------- corpus equality


def test_corpus_scores_equal_the_libraries_on_1200_pairs() -> None:
    assert len(HYPS) >= 1000
    assert bleu_batch(HYPS, REFS)["score"] == BLEU().corpus_score(HYPS, [REFS]).score
    assert chrf_batch(HYPS, REFS)["score"] == CHRF().corpus_score(HYPS, [REFS]).score
    plus = chrf_batch(HYPS, REFS, word_order=2)
    assert (plus["key"], plus["score"]) == (
        "chrf++",
        CHRF(word_order=2).corpus_score(HYPS, [REFS]).score,
    )
    assert ter_batch(HYPS, REFS)["score"] == TER().corpus_score(HYPS, [REFS]).score
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    own = [scorer.score(r, h) for h, r in zip(HYPS, REFS, strict=True)]
    results = rouge_batch(HYPS, REFS)
    assert [r["key"] for r in results] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    for result in results:
        key = result["key"]
        assert result["score"] == pytest.approx(mean(s[key].fmeasure for s in own), abs=1e-12)
        assert result["metadata"]["recall"] == pytest.approx(
            mean(s[key].recall for s in own), abs=1e-12
        )


def test_sentence_scores_equal_the_libraries_on_every_pair() -> None:
    bleu, chrf, ter = create_bleu_evaluator(), create_chrf_evaluator(), create_ter_evaluator()
    rouge = create_rouge_evaluator(rouge_types=["rouge1", "rougeL"])
    scorer = rouge_scorer.RougeScorer(["rouge1", "rougeL"])
    for i, (hyp, ref) in enumerate(zip(HYPS, REFS, strict=True)):
        assert bleu(outputs=hyp, reference_outputs=ref)["score"] == (
            sacrebleu.sentence_bleu(hyp, [ref]).score
        )
        assert chrf(outputs=hyp, reference_outputs=ref)["score"] == (
            sacrebleu.sentence_chrf(hyp, [ref]).score
        )
        if i < 300:  # TER is the slow one
            assert ter(outputs=hyp, reference_outputs=ref)["score"] == (
                sacrebleu.sentence_ter(hyp, [ref]).score
            )
        own = scorer.score(ref, hyp)
        assert [(r["key"], r["score"]) for r in rouge(outputs=hyp, reference_outputs=ref)] == [
            ("rouge1", own["rouge1"].fmeasure),
            ("rougeL", own["rougeL"].fmeasure),
        ]


def test_corpus_bleu_is_not_the_mean_of_sentence_bleu() -> None:
    hyps, refs = HYPS[:200], REFS[:200]
    evaluator = create_bleu_evaluator()
    sentence_mean = mean(
        evaluator(outputs=h, reference_outputs=r)["score"] for h, r in zip(hyps, refs, strict=True)
    )
    corpus_score = bleu_batch(hyps, refs)["score"]
    assert corpus_score == BLEU().corpus_score(hyps, [refs]).score
    assert abs(corpus_score - sentence_mean) > 1.0
    # A two-pair example by hand: one perfect long pair and one 1-word miss.
    long = "the cat sat on the mat in the big red house"
    pair = bleu_batch([long, "dog"], [long, "cat"])["score"]
    scores = [evaluator(outputs=long, reference_outputs=long)["score"]]
    scores.append(evaluator(outputs="dog", reference_outputs="cat")["score"])
    assert scores == [pytest.approx(100.0), 0.0]
    assert pair == BLEU().corpus_score([long, "dog"], [[long, "cat"]]).score
    assert pair != mean(scores)


def test_multiple_references_equal_the_libraries() -> None:
    hyp = "the cat sat on a mat"
    refs = ["a cat sat on the mat", "the cat was sitting on the mat"]
    assert create_bleu_evaluator()(outputs=hyp, reference_outputs=refs)["score"] == (
        sacrebleu.sentence_bleu(hyp, refs).score
    )
    multi = create_rouge_evaluator(rouge_types=["rouge2"])(outputs=hyp, reference_outputs=refs)
    own = rouge_scorer.RougeScorer(["rouge2"]).score_multi(refs, hyp)["rouge2"]
    assert multi[0]["score"] == own.fmeasure
    # Corpus level with a varying number of references per output (sacrebleu pads with None).
    hyps = [hyp, "a dog ran"]
    by_output: list[Any] = [refs, "the dog ran"]
    assert bleu_batch(hyps, by_output)["score"] == (
        BLEU().corpus_score(hyps, [[refs[0], "the dog ran"], [refs[1], None]]).score
    )


# --------------------------------------------------------------------------- options


def test_tokenizer_and_options_are_passed_through() -> None:
    hyp, ref = "他们在公园里散步。", "他们正在公园里散步。"
    char = create_bleu_evaluator(tokenize="char")(outputs=hyp, reference_outputs=ref)
    assert (
        char["score"]
        == BLEU(tokenize="char", effective_order=True).sentence_score(hyp, [ref]).score
    )
    assert "tok:char" in char["metadata"]["signature"]
    default = create_bleu_evaluator()(outputs=hyp, reference_outputs=ref)
    assert default["score"] != char["score"]
    assert bleu_batch([hyp], [ref], tokenize="zh")["score"] == (
        BLEU(tokenize="zh").corpus_score([hyp], [[ref]]).score
    )
    lower = create_bleu_evaluator(lowercase=True, smooth_method="floor", max_ngram_order=2)
    assert lower(outputs="The Cat", reference_outputs="the cat sat")["score"] == (
        BLEU(lowercase=True, smooth_method="floor", max_ngram_order=2, effective_order=True)
        .sentence_score("The Cat", ["the cat sat"])
        .score
    )
    ter = create_ter_evaluator(case_sensitive=True, no_punct=True)
    assert ter(outputs="The cat!", reference_outputs="the cat")["score"] == (
        TER(case_sensitive=True, no_punct=True).sentence_score("The cat!", ["the cat"]).score
    )


def test_rouge_tokenizer_and_stemmer_are_passed_through() -> None:
    class Whitespace(tokenizers.Tokenizer):
        def tokenize(self, text: str) -> list[str]:
            return text.split()

    hyp, ref = "Running dogs, quickly!", "running dog quickly"
    own = rouge_scorer.RougeScorer(["rouge1"], tokenizer=Whitespace()).score(ref, hyp)
    ours = create_rouge_evaluator(rouge_types=["rouge1"], tokenizer=Whitespace())
    assert ours(outputs=hyp, reference_outputs=ref)[0]["score"] == own["rouge1"].fmeasure
    stem = create_rouge_evaluator(rouge_types=["rouge1"], use_stemmer=True)
    assert stem(outputs=hyp, reference_outputs=ref)[0]["score"] == (
        rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True).score(ref, hyp)["rouge1"].fmeasure
    )
    assert stem(outputs=hyp, reference_outputs=ref)[0]["score"] == 1.0


@pytest.mark.parametrize(
    ("factory", "options", "error", "words"),
    [
        (create_bleu_evaluator, {"tokenize": "words"}, ValueError, "`tokenize` must be one of"),
        (create_bleu_evaluator, {"smooth_method": "magic"}, ValueError, "smooth_method"),
        (create_bleu_evaluator, {"lowercase": "yes"}, TypeError, "lowercase"),
        (create_bleu_evaluator, {"max_ngram_order": 0}, ValueError, "max_ngram_order"),
        (create_chrf_evaluator, {"char_order": 0}, ValueError, "char_order"),
        (create_chrf_evaluator, {"feedback_key": ""}, ValueError, "feedback_key"),
        (create_ter_evaluator, {"normalized": 1}, TypeError, "normalized"),
        (create_rouge_evaluator, {"rouge_types": "rouge1"}, TypeError, "rouge_types"),
        (create_rouge_evaluator, {"rouge_types": ["rouge0"]}, ValueError, "rouge_types"),
        (create_rouge_evaluator, {"rouge_types": []}, ValueError, "rouge_types"),
        (create_rouge_evaluator, {"tokenizer": str.split}, TypeError, "tokenizer"),
    ],
)
def test_bad_options_raise_at_creation(
    factory: Any, options: dict[str, Any], error: type, words: str
) -> None:
    with pytest.raises(error, match=words):
        factory(**options)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"outputs": 3, "reference_outputs": "a"}, TypeError, "`outputs` must be a string"),
        ({"outputs": "a", "reference_outputs": []}, ValueError, "at least one reference"),
        ({"outputs": "a", "reference_outputs": ["a", 2]}, TypeError, r"reference_outputs\[1\]"),
        ({"outputs": "a", "reference_outputs": None}, TypeError, "reference_outputs"),
    ],
)
def test_bad_call_arguments_raise(kwargs: dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        create_bleu_evaluator()(**kwargs)


def test_batch_forms_check_their_lists() -> None:
    with pytest.raises(ValueError, match="same length"):
        bleu_batch(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="one entry per output"):
        bleu_batch("a b", ["a b"])
    with pytest.raises(TypeError, match=r"outputs\[1\]"):
        ter_batch(["a", None], ["a", "b"])


def test_message_dicts_are_read_and_not_mutated() -> None:
    outputs = {"role": "assistant", "content": "the cat sat"}
    refs = [{"role": "assistant", "content": "the cat sat down"}]
    before = copy.deepcopy((outputs, refs))
    result = create_chrf_evaluator()(outputs=outputs, reference_outputs=refs)
    assert result["score"] == sacrebleu.sentence_chrf("the cat sat", ["the cat sat down"]).score
    assert (outputs, refs) == before


def test_missing_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def fake(name: str, *args: Any) -> Any:
        if name.startswith(("sacrebleu", "rouge_score")):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(ImportError, match=r"openevals-suite\[text\]"):
        create_bleu_evaluator()
    with pytest.raises(ImportError, match="rouge-score"):
        create_rouge_evaluator()


# --------------------------------------------------------------------------- async


def test_async_twins_give_the_same_results() -> None:
    pairs = list(zip(HYPS[:50], REFS[:50], strict=True))
    made = [
        (create_bleu_evaluator(), create_async_bleu_evaluator()),
        (create_chrf_evaluator(word_order=2), create_async_chrf_evaluator(word_order=2)),
        (create_ter_evaluator(), create_async_ter_evaluator()),
        (create_rouge_evaluator(), create_async_rouge_evaluator()),
    ]

    async def run() -> list[Any]:
        return [await a(outputs=h, reference_outputs=r) for _, a in made for h, r in pairs]

    sync = [s(outputs=h, reference_outputs=r) for s, _ in made for h, r in pairs]
    assert asyncio.run(run()) == sync
    with pytest.raises(TypeError, match="outputs"):
        asyncio.run(made[0][1](outputs=1, reference_outputs="a"))


def test_result_shapes_and_names() -> None:
    result = create_bleu_evaluator()(outputs="the cat sat", reference_outputs="the cat sat")
    assert result["key"] == "bleu" and result["score"] == pytest.approx(100.0)
    assert result["comment"] is None
    assert set(result["metadata"]) == {"signature", "precisions", "bp", "sys_len", "ref_len"}
    assert create_bleu_evaluator().__name__ == "bleu"
    assert create_async_rouge_evaluator().__name__ == "rouge_async"
    ter = create_ter_evaluator()(outputs="a b c", reference_outputs="a b d")
    assert ter["key"] == "ter" and ter["metadata"]["num_edits"] == 1.0


# --------------------------------------------------------------------------- properties

_text = st.lists(st.sampled_from(_WORDS), max_size=15).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(hyp=_text, refs=st.lists(_text, min_size=1, max_size=3))
def test_property_sentence_scores_equal_the_libraries(hyp: str, refs: list[str]) -> None:
    assert create_bleu_evaluator()(outputs=hyp, reference_outputs=refs)["score"] == (
        sacrebleu.sentence_bleu(hyp, refs).score
    )
    assert create_ter_evaluator()(outputs=hyp, reference_outputs=refs)["score"] == (
        sacrebleu.sentence_ter(hyp, refs).score
    )
    scores = rouge_scorer.RougeScorer(["rougeLsum"]).score_multi(refs, hyp)
    rouge = create_rouge_evaluator(rouge_types=["rougeLsum"])
    assert rouge(outputs=hyp, reference_outputs=refs)[0]["score"] == scores["rougeLsum"].fmeasure


@settings(max_examples=8, deadline=None)
@given(pairs=st.lists(st.tuples(_text, _text), min_size=1, max_size=12), size=st.integers(1, 5))
def test_property_batch_runner_value_is_the_whole_corpus_score(
    pairs: list[tuple[str, str]], size: int
) -> None:
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    data = [{"outputs": h, "reference_outputs": r} for h, r in pairs]
    result = evaluate(
        data,
        ["exact_match"],
        batch_metrics=BatchMetrics(["bleu", "chrf"], batch_size=size),
        progress=False,
    )
    assert result.batch_metrics["bleu"]["value"] == BLEU().corpus_score(hyps, [refs]).score
    assert result.batch_metrics["chrf"]["value"] == CHRF().corpus_score(hyps, [refs]).score


# --------------------------------------------------------------------------- runner and CLI names


def test_batch_runner_corpus_metrics_are_exact_across_batches() -> None:
    hyps, refs = HYPS[:300], REFS[:300]
    data = [{"outputs": h, "reference_outputs": r} for h, r in zip(hyps, refs, strict=True)]
    result = evaluate(
        data,
        ["bleu", "rouge:rouge_types=rouge1,rougeL"],
        batch_metrics=BatchMetrics(
            [
                "bleu",
                reference_batch_metric("chrf++"),
                "ter:case_sensitive=true",
                "rouge:rouge_types=rougeL",
            ],
            batch_size=64,
        ),
        progress=False,
    )
    metrics = result.batch_metrics
    assert metrics["bleu"]["value"] == BLEU().corpus_score(hyps, [refs]).score
    assert metrics["bleu"]["batches"] == 5
    assert metrics["chrf++"]["value"] == CHRF(word_order=2).corpus_score(hyps, [refs]).score
    assert metrics["ter"]["value"] == TER(case_sensitive=True).corpus_score(hyps, [refs]).score
    assert metrics["rougeL"]["value"] == pytest.approx(
        rouge_batch(hyps, refs, rouge_types=["rougeL"])[0]["score"]
    )
    # The per-row evaluators of the same names ran too.
    row = result.rows[0]
    keys = {r["key"] for e in row["evaluations"].values() for r in e["results"]}
    assert keys == {"bleu", "rouge1", "rougeL"}


def test_a_bad_row_is_recorded_not_scored() -> None:
    data = [
        {"outputs": "a b", "reference_outputs": "a b"},
        {"outputs": 5, "reference_outputs": "x"},
    ]
    result = evaluate(
        data, ["exact_match"], batch_metrics=BatchMetrics(["bleu"], batch_size=10), progress=False
    )
    assert "bleu" not in result.batch_metrics
    assert any("outputs[1]" in str(e) for e in result.summary["batch_metric_errors"])


def test_registry_names() -> None:
    spec = build_evaluator("bleu:tokenize=char:lowercase=true")
    hyp, ref = "Ab cd", "ab ce"
    assert spec.evaluator(outputs=hyp, reference_outputs=ref)["score"] == (
        BLEU(tokenize="char", lowercase=True, effective_order=True).sentence_score(hyp, [ref]).score
    )
    assert spec.inline
    plus = build_evaluator("chrf++").evaluator(outputs=hyp, reference_outputs=ref)
    assert plus["key"] == "chrf++"
    with pytest.raises(SpecError, match="does not take"):
        build_evaluator("ter:tokenize=char")
    with pytest.raises(SpecError, match="unknown batch metric"):
        build_batch_metric("meteor")
    with pytest.raises(SpecError, match="tokenize"):
        build_batch_metric("bleu:tokenize=nope")
    with pytest.raises(ValueError, match="does not take"):
        reference_batch_metric("rouge", tokenize="13a")


def test_split_summaries_without_nltk_data_is_refused_at_creation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """issue 43: nltk's LookupError on every call after a plain ``pip install``; now the factory
    refuses with the fix, and accepts the option once the data is there."""
    import nltk

    def missing(resource: str, *args: Any, **kwargs: Any) -> Any:
        raise LookupError(resource)

    monkeypatch.setattr(nltk.data, "find", missing)
    with pytest.raises(ValueError, match=r"split_summaries=True.*nltk\.downloader punkt_tab"):
        create_rouge_evaluator(rouge_types=["rougeLsum"], split_summaries=True)
    # The option only affects ROUGE-Lsum: other types need no sentence data.
    create_rouge_evaluator(rouge_types=["rouge1"], split_summaries=True)
    monkeypatch.setattr(nltk.data, "find", lambda resource, *a, **k: resource)
    evaluator = create_rouge_evaluator(rouge_types=["rougeLsum"], split_summaries=True)
    assert callable(evaluator)
