"""Batch evaluation: run evaluators over a dataset, aggregate, cache judge calls, report.

    from openevals.evaluation import evaluate

    result = evaluate("data.jsonl", ["exact_match", "levenshtein_distance"], output="results.jsonl")
    print(result.aggregates)
    result.report_html("report.html")

Names are resolved lazily (see :func:`openevals._lazy_exports`): importing this package loads no
evaluator, model or rich code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openevals import _lazy_exports

if TYPE_CHECKING:
    # The exports: one ``name as name`` per exported name (read at run time too).
    # isort: off
    from openevals.evaluation.aggregates import (
        bootstrap_ci as bootstrap_ci,
        describe as describe,
    )
    from openevals.evaluation.batches import (
        BatchMetrics as BatchMetrics,
    )
    from openevals.evaluation.cache import (
        SQLiteJudgeCache as SQLiteJudgeCache,
        default_cache_path as default_cache_path,
    )
    from openevals.data.rows import (
        iter_rows as iter_rows,
        load_rows as load_rows,
    )
    from openevals.evaluation.engines.engine import (
        LocalEngine as LocalEngine,
        RayEngine as RayEngine,
    )
    from openevals.evaluation.engines.ray_connect import (
        RayConnectError as RayConnectError,
    )
    from openevals.data.langsmith_source import (
        LangSmithDataset as LangSmithDataset,
        langsmith_dataset as langsmith_dataset,
    )
    from openevals.evaluation.online import (
        OnlineEvaluator as OnlineEvaluator,
    )
    from openevals.evaluation.pricing import (
        DEFAULT_PRICES as DEFAULT_PRICES,
        Budget as Budget,
    )
    from openevals.evaluation.registry import (
        EVALUATOR_NAMES as EVALUATOR_NAMES,
        build_evaluator as build_evaluator,
    )
    from openevals.evaluation.reopen import (
        load_run as load_run,
    )
    from openevals.evaluation.result import (
        EvaluationInterrupted as EvaluationInterrupted,
        EvaluationResult as EvaluationResult,
    )
    from openevals.evaluation.failfast import (
        DataSourceFailed as DataSourceFailed,
        EvaluatorFailing as EvaluatorFailing,
    )
    from openevals.data.mapping import (
        map_columns as map_columns,
    )
    from openevals.evaluation.runner import (
        aevaluate as aevaluate,
        evaluate as evaluate,
    )
    from openevals.evaluation.store import (
        ResultRows as ResultRows,
    )
    from openevals.evaluation.spec import (
        EvaluatorSpec as EvaluatorSpec,
    )
    from openevals.evaluation.trials import (
        Trials as Trials,
    )
    from openevals.comparison.paired import (
        acompare as acompare,
        compare as compare,
    )
    from openevals.comparison.results import Comparison as Comparison
    # isort: on

__all__, __getattr__, __dir__ = _lazy_exports(__name__, globals())
