"""Comparing two runs on paired rows: per-key paired statistics, verdicts, a CI gate, a report.

    from openevals.comparison import compare

    comparison = compare("baseline.jsonl", "candidate.jsonl")
    print(comparison)
    comparison.check(max_drop={"correctness": 0.02})  # AssertionError when a gate trips

Names resolve lazily (see :func:`openevals._lazy_exports`): importing ``openevals.comparison``
loads no numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.comparison.paired import (
        acompare as acompare,
        assert_no_regression as assert_no_regression,
        compare as compare,
    )
    from openevals.comparison.results import (
        ChangedRow as ChangedRow,
        Comparison as Comparison,
        KeyComparison as KeyComparison,
    )
    from openevals.comparison.head_to_head import HeadToHead as HeadToHead
    from openevals.comparison.sequential import (
        SequentialComparison as SequentialComparison,
        asequential_compare as asequential_compare,
        sequential_compare as sequential_compare,
    )
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
