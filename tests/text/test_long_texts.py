"""Long texts: ROUGE-L / ROUGE-Lsum equal rouge-score's results without its quadratic table, and
TER refuses texts past its documented limit."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from openevals.text import (
    TER_MAX_WORDS,
    _lcs,
    create_bleu_evaluator,
    create_chrf_evaluator,
    create_rouge_evaluator,
    create_ter_evaluator,
    ter_batch,
)
from openevals.text._lcs import lcs_indices, lcs_length, summary_hits

ALL_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]

# Few distinct tokens, so that many longest common subsequences tie and the pick matters.
tokens = st.lists(st.integers(0, 4), max_size=14)
words = st.sampled_from(["a", "b", "c", "cat", "sat", "the", "mat", "ran"])
line = st.lists(words, min_size=0, max_size=9).map(" ".join)
text = st.lists(line, min_size=0, max_size=5).map("\n".join)
# Many short lines (rouge-score's summary level pairs each with each), few distinct tokens.
short_tokens = st.lists(st.integers(0, 5), max_size=8)
many_lines = st.lists(st.lists(words, max_size=6).map(" ".join), min_size=4, max_size=30).map(
    "\n".join
)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens)
def test_property_lcs_positions_are_rouge_scores_own_pick(ref: list[int], can: list[int]) -> None:
    expected = rouge_scorer.lcs_ind(ref, can)
    assert lcs_indices(ref, can) == expected
    assert lcs_length(ref, can) == len(expected)


@settings(max_examples=300, deadline=None)
@given(text, st.lists(text, min_size=1, max_size=3))
def test_property_every_rouge_type_equals_rouge_score(hyp: str, refs: list[str]) -> None:
    own = rouge_scorer.RougeScorer(ALL_TYPES).score_multi(refs, hyp)
    ours = create_rouge_evaluator(rouge_types=ALL_TYPES)(outputs=hyp, reference_outputs=refs)
    assert [(r["key"], r["score"]) for r in ours] == [(k, own[k].fmeasure) for k in ALL_TYPES]
    for result in ours:
        assert result["metadata"]["precision"] == own[result["key"]].precision
        assert result["metadata"]["recall"] == own[result["key"]].recall


@settings(max_examples=250, deadline=None)
@given(short_tokens, st.lists(short_tokens, max_size=14))
def test_property_union_over_many_sentences_is_rouge_scores(
    ref: list[int], cans: list[list[int]]
) -> None:
    # All candidate sentences at once (one row of bits, guards between them) must pick, per
    # sentence, the LCS rouge-score's backtrack picks.
    expected = sorted({i for can in cans for i in rouge_scorer.lcs_ind(ref, can)})
    assert _lcs._Packed(cans).union(ref) == expected


@settings(max_examples=100, deadline=None)
@given(many_lines, many_lines)
def test_property_rouge_lsum_over_many_short_lines_equals_rouge_score(hyp: str, ref: str) -> None:
    own = rouge_scorer.RougeScorer(["rougeLsum"]).score(ref, hyp)["rougeLsum"]
    [ours] = create_rouge_evaluator(rouge_types=["rougeLsum"])(outputs=hyp, reference_outputs=ref)
    assert (ours["score"], ours["metadata"]["precision"], ours["metadata"]["recall"]) == (
        own.fmeasure,
        own.precision,
        own.recall,
    )


def test_summary_level_matches_each_reference_line_once_against_all_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rouge-score pairs 30 x 30 lines; the rows are computed once per reference line (for all
    # 30 candidate lines side by side), not once per pair.
    calls: list[int] = []
    rows_from = _lcs._rows_from

    def counted(*args: object) -> list[int]:
        calls.append(1)
        return rows_from(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_lcs, "_rows_from", counted)
    hyp, ref = _long_text(600, 7, per_line=20), _long_text(600, 8, per_line=20)
    ids: dict[str, int] = {}  # the words ("w17") are rouge-score's tokens as they are
    refs, cans = (
        [[ids.setdefault(w, len(ids)) for w in line.split()] for line in t.split("\n")]
        for t in (ref, hyp)
    )
    expected = rouge_scorer.RougeScorer(["rougeLsum"]).score(ref, hyp)["rougeLsum"].recall
    assert summary_hits(refs, cans) / 600 == expected
    assert len(calls) == 30


def _long_text(n: int, seed: int, per_line: int = 0) -> str:
    from benchmarks.long_texts import text

    return text(n, seed, per_line)


def test_long_rouge_stays_small_and_equal() -> None:
    hyp, ref = _long_text(6_000, 1), _long_text(6_000, 2)
    rouge = create_rouge_evaluator(rouge_types=["rougeL", "rougeLsum"])
    tracemalloc.start()
    try:
        results = rouge(outputs=hyp, reference_outputs=ref)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # rouge-score's table for this pair holds 36 million ints (about 300 MB, twice over).
    assert peak < 40_000_000
    assert results[0]["score"] == results[1]["score"]  # one line: Lsum is L
    short = create_rouge_evaluator(rouge_types=["rougeL", "rougeLsum"])
    hyp_lines, ref_lines = _long_text(600, 3, per_line=12), _long_text(600, 4, per_line=12)
    own = rouge_scorer.RougeScorer(["rougeL", "rougeLsum"]).score(ref_lines, hyp_lines)
    ours = short(outputs=hyp_lines, reference_outputs=ref_lines)
    assert [r["score"] for r in ours] == [own["rougeL"].fmeasure, own["rougeLsum"].fmeasure]


def test_every_linear_metric_scores_12000_words() -> None:
    hyp, ref = _long_text(12_000, 5), _long_text(12_000, 6)
    for evaluator in (
        create_bleu_evaluator(),
        create_chrf_evaluator(),
        create_chrf_evaluator(word_order=2),
    ):
        assert 0 <= evaluator(outputs=hyp, reference_outputs=ref)["score"] <= 100
    rouge = create_rouge_evaluator(rouge_types=ALL_TYPES)(outputs=hyp, reference_outputs=ref)
    assert [r["key"] for r in rouge] == ALL_TYPES


def test_ter_refuses_texts_past_its_limit_naming_it() -> None:
    ter = create_ter_evaluator()
    at_limit = " ".join(["word"] * TER_MAX_WORDS)
    assert ter(outputs=at_limit, reference_outputs=at_limit)["score"] == 0
    over = at_limit + " more"
    with pytest.raises(ValueError, match=r"TER_MAX_WORDS = 1000 words; `outputs` has 1001"):
        ter(outputs=over, reference_outputs="word")
    with pytest.raises(ValueError, match=r"`reference_outputs` has 1001"):
        ter(outputs="word", reference_outputs=["word", over])
    with pytest.raises(ValueError, match=r"`outputs` \(segment 1\) has 1001.*ter_batch"):
        ter_batch(["word", over], ["word", "word"])


def test_long_sentences_keep_every_sqrt_rows_and_pick_the_same_lcs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random

    monkeypatch.setattr(_lcs, "_ALL_ROWS", 3)  # rows recomputed between kept ones from 4 tokens
    rng = random.Random(11)

    def tokens(longest: int) -> list[int]:
        return [rng.randrange(rng.choice([2, 3, 6])) for _ in range(rng.randrange(0, longest))]

    for _ in range(800):
        ref, can = tokens(40), tokens(40)
        assert lcs_indices(ref, can) == rouge_scorer.lcs_ind(ref, can)
    for _ in range(200):  # a long reference sentence against many candidate sentences
        ref, cans = tokens(40), [tokens(12) for _ in range(rng.randrange(1, 8))]
        expected = sorted({i for can in cans for i in rouge_scorer.lcs_ind(ref, can)})
        assert _lcs._Packed(cans).union(ref) == expected
