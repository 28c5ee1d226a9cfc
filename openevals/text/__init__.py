"""Reference text metrics: BLEU, chrF/chrF++ and TER (sacrebleu), ROUGE (rouge-score).

Needs the ``[text]`` extra. Names resolve lazily (see :func:`openevals._lazy_exports`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.text.reference import (
        CorpusBatchMetric as CorpusBatchMetric,
        bleu_batch as bleu_batch,
        chrf_batch as chrf_batch,
        create_async_bleu_evaluator as create_async_bleu_evaluator,
        create_async_chrf_evaluator as create_async_chrf_evaluator,
        create_async_rouge_evaluator as create_async_rouge_evaluator,
        create_async_ter_evaluator as create_async_ter_evaluator,
        create_bleu_evaluator as create_bleu_evaluator,
        create_chrf_evaluator as create_chrf_evaluator,
        create_rouge_evaluator as create_rouge_evaluator,
        create_ter_evaluator as create_ter_evaluator,
        reference_batch_metric as reference_batch_metric,
        rouge_batch as rouge_batch,
        ter_batch as ter_batch,
    )
    from openevals.text._metrics import TER_MAX_WORDS as TER_MAX_WORDS

    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
