"""``openevals.evaluate`` / ``openevals.aevaluate``: validate the arguments, pick the engine
(:mod:`.engines.local` or :mod:`.engines._ray_engine`; both share the per-row code of
:mod:`.executor` and the recording of :mod:`.recording`, so their results are equal)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openevals._declare import async_entry
from openevals.evaluation.batches import BatchMetrics
from openevals.evaluation.engines.engine import Engine
from openevals.evaluation.loop import run_on_loop
from openevals.evaluation.options import DEFAULT_CONCURRENCY, RunOptions
from openevals.evaluation.pricing import Budget
from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult
from openevals.evaluation.trials import Trials, expand

__all__ = ["aevaluate", "evaluate"]


def evaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    model: str | None = None,
    systems: Sequence[str] | Mapping[str, str] | None = None,
    engine: Engine | str = "local",
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: Any = None,
    output: str | os.PathLike[str] | None = None,
    retry_errors: bool = False,
    progress: Any = True,
    group_by: str | None = None,
    batch_metrics: BatchMetrics
    | Sequence[Callable[[dict[str, list[Any]]], Any] | str]
    | None = None,
    budget: Budget | None = None,
    trials: int | Trials | None = None,
    store: Any = None,
) -> EvaluationResult:
    """Run ``evaluators`` over every row of ``data`` and aggregate the scores.

    Args:
        data: a list (or any iterable) of row dicts; a path to a JSONL, JSON, CSV or TSV file;
            a Parquet file, folder or glob (streamed in record batches); a pandas or polars
            DataFrame or a pyarrow Table; a Hugging Face ``Dataset`` / ``IterableDataset``; or
            a LangSmith dataset (``"langsmith://NAME"``, ``langsmith_dataset(...)``, or an
            iterator of its examples); or OpenTelemetry traces (an OTLP file named
            ``*.otlp.json`` / ``.otlp.jsonl`` / ``.otlp.pb``, or ``read_traces(...)`` from
            :mod:`openevals.traces`). Rows have ``inputs``, ``outputs``,
            ``reference_outputs``, an optional ``id`` and extra columns; table columns map as
            CSV columns do, dotted names included (see :mod:`openevals.data.rows` and
            :mod:`openevals.data.sources`).
        evaluators: evaluator callables (sync or async), :class:`EvaluatorSpec` objects or names
            such as ``"exact_match"`` / ``"recall:k=5"``; or a dict of name -> evaluator. Each gets
            the row fields its signature accepts (all of them if it takes ``**kwargs``).

    What runs:
        target: optional ``target(inputs) -> outputs`` (sync or async) run once per row before
            the evaluators; its wall time and token usage are recorded.
        model: the judge model for evaluator names such as ``"llm:CORRECTNESS_PROMPT"``.
        systems: compare two or more systems pairwise: a list of system names (each row's
            ``outputs`` is a dict of name -> output) or a dict of name -> row field (one column
            per system). Every evaluator must then be pairwise (``create_pairwise_llm_as_judge``)
            and runs once per pair; ``result.pairwise`` holds win/tie/loss rates, a
            Bradley-Terry ranking and the order-flip rate (see :mod:`.pairwise`).

    Where and how it runs:
        engine: ``"local"`` or a :class:`~openevals.evaluation.LocalEngine` (this process), or
            ``"ray"`` or a :class:`~openevals.evaluation.RayEngine` (Ray Data workers; needs
            ``openevals[ray]``). Same data, options, records and results; ``concurrency`` is
            then per worker. The engine object carries what belongs to it: the Ray cluster's
            address, workers, batch size, environment, connection timeout and Parquet output,
            and ``eval_timeout`` (the most seconds one evaluation may take on that engine).
        concurrency: the most target/evaluator calls in flight at once.
        cache: judge cache: a SQLite file path, ``True`` (a default file), or an object with
            ``get``/``set``. A rerun over the same data then makes no model calls.

    What it records:
        output: a JSONL file: every finished row x evaluator is appended at once, and a rerun
            with the same file resumes, skipping finished pairs.
        retry_errors: on resume, run again the pairs that ended in an error (the newer record
            supersedes the old one).
        progress: ``True`` for a rich progress bar, ``False``, or a callable receiving snapshots.
        group_by: a row field (dotted path; also looked up in ``inputs`` and ``metadata``) to
            group aggregates by; adds per-group, micro and macro statistics.
        batch_metrics: dataset-level metrics: a
            :class:`~openevals.evaluation.BatchMetrics` (the metrics with their ``accumulate``
            and ``batch_size``), or a plain list of metric functions and corpus metric names
            (``"bleu"``, ``"rouge"``, ...), which means ``BatchMetrics(that_list)``.

    What it may spend:
        budget: a :class:`~openevals.evaluation.Budget`: ``prices`` (model -> ``(input,
            output)`` USD per 1M tokens, merged over the default table) for the cost estimates,
            and ``max_cost``, a cap in USD on this run's estimated cost: once it is reached no
            new row starts, rows already started finish, and ``result.stopped`` says so (rerun
            with the same ``output=`` to go on).

    Repeats and history:
        trials: run the target ``k`` times per row (an int), or ``Trials(trials=k,
            judge_repeats=m)`` to also ask every judge ``m`` times per output; repeats and
            trials are real model calls (the judge cache keys them apart). Rows then have ids
            ``<id>@trial<t>``; ``result.trial_stats()`` gives pass@k, pass^k, the flakiest rows
            and the split of the variance between app and judge (see
            :mod:`openevals.evaluation.trials`).
        store: record the finished run in a run store (see :mod:`openevals.store`): ``True``
            for the default one (``$OPENEVALS_STORE``, else ``.openevals/runs.db``), a SQLite
            path, a ``postgresql://`` URL, or a ``RunStore``. Off by default in Python (the CLI
            records by default). The run's id is then ``result.summary["run_id"]``; an
            interrupted run is not recorded, and a store that cannot be written gives a
            ``RuntimeWarning`` (the result is returned all the same).

    Returns:
        an :class:`EvaluationResult`. Evaluator errors are recorded on their rows and counted;
        they never stop the run and never become scores.

    Raises:
        TypeError / ValueError: a bad option, naming it (the engine, batch metrics and budget
            objects check theirs when they are made).
        EvaluationInterrupted: on Ctrl-C (a ``KeyboardInterrupt``); ``.result`` holds what
            finished.
        EvaluatorFailing: an evaluator failed its first evaluations (5) with one same error,
            a configuration mistake such as a missing API key; ``.result`` holds what
            finished (see :mod:`.failfast`).
        DataSourceFailed: the data failed mid-stream (a generator or a streamed dataset
            raising, a corrupt Parquet row group): the rows read before were finished, and
            ``.result`` holds them (with ``output=``, so does the file: rerun to resume). A bad
            *record* never stops the run: a row that is not a dict, has a non-text field name,
            an ``id`` that is not text or an integer or is taken by an earlier row, or a table
            cell with no plain form becomes an error row (``RowDataError``, naming its index
            and field), counted in ``summary["errors"]``, and the other rows are evaluated.
        RayConnectError: ``RayEngine(address=)`` did not answer within its
            ``connect_timeout``.
    """
    options = RunOptions.from_call(
        target=target,
        concurrency=concurrency,
        cache=cache,
        group_by=group_by,
        progress=progress,
        output=output,
        batch_metrics=batch_metrics,
        budget=budget,
        retry_errors=retry_errors,
        model=model,
        systems=systems,
        engine=engine,
        store=store,
        trials=trials,
    )
    data, evaluators = _expanded(data, evaluators, options)
    if options.engine.name == "ray":
        from openevals.evaluation.engines import load_ray_engine

        result = load_ray_engine().evaluate_on_ray(data, evaluators, options)
        return _recorded(result, data, None, options)
    from openevals.evaluation.engines.local import LocalRun

    run = LocalRun(data, evaluators, options)
    try:
        with run.failing():
            run_on_loop(run.execute(), began=run.began, closed=run.closed)
    except (KeyboardInterrupt, asyncio.CancelledError, concurrent.futures.CancelledError):
        run.interrupted = True
        raise EvaluationInterrupted(run.result()) from None
    return _recorded(run.result(), data, run.evaluators, options)


async def _aevaluate(data: Any, evaluators: Any, **arguments: Any) -> EvaluationResult:
    options = RunOptions.from_call(**arguments)
    data, evaluators = _expanded(data, evaluators, options)
    if options.engine.name == "ray":
        from openevals.evaluation.engines import load_ray_engine

        result = await load_ray_engine().aevaluate_on_ray(data, evaluators, options)
        return await asyncio.to_thread(_recorded, result, data, None, options)
    from openevals.evaluation.engines.local import LocalRun

    run = LocalRun(data, evaluators, options)
    with run.failing():
        await run.execute()
    return await asyncio.to_thread(_recorded, run.result(), data, run.evaluators, options)


aevaluate = async_entry(
    evaluate,
    _aevaluate,
    name="aevaluate",
    doc="""Async twin of :func:`evaluate` (same arguments and result).

    Cancelling the task stops the run cleanly: in-flight calls are cancelled, everything finished
    stays in the ``output=`` file, and the ``CancelledError`` propagates.
    """,
)


def _expanded(data: Any, evaluators: Any, options: RunOptions) -> tuple[Any, Any]:
    """``(data, evaluators)``: each row and judge repeated when the run has trials (the result
    then says so: see :meth:`~.engines.local.LocalRun.result`)."""
    repeat = options.trials
    if repeat is not None and repeat.active:
        return expand(data, evaluators, repeat, model=options.model)
    return data, evaluators


def _recorded(result: Any, data: Any, evaluators: Any, options: RunOptions) -> EvaluationResult:
    """``result``, recorded in ``options.store`` when one was given (see ``store=``)."""
    if options.store is not None and options.store is not False:
        from openevals.evaluation.recordrun import record_result

        try:
            record_result(
                options.store,
                result,
                dataset=str(data) if isinstance(data, (str, os.PathLike)) else None,
                evaluators=evaluators,
                output=str(options.output) if options.output is not None else None,
            )
        except Exception as exc:  # any database failure: the finished run is still returned
            warnings.warn(
                f"the run was not recorded in the run store: {type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )
    return result  # type: ignore[no-any-return]
