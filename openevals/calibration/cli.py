"""``openevals calibrate``: the command-line face of :func:`~openevals.calibration.calibrate`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_calibrate"]


def add_parser(sub: Any) -> Any:
    """The ``calibrate`` subcommand's parser (the caller adds the run-store options)."""
    cal = sub.add_parser("calibrate", help="measure a judge's agreement with human labels")
    cal.add_argument(
        "data",
        help="labelled dataset (.jsonl, .json, .csv or .tsv), or runs:RUN for the labels given "
        "to a stored run in `openevals view` (runs:latest, runs:7, runs:TAG)",
    )
    cal.add_argument("--labeller", metavar="NAME", help="with runs:RUN, only this person's labels")
    which = cal.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--judge", metavar="NAME[:option=value...]", help="judge spec, e.g. llm:CORRECTNESS_PROMPT"
    )
    which.add_argument("--judge-function", metavar="MODULE:FUNCTION", help="a Python evaluator")
    cal.add_argument(
        "--label", default="label", metavar="COLUMN", help="human label column (default: label)"
    )
    cal.add_argument("--reason", metavar="COLUMN", help="column with the human's reason")
    cal.add_argument("--label-type", choices=("boolean", "categorical", "continuous"))
    cal.add_argument("--choices", metavar="A,B,...", help="every categorical label, in order")
    cal.add_argument("--feedback-key", metavar="KEY", help="the judge result to compare")
    cal.add_argument(
        "--tolerance", type=float, default=0.2, help="continuous: disagreement above this gap"
    )
    cal.add_argument("--model", metavar="PROVIDER:MODEL", help="judge model for llm:... judges")
    cal.add_argument("--concurrency", type=int, default=16, help="calls in flight (default 16)")
    cal.add_argument("--output", metavar="FILE", help="JSONL results; a rerun resumes from it")
    cal.add_argument("--report", metavar="FILE", help="HTML report with the calibration section")
    cal.add_argument("--json", metavar="FILE", help="write the agreement report as JSON")
    cal.add_argument("--cache", metavar="FILE", nargs="?", const=True, help="SQLite judge cache")
    cal.add_argument("--no-progress", action="store_true", help="no progress bar")
    return cal


def _choices(text: str | None) -> list[str] | None:
    items = [c.strip() for c in (text or "").split(",") if c.strip()]
    return items or None


def run_calibrate(args: argparse.Namespace, judge: Any, usage_error: type[Exception]) -> int:
    """Run the calibration ``args`` describe with ``judge``; print the report; exit status."""
    from openevals.calibration.labels_store import RUNS_PREFIX, stored_labels
    from openevals.calibration.report import JudgeFailedError
    from openevals.calibration.run import calibrate
    from openevals.evaluation.registry import SpecError

    if args.concurrency < 1:
        raise usage_error(f"--concurrency must be >= 1; got {args.concurrency}")
    try:
        data: Any = args.data
        if isinstance(data, str) and data.startswith(RUNS_PREFIX):
            data = stored_labels(
                data[len(RUNS_PREFIX) :], store=args.store or True, labeller=args.labeller
            )
        report = calibrate(
            data,
            judge,
            label=args.label,
            reason=args.reason,
            label_type=args.label_type,
            choices=_choices(args.choices),
            feedback_key=args.feedback_key,
            tolerance=args.tolerance,
            model=args.model,
            concurrency=args.concurrency,
            cache=args.cache,
            progress=not args.no_progress,
            output=args.output,
        )
    except (SpecError, ValueError, TypeError, FileNotFoundError, IsADirectoryError) as exc:
        raise usage_error(str(exc)) from None
    except JudgeFailedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(report)
    from openevals.store.runs import store_option

    store = store_option(args)
    if store is not None:
        from openevals.evaluation.recordrun import record_result

        run_id = record_result(
            store,
            report.result,
            kind="calibrate",
            dataset=str(args.data),
            output=args.output,
            tags=args.tag,
            extra={"calibration": report.to_dict()},
        )
        print(f"Recorded: run {run_id}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str), "utf-8"
        )
        print(f"JSON: {args.json}")
    if args.report:
        print(
            f"Report: {report.report_html(args.report, title=f'calibration: {Path(args.data).name}')}"
        )
    if args.output:
        print(f"Results: {args.output}")
    for failed in report.failed[:5]:
        print(f"row {failed.index}: {failed.error[:300]}", file=sys.stderr)
    return 0
