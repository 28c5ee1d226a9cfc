"""``openevals compare BASE CAND``: the command-line face of :func:`~openevals.comparison.paired`.

Exit status: 0 when no gate trips, 1 when one does (a significant regression with
``--fail-on-regression``, or a drop beyond a ``--max-drop KEY=X``), 2 on bad input or any other
error (one line: a damaged run file names its line), never a traceback, and 2 when a gate is asked
for but more than ``--allow-unpaired`` of the rows (default 0) are not paired.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "print_comparison", "record_comparison", "run_compare"]


def add_parser(sub: Any) -> Any:
    cmp = sub.add_parser("compare", help="compare two runs' output files on paired rows")
    cmp.add_argument("baseline", help="the baseline run's output file (JSONL from --output)")
    cmp.add_argument("candidate", help="the candidate run's output file")
    cmp.add_argument("--report", metavar="FILE", help="write the HTML comparison report")
    cmp.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any key regressed significantly",
    )
    cmp.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="KEY=X",
        help="exit 1 when KEY's mean falls by more than X (repeatable)",
    )
    cmp.add_argument(
        "--allow-unpaired",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="with a gate, exit 2 when more than this share of the rows is unpaired (0)",
    )
    cmp.add_argument("--key", action="append", metavar="KEY", help="compare only KEY (repeatable)")
    cmp.add_argument("--group-by", metavar="FIELD", help="also compare within each group")
    cmp.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    cmp.add_argument(
        "--min-effect", type=float, default=0.02, help="smallest difference of interest (0.02)"
    )
    cmp.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    cmp.add_argument("--sign-test", action="store_true", help="use the sign test for every key")
    cmp.add_argument(
        "--lower-is-better", action="append", default=[], metavar="KEY", help="repeatable"
    )
    cmp.add_argument(
        "--calibration",
        action="append",
        default=[],
        metavar="SIDE=FILE",
        help="human labels with the judge's scores on a run's outputs (`openevals calibrate "
        "--json`), as baseline=FILE and candidate=FILE: the key's verdict and gate use the "
        "judge-corrected difference",
    )
    return cmp


def run_compare(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    """Compare, print the table (rich when the terminal is one), write the report, gate."""
    from openevals.comparison.gate import failures, parse_max_drop
    from openevals.comparison.paired import compare

    try:
        max_drop = parse_max_drop(args.max_drop)
        comparison = compare(
            args.baseline,
            args.candidate,
            keys=args.key,
            group_by=args.group_by,
            alpha=args.alpha,
            min_effect=args.min_effect,
            seed=args.seed,
            test="sign" if args.sign_test else "auto",
            lower_is_better=args.lower_is_better,
            calibration=_calibration(args.calibration),
        )
        tripped = failures(
            comparison,
            fail_on_regression=args.fail_on_regression,
            max_drop=max_drop,
            allow_unpaired=args.allow_unpaired,
        )
    except (ValueError, TypeError, OSError) as exc:  # UnicodeDecodeError is a ValueError
        raise usage_error(_first_line(exc)) from None
    except Exception as exc:  # anything else a damaged run file causes: still exit 2, not 1
        raise usage_error(f"{type(exc).__name__}: {_first_line(exc)}") from None
    print_comparison(comparison)
    from openevals.store.runs import store_option

    store = store_option(args)
    if store is not None:
        print(f"Recorded: {record_comparison(store, comparison, tags=args.tag)}")
    if args.report:
        print(f"Report: {comparison.report_html(args.report)}")
    for line in tripped:
        print(f"gate: {line}", file=sys.stderr)
    return 1 if tripped else 0


def _calibration(items: list[str]) -> dict[str, str] | None:
    """``["baseline=FILE", "candidate=FILE"]`` as compare's ``calibration=`` (None if empty)."""
    from openevals._repr import show

    if not items:
        return None
    out = {}
    for item in items:
        side, sep, path = item.partition("=")
        if not sep or side not in ("baseline", "candidate") or not path or side in out:
            raise ValueError(
                f"--calibration expects baseline=FILE and candidate=FILE, once each; got {show(item)}"
            )
        out[side] = path
    if len(out) != 2:
        raise ValueError("--calibration needs both baseline=FILE and candidate=FILE")
    return out


def record_comparison(store: Any, comparison: Any, *, tags: Any = ()) -> str:
    """Record ``comparison`` in a run store (a ``compare`` record: its figures, no rows);
    returns where."""
    from openevals.store.runs import open_store

    with open_store(store) as opened:
        run_id = opened.begin(
            kind="compare", name=f"{comparison.candidate} vs {comparison.baseline}", tags=tags
        )
        opened.finish(
            run_id,
            aggregates={},
            details={"comparison": comparison.to_dict()},
            rows=comparison.rows_paired,
            error_rows=0,
            cost_usd=None,
            elapsed_sec=None,
        )
        return f"comparison {run_id} in {opened.location}"


def _first_line(exc: BaseException) -> str:
    lines = str(exc).splitlines()
    return lines[0] if lines else type(exc).__name__


def print_comparison(comparison: Any) -> None:
    """The per-key table of a comparison (rich), then its notes."""
    from rich.console import Console
    from rich.table import Table

    from openevals.comparison.report import HEADER, _line

    table = Table(
        title=f"{comparison.candidate} vs {comparison.baseline}: "
        f"{comparison.rows_paired} paired rows"
    )
    for name in HEADER:
        table.add_column(name, justify="right" if name not in ("key", "verdict") else "left")
    styles = {
        "improved": "green",
        "regressed": "bold red",
        "underpowered": "yellow",
        "not finite": "bold red",
    }
    for item in comparison.keys:
        table.add_row(*_line(item), style=styles.get(item.verdict))
    console = Console(width=max(100, Console().width))
    console.print(table)
    rest = str(comparison).splitlines()[2 + len(comparison.keys) :]
    for line in rest:
        console.print(line, markup=False, highlight=False)
