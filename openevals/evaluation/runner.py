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

from openevals.evaluation.engines.ray_connect import DEFAULT_CONNECT_TIMEOUT
from openevals.evaluation.failfast import EvaluatorFailing
from openevals.evaluation.loop import run_on_loop
from openevals.evaluation.options import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_CONCURRENCY,
    DEFAULT_RAY_BATCH_SIZE,
    RunOptions,
)
from openevals.evaluation.result import EvaluationInterrupted, EvaluationResult
from openevals.evaluation.trials import Trials, as_trials, expand

__all__ = ["aevaluate", "evaluate"]


def evaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
    systems: Sequence[str] | Mapping[str, str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    ray_batch_size: int = DEFAULT_RAY_BATCH_SIZE,
    ray_env: Sequence[str] | None = None,
    ray_connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    eval_timeout: float | None = None,
    ray_parquet: str | os.PathLike[str] | None = None,
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
            CSV columns do, dotted names included (see :mod:`openevals.evaluation.data` and
            :mod:`openevals.evaluation.sources`).
        evaluators: evaluator callables (sync or async), :class:`EvaluatorSpec` objects or names
            such as ``"exact_match"`` / ``"recall:k=5"``; or a dict of name -> evaluator. Each gets
            the row fields its signature accepts (all of them if it takes ``**kwargs``).
        target: optional ``target(inputs) -> outputs`` (sync or async) run once per row before
            the evaluators; its wall time and token usage are recorded.
        concurrency: the most target/evaluator calls in flight at once.
        cache: judge cache: a SQLite file path, ``True`` (a default file), or an object with
            ``get``/``set``. A rerun over the same data then makes no model calls.
        group_by: a row field (dotted path; also looked up in ``inputs`` and ``metadata``) to
            group aggregates by; adds per-group, micro and macro statistics.
        progress: ``True`` for a rich progress bar, ``False``, or a callable receiving snapshots.
        output: a JSONL file: every finished row x evaluator is appended at once, and a rerun
            with the same file resumes, skipping finished pairs.
        batch_metrics: dataset-level metrics ``fn(batch: dict[str, list]) -> {name: {"value":
            ...}}`` run on batches of ``batch_size`` finished rows (columns ``id``, ``inputs``,
            ``outputs``, ``reference_outputs``, extra columns, and ``scores``); or the name of a
            corpus metric (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``, ``"rouge"``, with
            ``:option=value`` settings), computed once over the whole run.
        accumulate: combines the per-batch metrics ``{name: [per-batch dicts]}`` into the final
            ones; by default values are summed.
        batch_size: rows per ``batch_metrics`` batch.
        prices: model -> ``(input, output)`` USD per 1M tokens, merged over the default table.
        retry_errors: on resume, run again the pairs that ended in an error (the newer record
            supersedes the old one).
        model: the judge model for evaluator names such as ``"llm:CORRECTNESS_PROMPT"``.
        systems: compare two or more systems pairwise: a list of system names (each row's
            ``outputs`` is a dict of name -> output) or a dict of name -> row field (one column
            per system). Every evaluator must then be pairwise (``create_pairwise_llm_as_judge``)
            and runs once per pair; ``result.pairwise`` holds win/tie/loss rates, a
            Bradley-Terry ranking and the order-flip rate (see :mod:`.pairwise`).
        engine: ``"local"`` (this process) or ``"ray"`` (Ray Data workers; needs
            ``openevals-suite[ray]``). Same data, options, records and results; ``concurrency`` is
            then per worker.
        ray_address: the Ray cluster to join (default: ``RAY_ADDRESS``, else a local Ray with
            this machine's cores, stopped after the run).
        ray_workers: Ray workers (actors) to use; default: the cluster's CPUs.
        ray_batch_size: rows per batch sent to a Ray worker.
        ray_env: names of environment variables to copy to the Ray workers, besides the
            secret-named ones (``*_API_KEY``, ``*_TOKEN``, ...) and ``*_BASE_URL``. Names only:
            a dict is refused (values are never passed; they are read from this environment).
        ray_connect_timeout: seconds to wait for ``ray_address`` to answer before raising
            ``RayConnectError`` (a ``ConnectionError`` naming ``ray_address``).
        eval_timeout: seconds one evaluation may take (``None``: no limit). A longer one is
            cancelled and recorded on its row as a ``TimeoutError``, and the run goes on. Async
            evaluators are cancelled; a sync evaluator's thread cannot be stopped, so it is left
            to finish in the background and its result is dropped. Cheap pure evaluators run
            inline (exact match, Levenshtein, ...) are not timed.
        ray_parquet: with ``engine="ray"``, a folder the Ray workers write the results of the
            rows they score to, as Parquet files (``part-NNNNNN.parquet``, one per batch, each
            written atomically; the long form of :meth:`EvaluationResult.to_parquet`, scores as
            floats); a finished run adds ``_SUCCESS`` holding its summary. Read the folder with
            ``pyarrow.parquet.read_table`` or ``pandas.read_parquet``. Parquet input is then
            read by the driver (which gives each row its id) rather than by Ray Data.
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
        EvaluationInterrupted: on Ctrl-C (a ``KeyboardInterrupt``); ``.result`` holds what
            finished.
        EvaluatorFailing: an evaluator failed its first evaluations (5) with one same error,
            a configuration mistake such as a missing API key; ``.result`` holds what
            finished (see :mod:`.failfast`).
    """
    repeat = as_trials(trials)
    if repeat is not None and repeat.active:
        data, evaluators = expand(data, evaluators, repeat, model=model)
    options = RunOptions(
        target=target,
        concurrency=concurrency,
        cache=cache,
        group_by=group_by,
        progress=progress,
        output=output,
        batch_metrics=batch_metrics,
        accumulate=accumulate,
        batch_size=batch_size,
        prices=prices,
        retry_errors=retry_errors,
        model=model,
        systems=systems,
        engine=engine,
        ray_address=ray_address,
        ray_workers=ray_workers,
        ray_batch_size=ray_batch_size,
        ray_env=ray_env,
        ray_connect_timeout=ray_connect_timeout,
        eval_timeout=eval_timeout,
        ray_parquet=ray_parquet,
        store=store,
    )
    if options.engine == "ray":
        from openevals.evaluation.engines import load_ray_engine

        result = load_ray_engine().evaluate_on_ray(data, evaluators, options)
        return _recorded(_marked(result, repeat), data, None, options)
    from openevals.evaluation.engines.local import LocalRun

    run = LocalRun(data, evaluators, options)
    try:
        run_on_loop(run.execute(), began=run.began, closed=run.closed)
    except (KeyboardInterrupt, asyncio.CancelledError, concurrent.futures.CancelledError):
        run.interrupted = True
        raise EvaluationInterrupted(_marked(run.result(), repeat)) from None
    except EvaluatorFailing as exc:
        run.interrupted = True
        exc.result = _marked(run.result(), repeat)
        raise
    return _recorded(_marked(run.result(), repeat), data, run.evaluators, options)


async def aevaluate(
    data: Any,
    evaluators: Any,
    *,
    target: Callable[..., Any] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    cache: Any = None,
    group_by: str | None = None,
    progress: Any = True,
    output: str | os.PathLike[str] | None = None,
    batch_metrics: Sequence[Callable[[dict[str, list[Any]]], Any]] | None = None,
    accumulate: Callable[[dict[str, list[dict[str, Any]]]], Any] | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prices: Mapping[str, Any] | None = None,
    retry_errors: bool = False,
    model: str | None = None,
    systems: Sequence[str] | Mapping[str, str] | None = None,
    engine: str = "local",
    ray_address: str | None = None,
    ray_workers: int | None = None,
    ray_batch_size: int = DEFAULT_RAY_BATCH_SIZE,
    ray_env: Sequence[str] | None = None,
    ray_connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    eval_timeout: float | None = None,
    ray_parquet: str | os.PathLike[str] | None = None,
    trials: int | Trials | None = None,
    store: Any = None,
) -> EvaluationResult:
    """Async twin of :func:`evaluate` (same arguments and result).

    Cancelling the task stops the run cleanly: in-flight calls are cancelled, everything finished
    stays in the ``output=`` file, and the ``CancelledError`` propagates.
    """
    repeat = as_trials(trials)
    if repeat is not None and repeat.active:
        data, evaluators = expand(data, evaluators, repeat, model=model)
    options = RunOptions(
        target=target,
        concurrency=concurrency,
        cache=cache,
        group_by=group_by,
        progress=progress,
        output=output,
        batch_metrics=batch_metrics,
        accumulate=accumulate,
        batch_size=batch_size,
        prices=prices,
        retry_errors=retry_errors,
        model=model,
        systems=systems,
        engine=engine,
        ray_address=ray_address,
        ray_workers=ray_workers,
        ray_batch_size=ray_batch_size,
        ray_env=ray_env,
        ray_connect_timeout=ray_connect_timeout,
        eval_timeout=eval_timeout,
        ray_parquet=ray_parquet,
        store=store,
    )
    if options.engine == "ray":
        from openevals.evaluation.engines import load_ray_engine

        result = await load_ray_engine().aevaluate_on_ray(data, evaluators, options)
        return await asyncio.to_thread(_recorded, _marked(result, repeat), data, None, options)
    from openevals.evaluation.engines.local import LocalRun

    run = LocalRun(data, evaluators, options)
    try:
        await run.execute()
    except EvaluatorFailing as exc:
        run.interrupted = True
        exc.result = _marked(run.result(), repeat)
        raise
    return await asyncio.to_thread(
        _recorded, _marked(run.result(), repeat), data, run.evaluators, options
    )


def _marked(result: Any, repeat: Trials | None) -> EvaluationResult:
    """``result`` with ``summary["trials"]`` when the run had trials or judge repeats."""
    if repeat is not None and repeat.active:
        result.summary["trials"] = {"trials": repeat.trials, "judge_repeats": repeat.judge_repeats}
    return result  # type: ignore[no-any-return]


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
