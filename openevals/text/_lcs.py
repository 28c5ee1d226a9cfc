"""ROUGE-L and ROUGE-Lsum on long texts: rouge-score's results without its quadratic table.

rouge-score fills an ``(m + 1) x (n + 1)`` table of Python ints for every longest common
subsequence (LCS) it needs: two 3,000-token texts take seconds and hundreds of megabytes, two
60,000-token texts more memory than a machine has. Here:

* ROUGE-L needs only the LCS *length*: RapidFuzz's compiled, bit-parallel ``LCSseq`` computes it
  on the token sequences (tokens mapped to ints), in ``O(m * n / 64)`` time and linear memory;
* ROUGE-Lsum needs, for each reference sentence and each candidate sentence, *which* reference
  tokens one LCS uses, and its score depends on which LCS is taken when several exist. The rows of
  the LCS table are computed bit-parallel (one Python int of ``n`` bits per row: the positions
  where the row's value rises, Hyyrö's algorithm), and the path rouge-score's backtrack takes
  (a match first, then up unless left holds a longer LCS) is followed on them. That is the same
  LCS, hence the same score, in ``m * n / 8`` bytes instead of ``28 * m * n`` (and, for a pair
  of long sentences, ``2 * sqrt(m) * n / 8``: only every ``sqrt(m)``-th row is kept, the others
  computed again when the backtrack reaches them).

The tokenizer, the sentence split and the F-measure are rouge-score's own (see
:class:`RougeL`); the equivalence with ``RougeScorer`` is tested on random texts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any


def lcs_length(ref: Sequence[int], can: Sequence[int]) -> int:
    """The length of a longest common subsequence of two token-id sequences (RapidFuzz)."""
    if not ref or not can:
        return 0
    from rapidfuzz.distance import LCSseq

    return int(LCSseq.similarity(ref, can))


def _masks(can: Sequence[int]) -> dict[int, int]:
    """Each token of ``can`` -> the int whose bit ``j`` is set where ``can[j]`` is that token."""
    masks: dict[int, int] = {}
    for j, token in enumerate(can):
        masks[token] = masks.get(token, 0) | (1 << j)
    return masks


_ALL_ROWS = 4_096  # up to this many rows the whole table (as bit rows) is kept


def _rows_from(tokens: Sequence[int], masks: dict[int, int], full: int, row: int = 0) -> list[int]:
    """``row`` and the rows after it, one per token (see :class:`_TableRows`; Hyyrö's step:
    ``v`` is the complement of the rises)."""
    v = full ^ row
    rows = [row]
    for token in tokens:
        match = masks.get(token)
        if match is not None:
            u = v & match
            v = ((v + u) | (v - u)) & full
        rows.append(full ^ v)
    return rows


class _TableRows:
    """Row ``i`` of the LCS table of ``ref[:i]`` and ``can``, as an int whose bit ``j`` is set
    when ``L[i][j + 1] == L[i][j] + 1`` (so ``L[i][j]`` is the popcount of the low ``j`` bits).

    For a long ``ref`` (past :data:`_ALL_ROWS` tokens; shorter ones keep every row, see
    :func:`_rows_from`): every ``isqrt(m)``-th row is kept, and the rows between two of them are
    computed again when read (the backtrack reads a block of rows bottom-up, once), so a
    60,000-token pair keeps about 500 rows instead of 60,000.
    """

    def __init__(self, ref: Sequence[int], can: Sequence[int], masks: dict[int, int]) -> None:
        self.ref, self.masks = ref, masks
        self.full = (1 << len(can)) - 1
        self.step = max(math.isqrt(len(ref)), 1)
        self.marks: dict[int, int] = {}
        row = 0
        for start in range(0, len(ref) + 1, self.step):
            self.marks[start] = row
            row = _rows_from(ref[start : start + self.step], masks, self.full, row)[-1]
        self.block_start = -1
        self.block: list[int] = []

    def __getitem__(self, i: int) -> int:
        start = i - i % self.step
        if start != self.block_start:
            self.block = self._rows(start, min(start + self.step, len(self.ref) + 1))
            self.block_start = start
        return self.block[i - start]

    def _rows(self, start: int, stop: int) -> list[int]:
        """Rows ``start`` to ``stop - 1``, from the kept row ``start``."""
        return _rows_from(self.ref[start : stop - 1], self.masks, self.full, self.marks[start])


def lcs_indices(
    ref: Sequence[int], can: Sequence[int], masks: dict[int, int] | None = None
) -> list[int]:
    """The positions in ``ref`` of the LCS rouge-score's backtrack picks (ascending): from the
    end, a matching pair is taken; otherwise the path goes up (shorter ``ref``) unless going
    left (shorter ``can``) keeps a strictly longer LCS. ``masks``: ``_masks(can)``, when the
    caller reuses it."""
    if masks is None:
        masks = _masks(can)
    common = masks.keys() & set(ref)
    if not common:
        return []
    # A reference token the candidate lacks leaves its row equal to the one before, and the
    # path passes it going up: the path (and the positions it matches) is the same without it.
    # (Not so for candidate tokens: the path goes up through such a column, past matches.)
    ref_pos = [i for i, t in enumerate(ref) if t in common]
    ref_kept = [ref[i] for i in ref_pos]
    rows: list[int] | _TableRows = (
        _rows_from(ref_kept, masks, (1 << len(can)) - 1)
        if len(ref_kept) <= _ALL_ROWS
        else _TableRows(ref_kept, can, masks)
    )
    i, j = len(ref_kept), len(can)
    length = rows[i].bit_count()
    picked: list[int] = []
    while length:
        if ref_kept[i - 1] == can[j - 1]:
            picked.append(ref_pos[i - 1])
            i -= 1
            j -= 1
            length -= 1
        elif (rows[i - 1] & ((1 << j) - 1)).bit_count() == length:
            i -= 1  # up keeps the LCS: rouge-score prefers it on a tie
        else:
            j -= 1
    picked.reverse()
    return picked


def summary_hits(ref_sents: Sequence[Sequence[int]], can_sents: Sequence[Sequence[int]]) -> int:
    """rouge-score's summary-level LCS hits: for each reference sentence, the union of its LCS
    positions with every candidate sentence, counted against both texts' token counts."""
    ref_counts: Counter[int] = Counter()
    can_counts: Counter[int] = Counter()
    for sent in ref_sents:
        ref_counts.update(sent)
    for sent in can_sents:
        can_counts.update(sent)
    can_masks = [_masks(sent) for sent in can_sents]
    hits = 0
    for ref in ref_sents:
        tokens = set(ref)
        union: set[int] = set()
        for can, masks in zip(can_sents, can_masks, strict=True):
            if not tokens.isdisjoint(masks):
                union.update(lcs_indices(ref, can, masks))
        for index in sorted(union):
            token = ref[index]
            if can_counts[token] > 0 and ref_counts[token] > 0:
                hits += 1
                can_counts[token] -= 1
                ref_counts[token] -= 1
    return hits


