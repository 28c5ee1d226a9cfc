"""``openevals runs list | show | diff | trend`` (rich tables) and ``openevals view``, plus the
``--store`` / ``--no-store`` / ``--tag`` options the recording commands share.

Exit status: 0, 1 when ``diff --fail-on-regression`` finds a regression, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from openevals._repr import show
from openevals.report.progress import _fmt as _figure

__all__ = ["add_parsers", "add_store_options", "check_store", "run_runs", "run_view", "tag_run"]


def add_store_options(parser: Any) -> None:
    """``--store LOCATION``, ``--no-store`` and ``--tag TAG`` of a command that records."""
    parser.add_argument(
        "--store",
        metavar="PATH|URL",
        help="run store to record in (default: $OPENEVALS_STORE, else .openevals/runs.db)",
    )
    parser.add_argument("--no-store", action="store_true", help="do not record this run")
    parser.add_argument(
        "--tag", action="append", default=[], metavar="TAG", help="tag the recorded run"
    )


def check_store(args: argparse.Namespace, usage_error: type[Exception]) -> None:
    """The run store opens (before any model call), and tags are valid."""
    from openevals.store.runs import check_tags, open_store, store_option

    store = store_option(args)
    if store is None:
        return
    try:
        check_tags(args.tag)
        open_store(store).close()
    except (ValueError, TypeError, ImportError, OSError) as exc:
        raise usage_error(f"--store: {exc}") from None


def tag_run(store: Any, run_id: int, tags: Sequence[str]) -> None:
    """Tag a run ``openevals run --store`` recorded, and say where it is."""
    from openevals.store.runs import open_store

    with open_store(store) as opened:
        if tags:
            opened.tag(run_id, *tags)
        print(f"Recorded: run {run_id} in {opened.location}")


def add_parsers(sub: Any) -> None:
    runs = sub.add_parser("runs", help="list, show, diff and trend stored runs")
    runs.add_argument("--store", metavar="PATH|URL", help="run store (default: .openevals/runs.db)")
    actions = runs.add_subparsers(dest="runs_command", metavar="VERB")
    listing = actions.add_parser("list", help="recorded runs, newest first")
    listing.add_argument("--dataset")
    listing.add_argument("--evaluator")
    listing.add_argument("--tag")
    listing.add_argument("--commit", help="a commit or its prefix")
    listing.add_argument("--limit", type=int, default=30)
    show = actions.add_parser("show", help="one run: metadata and aggregates")
    show.add_argument("run", help="run id, tag or 'latest'")
    cmp = actions.add_parser("diff", help="compare two stored runs (by id or tag)")
    cmp.add_argument("baseline")
    cmp.add_argument("candidate", nargs="?", default="latest")
    cmp.add_argument("--key", action="append", metavar="KEY")
    cmp.add_argument("--alpha", type=float, default=0.05)
    cmp.add_argument("--fail-on-regression", action="store_true")
    trend = actions.add_parser("trend", help="one key across runs, regressions flagged")
    trend.add_argument("key")
    trend.add_argument("--dataset")
    trend.add_argument("--last", type=int, default=20)
    view = sub.add_parser("view", help="browse stored runs and label rows in a local web app")
    view.add_argument("--store", metavar="PATH|URL", help="run store (default: .openevals/runs.db)")
    view.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    view.add_argument("--port", type=int, default=8765)
    view.add_argument(
        "--token",
        help="access token (required with a --host beyond loopback; or OPENEVALS_VIEW_TOKEN)",
    )


def _fmt(value: Any, digits: int = 3) -> str:
    """A figure as the run summary prints it (:mod:`openevals.report.progress`), ``-`` for NaN."""
    return "-" if isinstance(value, float) and math.isnan(value) else _figure(value, digits)


def _console() -> Any:
    from rich.console import Console

    return Console(width=max(110, Console().width))


def run_runs(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    """Dispatch ``openevals runs VERB``."""
    from openevals.store.runs import RunStore

    if args.runs_command is None:
        raise usage_error("openevals runs: name a verb: list, show, diff or trend")
    try:
        with RunStore(args.store) as store:
            if args.runs_command == "list":
                return _list(store, args)
            if args.runs_command == "show":
                return _show(store, args.run)
            if args.runs_command == "diff":
                return _diff(store, args)
            return _trend(store, args)
    except (ValueError, TypeError, ImportError) as exc:
        raise usage_error(str(exc).splitlines()[0]) from None


def _list(store: Any, args: argparse.Namespace) -> int:
    from rich.table import Table

    chosen = ("dataset", "evaluator", "tag", "commit", "limit")  # the `runs list` options
    runs = store.runs(**{name: getattr(args, name) for name in chosen})
    table = Table(title=f"runs in {store.location}")
    for name in ("id", "kind", "when", "dataset", "evaluators", "rows", "errors", "commit", "tags"):
        table.add_column(name, justify="right" if name in ("id", "rows", "errors") else "left")
    for run in runs:
        table.add_row(
            str(run.id),
            run.kind,
            run.created_at.replace("T", " ")[:19],
            _plain(run.dataset or "-"),  # values from data are never read as rich markup
            _plain(", ".join(run.evaluator_names)),
            str(run.rows),
            str(run.error_rows),
            (run.git_commit or "-")[:8],
            _plain(", ".join(run.tags)),
        )
    _console().print(table)
    return 0


def _plain(text: str) -> Any:
    from rich.text import Text

    return Text(text)


def _show(store: Any, ref: str) -> int:
    from rich.table import Table

    run = store.run(ref)
    console = _console()
    facts = Table(title=f"run {run.id}", show_header=False)
    facts.add_column("field")
    facts.add_column("value")
    for name, value in (
        ("kind", run.kind),
        ("recorded", run.created_at),
        ("dataset", run.dataset or "-"),
        ("fingerprint", run.fingerprint or "-"),
        ("commit", run.git_commit or "-"),
        ("rows", f"{run.rows} ({run.error_rows} with errors)"),
        ("models", ", ".join(run.models) or "-"),
        ("cost (USD)", _fmt(run.cost_usd, 4)),
        ("tags", ", ".join(run.tags) or "-"),
        ("output", run.output or "-"),
        ("complete", "yes" if run.complete else "no (the recording was interrupted)"),
    ):
        facts.add_row(name, _plain(str(value)))
    for ev in run.evaluators:
        hashed = f" prompt {ev['prompt_hash']}" if ev.get("prompt_hash") else ""
        model = f" model {ev['model']}" if ev.get("model") else ""
        facts.add_row("evaluator", _plain(f"{ev.get('name')}{model}{hashed}"))
    console.print(facts)
    aggs = Table(title="aggregates")
    for name in ("key", "n", "mean", "95% interval", "min", "max"):
        aggs.add_column(name, justify="left" if name == "key" else "right")
    for key, agg in run.aggregates.items():
        ci = agg.get("ci95") or [None, None]
        aggs.add_row(
            _plain(key),
            str(agg.get("count")),
            _fmt(agg.get("mean")),
            f"[{_fmt(ci[0])}, {_fmt(ci[1])}]",
            _fmt(agg.get("min")),
            _fmt(agg.get("max")),
        )
    console.print(aggs)
    return 0


def _diff(store: Any, args: argparse.Namespace) -> int:
    from openevals.comparison.cli import print_comparison
    from openevals.viewer.history import diff

    comparison = diff(store, args.baseline, args.candidate, keys=args.key, alpha=args.alpha)
    print_comparison(comparison)
    if args.fail_on_regression and any(k.verdict == "regressed" for k in comparison.keys):
        return 1
    return 0


def _trend(store: Any, args: argparse.Namespace) -> int:
    from rich.table import Table

    from openevals.viewer.history import trend

    points = trend(store, args.key, dataset=args.dataset, last=args.last)
    if not points:
        raise ValueError(f"no stored run scored the key {show(args.key)}")
    table = Table(title=f"{args.key} across {len(points)} runs (oldest first)")
    for name in ("run", "when", "commit", "n", "mean", "95% interval", "vs previous", "p"):
        table.add_column(
            name, justify="left" if name in ("when", "commit", "vs previous") else "right"
        )
    for point in points:
        table.add_row(
            str(point.run.id),
            point.run.created_at.replace("T", " ")[:19],
            (point.run.git_commit or "-")[:8],
            str(point.count),
            _fmt(point.mean),
            f"[{_fmt(point.ci_low)}, {_fmt(point.ci_high)}]",
            point.verdict or "-",
            _fmt(point.p_value, 4),
            style="bold red" if point.regressed else None,
        )
    _console().print(table)
    return 0


def run_view(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    """``openevals view``: serve the viewer until Ctrl-C."""
    from openevals.viewer.serve import serve

    try:
        return serve(store=args.store, host=args.host, port=args.port, token=args.token)
    except (ValueError, TypeError, ImportError) as exc:
        raise usage_error(str(exc).splitlines()[0]) from None
