"""``openevals audit DATA --judge ...``: the command-line face of :func:`~openevals.audit.audit_judge`.

Exit status: 0 when no test finds a bias (or without ``--fail-on-bias``), 1 when one does with
``--fail-on-bias`` (a CI gate), 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_audit"]


def add_parser(sub: Any) -> None:
    audit = sub.add_parser("audit", help="test a judge for biases of form (length, style, ...)")
    audit.add_argument("data", help="rows whose `outputs` are the answers to rewrite")
    which = audit.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--judge", metavar="NAME[:option=value...]", help="judge spec, e.g. llm:CORRECTNESS_PROMPT"
    )
    which.add_argument("--judge-function", metavar="MODULE:FUNCTION", help="a Python evaluator")
    audit.add_argument("--model", metavar="PROVIDER:MODEL", help="judge model for llm:... judges")
    audit.add_argument(
        "--test", action="append", metavar="NAME", help="run only this test (repeatable)"
    )
    audit.add_argument("--sample", type=int, default=100, help="rows to audit (default 100)")
    audit.add_argument("--seed", type=int, default=0, help="sample and bootstrap seed (0)")
    audit.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    audit.add_argument(
        "--min-effect", type=float, default=0.05, help="smallest effect called a bias (0.05)"
    )
    audit.add_argument("--family", default="GPT-4o", help="the family the hint names (GPT-4o)")
    audit.add_argument("--feedback-key", metavar="KEY", help="the judge result to read")
    audit.add_argument("--concurrency", type=int, default=16, help="calls in flight (default 16)")
    audit.add_argument("--cache", metavar="FILE", nargs="?", const=True, help="SQLite judge cache")
    audit.add_argument("--report", metavar="FILE", help="HTML report with the audit section")
    audit.add_argument("--json", metavar="FILE", help="write the audit as JSON")
    audit.add_argument(
        "--fail-on-bias", action="store_true", help="exit 1 when a test finds a bias"
    )
    audit.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_audit(args: argparse.Namespace, judge: Any, usage_error: type[Exception]) -> int:
    """Audit the judge ``args`` describe; print the table; write the report; gate."""
    from openevals.audit.run import audit_judge
    from openevals.evaluation.registry import SpecError

    try:
        report = audit_judge(
            args.data,
            judge,
            tests=args.test,
            sample=args.sample,
            seed=args.seed,
            alpha=args.alpha,
            min_effect=args.min_effect,
            family=args.family,
            feedback_key=args.feedback_key,
            model=args.model,
            concurrency=args.concurrency,
            cache=args.cache,
            progress=not args.no_progress,
        )
    except (SpecError, ValueError, TypeError, FileNotFoundError, IsADirectoryError) as exc:
        raise usage_error(str(exc)) from None
    print(report)
    if args.json:
        text = json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str)
        Path(args.json).write_text(text, "utf-8")
        print(f"JSON: {args.json}")
    if args.report:
        print(f"Report: {report.report_html(args.report)}")
    tripped = report.failures()
    for line in tripped:
        print(f"bias: {line}", file=sys.stderr)
    return 1 if tripped and args.fail_on_bias else 0
