"""Recording a finished run in a run store (``evaluate(..., store=...)``, the CLI).

:func:`record_result` writes what the store keeps of an :class:`EvaluationResult`: the git
commit of the working directory (when it is a repository), the dataset's fingerprint (a hash
of its file, or of its row ids), each evaluator's description (its
:class:`~openevals._contract.EvaluatorInfo`, and for a judge of this package a hash of its
prompt and its options), the models, cost and time, the aggregates with their intervals,
groups, binned histograms, and the rows (each the JSON of its result row, secrets already
removed when the run recorded it); or, for a run with an ``output=`` file, the pointer to that
file (:func:`rows_ready`).
"""

from __future__ import annotations

import hashlib
import math
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show
from openevals.data.encoding import storable_text
from openevals.evaluation.evaluators import RunEvaluator
from openevals.evaluation.result import EvaluationResult
from openevals.store.runs import RunStore, StoredRun, open_store

__all__ = ["describe_evaluator", "git_commit", "histogram", "record_result", "rows_ready"]

_BINS = 20


def git_commit(cwd: str | None = None) -> str | None:
    """The commit checked out in ``cwd`` (the working directory), or ``None`` outside a git
    repository or without git."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) >= 7 else None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def describe_evaluator(ev: RunEvaluator) -> dict[str, Any]:
    """What the store keeps of one evaluator: name, info, and for a judge of this package the
    hash of its prompt and its options."""
    out: dict[str, Any] = {"name": ev.name}
    info = ev.info
    if info is not None:
        out.update(
            run_name=info.run_name,
            feedback_keys=list(info.feedback_keys),
            model=info.model,
            judge=info.judge,
            pure=info.pure,
            score_type=info.score_type,
        )
    if ev.fields:
        out["fields"] = dict(ev.fields)
    if info is not None and info.judge:
        from openevals._judge.shell import judge_core

        try:
            core = judge_core(ev.fn)
        except TypeError:
            return out
        options = core.options
        if core.prompt.template is not None:
            out["prompt_hash"] = _hash(core.prompt.template)
        out["options"] = {
            "model": options.model,
            "continuous": options.continuous,
            "choices": list(options.choices) if options.choices else None,
            "use_reasoning": options.use_reasoning,
            "samples": options.samples,
            "few_shot_examples": len(options.few_shot_examples),
            "system_hash": _hash(options.system) if options.system else None,
        }
    return out


def histogram(values: Sequence[Any]) -> dict[str, Any] | None:
    """``values`` binned for a chart: ``{"edges": [...], "counts": [...]}`` (booleans: two
    bins, False and True); ``None`` without finite values."""
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(float(v))]
    if not finite:
        return None
    low, high = min(finite), max(finite)
    if high == low:
        return {"edges": [low, high], "counts": [len(finite)]}
    bins = 2 if all(v in (0.0, 1.0) for v in finite) else _BINS
    width = (high - low) / bins
    counts = [0] * bins
    for v in finite:
        counts[min(int((v - low) / width), bins - 1)] += 1
    return {"edges": [low + i * width for i in range(bins + 1)], "counts": counts}


def _scores(row: Mapping[str, Any]) -> str:
    scores: dict[str, Any] = {}
    for entry in (row.get("evaluations") or {}).values():
        for result in entry.get("results") or ():
            if isinstance(result, Mapping) and "key" in result:
                score = result.get("score")
                if isinstance(score, float) and not math.isfinite(score):
                    score = None
                scores.setdefault(str(result["key"]), score)
    return storable_text(scores)


def _row_tuples(result: EvaluationResult, digest: Any) -> Iterator[tuple[int, str, str, str, str]]:
    """The store's rows of ``result`` (one pass; each row id also goes into ``digest``)."""
    for pos, row in enumerate(result.rows):
        row_id = str(row.get("id"))
        digest.update(row_id.encode("utf-8", "backslashreplace") + b"\n")
        yield pos, row_id, str(row.get("status", "success")), _scores(row), storable_text(row)


