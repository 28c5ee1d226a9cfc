"""``openevals calibrate``: the command-line face of :func:`~openevals.calibration.calibrate`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["run_calibrate"]


def _choices(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [c.strip() for c in text.split(",") if c.strip()]
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
