"""ROUGE-L and ROUGE-Lsum on long texts: rouge-score's results without its quadratic table.

rouge-score fills an ``(m + 1) x (n + 1)`` table of Python ints for every longest common
subsequence (LCS) it needs: two 3,000-token texts take seconds and hundreds of megabytes, two
60,000-token texts more memory than a machine has. Here:

* ROUGE-L needs only the LCS *length*: RapidFuzz's compiled, bit-parallel ``LCSseq`` computes it
  on the token sequences (tokens mapped to ints), in ``O(m * n / 64)`` time and linear memory;
* ROUGE-Lsum needs, for each reference sentence and each candidate sentence, *which* reference
  tokens one LCS uses, and its score depends on which LCS is taken when several exist. The rows of
  the LCS table are computed bit-parallel (one Python int per row: the positions where the row's
  value rises, Hyyrö's algorithm), and the path rouge-score's backtrack takes (a match first, then
  up unless left holds a longer LCS) is followed on them. That is the same LCS, hence the same
  score, in ``m * n / 8`` bytes instead of ``28 * m * n`` (and, for a long reference sentence,
  ``2 * sqrt(m) * n / 8``: only every ``sqrt(m)``-th row is kept, the others computed again when
  the backtrack reaches them).
* Many short lines make many sentence pairs, so the candidate sentences are laid side by side in
  one row of bits (a guard bit between them stops carries), and each reference sentence is
  matched against all of them at once: its rows, and its backtracks (one pointer bit per
  candidate sentence), cost a few big-int operations per reference token, not Python steps per
  pair (see :class:`_Packed`).

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


_ALL_ROWS = 4_096  # up to this many rows the whole table (as bit rows) is kept

# Each byte value with its 8 bits in reverse order (for reversing a whole bit row, see _Packed).
_REVERSED_BYTES = bytes(int(f"{value:08b}"[::-1], 2) for value in range(256))


def _rows_from(tokens: Sequence[int], masks: dict[int, int], full: int, row: int = 0) -> list[int]:
    """``row`` and the rows after it, one per token (see :class:`_TableRows`; Hyyrö's step:
    ``v`` is the complement of the rises, and a carry stops at the guard bit above its
    sentence, which ``full`` leaves out)."""
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
    """Row ``i`` of the LCS table of ``ref[:i]`` and the candidate, as an int whose bit for
    column ``j`` is set when ``L[i][j + 1] == L[i][j] + 1`` (so ``L[i][j]`` is the popcount of
    the bits below).

    For a long ``ref`` (past :data:`_ALL_ROWS` tokens; shorter ones keep every row, see
    :func:`_rows_from`): every ``isqrt(m)``-th row is kept, and the rows between two of them are
    computed again when read (the backtrack reads a block of rows bottom-up, once), so a
    60,000-token pair keeps about 500 rows instead of 60,000.
    """

    def __init__(self, ref: Sequence[int], masks: dict[int, int], full: int) -> None:
        self.ref, self.masks, self.full = ref, masks, full
        self.step = max(math.isqrt(len(ref)), 1)
        self.marks: dict[int, int] = {}
        row = 0
        for start in range(0, len(ref) + 1, self.step):
            self.marks[start] = row
            row = _rows_from(ref[start : start + self.step], masks, full, row)[-1]
        self.block_start = -1
        self.block: list[int] = []

    def __getitem__(self, i: int) -> int:
        start = i - i % self.step
        if start != self.block_start:
            stop = min(start + self.step, len(self.ref) + 1)
            self.block = _rows_from(
                self.ref[start : stop - 1], self.masks, self.full, self.marks[start]
            )
            self.block_start = start
        return self.block[i - start]


class _Packed:
    """Candidate sentences side by side in one row of bits, so that one reference sentence is
    matched against all of them at once: rouge-score pairs every reference sentence with every
    candidate sentence, and many short lines make that many pairs.

    Sentence ``s`` takes bits ``o_s + 1 .. o_s + n_s`` (its tokens), below them a guard bit
    ``o_s`` that no mask or row sets: an addition's carry out of a sentence stops there, so each
    sentence's LCS rows are computed as if alone. The backtrack keeps one pointer bit per
    sentence, at ``o_s + j`` for column ``j`` (the guard is column 0).
    """

    def __init__(self, can_sents: Sequence[Sequence[int]]) -> None:
        positions: dict[int, list[int]] = {}
        guards = starts = 0
        offset = 0
        for sent in can_sents:
            guards |= 1 << offset
            for bit, token in enumerate(sent, offset + 1):
                positions.setdefault(token, []).append(bit)
            offset += len(sent) + 1
            starts |= 1 << (offset - 1)  # column n_s: the path starts at the end
        self.tops = guards >> 1 << 1 | 1 << offset  # the guard above each sentence
        self.full = ((1 << offset) - 1) & ~guards
        self.nbytes = offset // 8 + 1
        self.all_bits = (1 << (8 * self.nbytes)) - 1
        self.masks = {token: _bits(bits, self.nbytes) for token, bits in positions.items()}
        self.reversed_masks: dict[int, int] = {}
        self.starts = self._reverse(starts)

    def _reverse(self, row: int) -> int:
        """``row`` with bit ``b`` moved to ``8 * nbytes - 1 - b``: the backtrack walks columns
        downwards, and a carry (which finds the next set bit) only runs upwards."""
        data = row.to_bytes(self.nbytes, "little").translate(_REVERSED_BYTES)
        return int.from_bytes(data, "big")

    def union(self, ref: Sequence[int]) -> list[int]:
        """The positions in ``ref`` (ascending) that rouge-score's backtrack matches against
        at least one candidate sentence.

        rouge-score's backtrack, at ``(i, j)``: a match is taken, else left if
        ``L[i][j - 1] > L[i - 1][j]``, else up. Going left happens exactly when
        ``L[i][j] == L[i - 1][j] + 1`` (the row rose over the one above it), and then it goes
        on left to the nearest match, which it takes. So per reference token, from the last:
        a pointer whose column rose or matches takes that token, and moves to the column
        before the nearest match at or below it (all pointers at once, on reversed bits); the
        others stay.
        """
        masks = self.masks
        kept = [i for i, token in enumerate(ref) if token in masks]
        if not kept:
            return []
        # A reference token no candidate holds leaves its row equal to the one before, and
        # every path passes it going up: the paths are the same without it.
        tokens = [ref[i] for i in kept]
        rows: list[int] | _TableRows = (
            _rows_from(tokens, masks, self.full)
            if len(tokens) <= _ALL_ROWS
            else _TableRows(tokens, masks, self.full)
        )
        pointers, tops, full = self.starts, self.tops, self.full
        picked: list[int] = []
        below = rows[len(tokens)]
        for k in range(len(tokens) - 1, -1, -1):
            above = rows[k]
            # Per sentence, each of the row above's rises moves down to the new row's rise
            # in its stretch: the columns in between (and past the last rise, up to the
            # top guard) are where the new row is one more.
            rose = ((above | tops) - below) & full
            below = above
            matches = self._reversed_mask(tokens[k])
            taken = pointers & (self._reverse(rose) | matches)
            if taken:
                picked.append(kept[k])
                nearest = ((self.all_bits ^ matches) + taken) & matches
                pointers = (pointers ^ taken) | nearest << 1
        picked.reverse()
        return picked

    def _reversed_mask(self, token: int) -> int:
        reversed_mask = self.reversed_masks.get(token)
        if reversed_mask is None:
            reversed_mask = self.reversed_masks[token] = self._reverse(self.masks[token])
        return reversed_mask


def _bits(positions: Sequence[int], nbytes: int) -> int:
    """The int with the given bits set (through bytes: setting them one by one on an int
    would copy the whole int per bit)."""
    data = bytearray(nbytes)
    for bit in positions:
        data[bit >> 3] |= 1 << (bit & 7)
    return int.from_bytes(data, "little")


def lcs_indices(ref: Sequence[int], can: Sequence[int]) -> list[int]:
    """The positions in ``ref`` of the LCS rouge-score's backtrack picks (ascending): from the
    end, a matching pair is taken; otherwise the path goes up (shorter ``ref``) unless going
    left (shorter ``can``) keeps a strictly longer LCS."""
    return _Packed([can]).union(ref)


def summary_hits(ref_sents: Sequence[Sequence[int]], can_sents: Sequence[Sequence[int]]) -> int:
    """rouge-score's summary-level LCS hits: for each reference sentence, the union of its LCS
    positions with every candidate sentence, counted against both texts' token counts."""
    ref_counts: Counter[int] = Counter()
    can_counts: Counter[int] = Counter()
    for sent in ref_sents:
        ref_counts.update(sent)
    for sent in can_sents:
        can_counts.update(sent)
    packed = _Packed(can_sents)
    hits = 0
    for ref in ref_sents:
        for index in packed.union(ref):
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