def _store_rows(opened: RunStore, run_id: int, result: EvaluationResult) -> str:
    """Write the rows of ``result``; returns the dataset fingerprint (a hash of the row ids)."""
    digest = hashlib.blake2b(digest_size=12)
    opened.add_rows(run_id, _row_tuples(result, digest))
    return digest.hexdigest()


def rows_ready(opened: RunStore, run: StoredRun) -> StoredRun:
    """``run`` with its rows in the store: a run recorded with its rows left in its ``output=``
    file has them read from the file (once; the first viewer or ``load_run`` does it).

    Raises:
        ValueError: the file is gone or is no longer a run's output file.
    """
    if run.details.get("rows_in") != "file":
        return run
    path = run.output or ""
    if not Path(path).is_file():
        raise ValueError(
            f"the rows of run {run.id} are in its output file {show(path, PATH_LIMIT)}, which no "
            "longer exists; restore the file to see them"
        )
    from openevals.evaluation.runfile import load_run_file

    fingerprint = _store_rows(opened, run.id, load_run_file(path))
    details = {**run.details, "rows_in": "store"}
    opened.update(run.id, details=details, fingerprint=run.fingerprint or fingerprint)
    return opened.run(run.id)


def _file_hash(dataset: str | None) -> str | None:
    """The dataset's fingerprint when it is one file: a hash of its bytes."""
    if dataset is None or not Path(dataset).is_file():
        return None
    digest = hashlib.blake2b(digest_size=12)
    with Path(dataset).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record_result(
    store: Any,
    result: EvaluationResult,
    *,
    kind: str = "run",
    dataset: str | None = None,
    evaluators: Sequence[RunEvaluator] | None = None,
    output: str | None = None,
    name: str | None = None,
    tags: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> int:
    """Record ``result`` in ``store`` (``True``, a path or URL, or a ``RunStore``); returns the
    run's id, also set as ``result.summary["run_id"]``. ``extra`` adds report data to the
    record's details (a calibration or comparison).

    With an ``output`` file (the run's JSONL records) the rows stay there and the store keeps
    the pointer; they are copied into the store when first needed (:func:`rows_ready`).
    Otherwise they are written now. The dataset's fingerprint is a hash of its file, or of its
    row ids."""
    described = (
        [describe_evaluator(ev) for ev in evaluators]
        if evaluators is not None
        else [{"name": n} for n in result.evaluators]
    )
    summary = result.summary
    models = [str(e["model"]) for e in (summary.get("evaluators") or {}).values() if e.get("model")]
    in_file = output is not None and not result.interrupted and Path(output).is_file()
    with open_store(store) as opened:
        run_id = opened.begin(
            kind=kind,
            name=name,
            dataset=dataset,
            fingerprint=_file_hash(dataset),
            git_commit=git_commit(),
            evaluators=described,
            models=models,
            output=output,
            tags=tags,
        )
        fingerprint = None if in_file else _store_rows(opened, run_id, result)
        details: dict[str, Any] = {
            "rows_in": "file" if in_file else "store",
            "summary": summary,
            "by_group": result.by_group,
            "batch_metrics": result.batch_metrics,
            "histograms": {k: histogram(v) for k, v in result.histograms.items()},
            **(dict(extra) if extra else {}),
        }
        if result.pairwise:
            details["pairwise"] = {k: v.to_dict() for k, v in result.pairwise.items()}
        opened.finish(
            run_id,
            aggregates=result.aggregates,
            details=details,
            rows=len(result.rows),
            error_rows=int(summary.get("rows_with_errors") or 0),
            cost_usd=summary.get("cost_usd"),
            elapsed_sec=summary.get("elapsed_sec"),
        )
        if fingerprint is not None and dataset is None:
            opened.update(run_id, details=None, fingerprint=fingerprint)
    summary["run_id"] = run_id
    return run_id