class RougeL:
    """A scorer with rouge-score's ``RougeScorer.score_multi`` interface and results: n-gram
    types are rouge-score's own; ``rougeL`` and ``rougeLsum`` are computed here (see the module
    docs), with rouge-score's tokenizer, sentence split and F-measure."""

    def __init__(
        self,
        rouge_types: Sequence[str],
        *,
        use_stemmer: bool,
        split_summaries: bool,
        tokenizer: Any,
    ) -> None:
        import importlib

        rouge_scorer = importlib.import_module("rouge_score.rouge_scorer")
        self._scoring = importlib.import_module("rouge_score.scoring")
        self._tokenizer = tokenizer or importlib.import_module(
            "rouge_score.tokenizers"
        ).DefaultTokenizer(use_stemmer)
        self._split = split_summaries
        self._lcs_types = [t for t in rouge_types if t in ("rougeL", "rougeLsum")]
        ngram_types = [t for t in rouge_types if t not in self._lcs_types]
        self._ngrams = (
            rouge_scorer.RougeScorer(
                ngram_types,
                use_stemmer=use_stemmer,
                split_summaries=split_summaries,
                tokenizer=tokenizer,
            )
            if ngram_types
            else None
        )

    def score_multi(self, targets: Sequence[str], prediction: str) -> dict[str, Any]:
        """Per ROUGE type, the score against the target with the highest F-measure (the first
        of equals), as rouge-score picks it."""
        best: dict[str, Any] = {}
        if self._ngrams is not None:
            best.update(self._ngrams.score_multi(list(targets), prediction))
        for target in targets:
            for key, score in self._score(target, prediction).items():
                if key not in best or score.fmeasure > best[key].fmeasure:
                    best[key] = score
        return best

    def _score(self, target: str, prediction: str) -> dict[str, Any]:
        scores: dict[str, Any] = {}
        ids: dict[str, int] = {}
        tokenize = self._tokenizer.tokenize
        for key in self._lcs_types:
            if key == "rougeL":
                ref, can = _ids([tokenize(target), tokenize(prediction)], ids)
                scores[key] = self._prf(lcs_length(ref, can), len(ref), len(can))
                continue
            refs = _ids([tokenize(s) for s in self._sentences(target)], ids)
            cans = _ids([tokenize(s) for s in self._sentences(prediction)], ids)
            m, n = sum(map(len, refs)), sum(map(len, cans))
            scores[key] = self._prf(summary_hits(refs, cans) if m and n else 0, m, n)
        return scores

    def _sentences(self, text: str) -> list[str]:
        if self._split:
            import importlib

            sentences: list[str] = importlib.import_module("nltk").sent_tokenize(text)
        else:
            sentences = text.split("\n")
        return [s for s in sentences if s]

    def _prf(self, hits: int, ref_len: int, can_len: int) -> Any:
        if not hits or not ref_len or not can_len:
            return self._scoring.Score(precision=0, recall=0, fmeasure=0)
        precision, recall = hits / can_len, hits / ref_len
        return self._scoring.Score(
            precision=precision, recall=recall, fmeasure=self._scoring.fmeasure(precision, recall)
        )


def _ids(token_lists: Sequence[Sequence[str]], table: dict[str, int]) -> list[list[int]]:
    """Each token list as ints (one id per distinct token, shared through ``table``)."""
    return [[table.setdefault(token, len(table)) for token in tokens] for tokens in token_lists]
