"""The ``openevals`` command.

    openevals run DATA --evaluator NAME[:option=value...] [--evaluator ...]
                  [--target module:function] [--concurrency N] [--group-by FIELD]
                  [--output results.jsonl|results.parquet] [--report report.html]
                  [--cache FILE] [--model provider:model] [--retry-errors] [--no-progress]
                  [--engine local|ray] [--ray-address ADDRESS]
    openevals calibrate DATA (--judge NAME[:option=value...] | --judge-function module:function)
                  [--label COLUMN] [--reason COLUMN] [--label-type TYPE] [--choices A,B,...]
                  [--feedback-key KEY] [--tolerance X] [--model provider:model]
                  [--concurrency N] [--output results.jsonl] [--report report.html]
                  [--cache FILE] [--json FILE] [--no-progress]
    openevals compare BASE.jsonl CAND.jsonl [--report compare.html] [--fail-on-regression]
                  [--max-drop KEY=X ...] [--key KEY ...] [--group-by FIELD] [--alpha A]
    openevals demo [--report report.html] [--output results.jsonl] [--no-progress]
    openevals evaluators

Exit status: 0 when the run finished, 1 when every row failed, 2 for usage errors (bad arguments,
unknown evaluator, unreadable data), 130 when interrupted with Ctrl-C (finished work is kept in
``--output`` and a rerun resumes).

``DATA`` is a JSONL, JSON, CSV, TSV or Parquet file, a directory or glob of Parquet files, or
``langsmith://NAME[?split=...&version=...]``. ``--output x.parquet`` writes the long results table
(see ``openevals.data.frames``) when the run completes; the run's resumable JSONL record is
kept beside it as ``x.parquet.jsonl``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from openevals._repr import PATH_LIMIT, show

__all__ = ["main"]

EXIT_OK = 0
EXIT_ALL_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _demo_data() -> Path:
    """The demo dataset: packaged with the wheel (``openevals/_examples``) or in the checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_examples", here.parent / "examples" / "data"):
        path = candidate / "demo.jsonl"
        if path.exists():
            return path
    return here.parent / "examples" / "data" / "demo.jsonl"


DEMO_EVALUATORS = (
    "exact_match:name=exact_match:outputs=outputs.answer:reference_outputs=reference_outputs.answer",
    "levenshtein_distance:name=levenshtein:outputs=outputs.answer"
    ":reference_outputs=reference_outputs.answer",
    "json_match:name=json_match:aggregator=average:outputs=outputs.facts"
    ":reference_outputs=reference_outputs.facts",
    "embedding_similarity:name=embedding_similarity:outputs=outputs.answer"
    ":reference_outputs=reference_outputs.answer",
    "recall:name=recall@3:k=3:outputs=outputs.retrieved:reference_outputs=reference_outputs.relevant",
)


class UsageError(Exception):
    """Bad command-line usage (exit status 2)."""


_DATA_ERRORS = (ValueError, TypeError, FileNotFoundError, IsADirectoryError, ImportError)
"""What reading the data (or building the run) raises for a bad argument or file."""


@contextlib.contextmanager
def _usage_errors(*errors: type[Exception], prefix: str = "") -> Iterator[None]:
    """Raise any of ``errors`` as a :class:`UsageError` (its message after ``prefix``)."""
    try:
        yield
    except errors as exc:
        raise UsageError(prefix + str(exc)) from None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would sys.exit(2) itself
        raise UsageError(f"{self.prog}: {message}")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="openevals",
        description="Run openevals evaluators over a dataset, locally.",
    )
    from openevals import __distribution__, __version__

    parser.add_argument(
        "--version",
        action="version",
        version=f"openevals {__version__} (distribution {__distribution__})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="evaluate a JSONL/JSON/CSV/TSV dataset")
    run.add_argument(
        "data",
        help="dataset: .jsonl, .json, .csv, .tsv or .parquet file, Parquet directory or glob, "
        "or langsmith://NAME",
    )
    run.add_argument(
        "-e",
        "--evaluator",
        action="append",
        required=True,
        metavar="NAME[:option=value...]",
        help="evaluator spec, repeatable (see `openevals evaluators`)",
    )
    run.add_argument(
        "--traces",
        choices=("trace", "agent"),
        help="read DATA as OpenTelemetry traces (OTLP JSON or protobuf file, any name): one row "
        "per trace or per agent span (*.otlp.json / .otlp.jsonl / .otlp.pb are read as traces "
        "without it)",
    )
    run.add_argument("--target", metavar="MODULE:FUNCTION", help="produce outputs from inputs")
    run.add_argument("--concurrency", type=int, default=16, help="calls in flight (default 16)")
    run.add_argument("--group-by", metavar="FIELD", help="aggregate per value of this field")
    run.add_argument(
        "--output",
        metavar="FILE",
        help="JSONL results, a rerun resumes from it; or a .parquet results table (its "
        "resumable record is FILE.jsonl)",
    )
    run.add_argument("--report", metavar="FILE", help="write a self-contained HTML report")
    run.add_argument(
        "--cache",
        metavar="FILE",
        nargs="?",
        const=True,
        help="SQLite judge cache (without FILE: the default cache file)",
    )
    run.add_argument("--model", metavar="PROVIDER:MODEL", help="judge model for llm:... evaluators")
    run.add_argument("--retry-errors", action="store_true", help="rerun failed pairs on resume")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument(
        "--allow-empty", action="store_true", help="accept a dataset with no rows (exit 0)"
    )
    run.add_argument(
        "--eval-timeout",
        type=float,
        metavar="SECONDS",
        help="record an evaluation still running after SECONDS as an error on its row",
    )
    run.add_argument(
        "--trials", type=int, default=1, metavar="K", help="run the target K times per row"
    )
    run.add_argument(
        "--judge-repeats",
        type=int,
        default=1,
        metavar="M",
        help="ask every judge M times per output (pass@k, flaky rows and the app/judge noise "
        "split are printed)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="call no model: render every judge prompt, count its tokens and print the "
        "estimated cost",
    )
    run.add_argument(
        "--calibration",
        action="append",
        default=[],
        metavar="FILE",
        help="human labels with the judge's scores (`openevals calibrate --json FILE`): also "
        "show the judge-corrected mean of that key (repeatable)",
    )
    run.add_argument(
        "--engine", choices=("local", "ray"), default="local", help="where rows run (default local)"
    )
    run.add_argument(
        "--ray-address", metavar="ADDRESS", help="Ray cluster to join (default: RAY_ADDRESS)"
    )
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="stop starting rows once the estimated cost reaches USD (rerun to resume)",
    )

    from openevals.calibration.cli import add_parser as add_calibrate_parser
    from openevals.comparison.cli import add_parser as add_compare_parser
    from openevals.viewer.runs_cli import add_parsers as add_runs_parsers
    from openevals.viewer.runs_cli import add_store_options

    add_store_options(run)
    add_store_options(add_calibrate_parser(sub))
    add_store_options(add_compare_parser(sub))
    add_runs_parsers(sub)
    from openevals.audit.cli import add_parser as add_audit_parser

    add_audit_parser(sub)

    demo = sub.add_parser("demo", help="run the offline sample in examples/")
    demo.add_argument("--report", metavar="FILE", help="report path (default: a temp dir)")
    demo.add_argument("--output", metavar="FILE", help="JSONL results file")
    demo.add_argument("--no-progress", action="store_true", help="no progress bar")

    sub.add_parser("evaluators", help="list evaluator names")
    return parser


def _load_target(spec: str, option: str = "--target") -> Callable[..., Any]:
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(
            f"{option} must look like module:function or path/file.py:function; got {show(spec)}"
        )
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name).resolve()
            try:
                found = path.exists()
            except OSError:  # e.g. a name longer than the system allows
                found = False
            if not found:
                raise UsageError(f"{option}: no such file {show(module_name, PATH_LIMIT)}")
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            if loader_spec is None or loader_spec.loader is None:
                raise UsageError(f"{option}: cannot import {show(module_name)}")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[path.stem] = module
            loader_spec.loader.exec_module(module)
        else:
            cwd = str(Path.cwd())
            if cwd not in sys.path:
                sys.path.insert(0, cwd)
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{option}: cannot import {show(module_name)}: {exc}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise UsageError(f"{option}: {show(module_name)} has no function {show(attr)}")
    return fn  # type: ignore[no-any-return]


def _judge_of(args: argparse.Namespace) -> Any:
    """``--judge-function MODULE:FUNCTION`` loaded, else the ``--judge`` spec (a str)."""
    if args.judge_function:
        return _load_target(args.judge_function, "--judge-function")
    return args.judge


def _parquet_output(output: str | None) -> tuple[str | None, str | None]:
    """For ``--output x.parquet``: the table to write at the end and the run's JSONL record
    (``x.parquet.jsonl``); otherwise ``(None, output)``."""
    from openevals.data.sources import PARQUET_SUFFIXES, require

    if output is None or Path(output).suffix.lower() not in PARQUET_SUFFIXES:
        return None, output
    with _usage_errors(ImportError):  # before the run, not after it
        require("pyarrow.parquet", "parquet", "--output FILE.parquet")
    return output, output + ".jsonl"


def _engine(args: argparse.Namespace) -> Any:
    """The engine object of ``--engine``, ``--ray-address`` and ``--eval-timeout``."""
    from openevals.evaluation.engines.engine import LocalEngine, RayEngine

    if args.engine == "ray":
        return RayEngine(address=args.ray_address, eval_timeout=args.eval_timeout)
    if args.ray_address is not None:
        raise UsageError("--ray-address is only used with --engine ray; pass --engine ray too")
    return LocalEngine(eval_timeout=args.eval_timeout)


def _run(args: argparse.Namespace, title: str) -> int:
    """``openevals run`` with the parsed ``args`` (``openevals demo`` runs through it too)."""
    from openevals.evaluation.failfast import DataSourceFailed, EvaluatorFailing
    from openevals.evaluation.pricing import Budget
    from openevals.evaluation.registry import SpecError, build_evaluator
    from openevals.evaluation.result import EvaluationInterrupted
    from openevals.evaluation.runner import evaluate
    from openevals.report.progress import print_summary
    from openevals.store.runs import store_option

    data = _traces(args.data, args.traces) if args.traces else args.data
    target = _load_target(args.target) if args.target else None
    store = store_option(args)
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be >= 1; got {args.concurrency}")
    table, output = _parquet_output(args.output)
    with _usage_errors(SpecError):
        specs = [build_evaluator(text, model=args.model) for text in args.evaluator]
    if not args.allow_empty:
        _refuse_empty(data)
    labels = _calibrations(args.calibration)
    repeat = _trials(args.trials, args.judge_repeats)
    if args.dry_run:
        return _dry_run(data, specs, args)
    interrupted = False
    stopped = ""
    try:
        result = evaluate(
            data,
            specs,
            target=target,
            concurrency=args.concurrency,
            cache=args.cache,
            group_by=args.group_by,
            progress=not args.no_progress,
            output=output,
            retry_errors=args.retry_errors,
            engine=_engine(args),
            budget=Budget(max_cost=args.max_cost),
            trials=repeat,
            store=store,
        )
    except EvaluationInterrupted as stop:
        result = stop.result
        interrupted = True
        print("Interrupted: keeping the finished work.", file=sys.stderr)
    except EvaluatorFailing as failing:
        if failing.result is None:  # pragma: no cover - evaluate always sets it
            raise
        result, stopped = failing.result, str(failing)
    except DataSourceFailed as failed:  # the rows read before the failure were evaluated
        if failed.result is not None and failed.rows_read:
            print_summary(failed.result)
        raise UsageError(str(failed)) from None
    except _DATA_ERRORS as exc:
        raise UsageError(str(exc)) from None
    for found in labels:
        with _usage_errors(ValueError, prefix="--calibration: "):
            result = result.corrected(found)
    print_summary(result)
    if result.stopped:
        print(result.stopped.replace("output=", "--output"), file=sys.stderr)
    if repeat is not None and not interrupted:
        for stats in result.trial_stats().values():
            print(stats)
    if "run_id" in result.summary:
        from openevals.viewer.runs_cli import tag_run

        tag_run(store, result.summary["run_id"], args.tag)
    failures = [
        (row["index"], name, entry.get("error") or {})
        for row in (result.rows if result.summary["pairs"]["failed"] else ())
        for name, entry in row["evaluations"].items()
        if entry.get("status") != "success"
    ]
    for index, name, error in failures[:5]:
        message = str(error.get("message", ""))
        if len(message) > 300:
            message = message[:300] + "..."
        print(f"row {index} / {name}: {error.get('type', 'Error')}: {message}", file=sys.stderr)
    if len(failures) > 5:
        print(f"... and {len(failures) - 5} more failed evaluations", file=sys.stderr)
    if args.report:
        print(f"Report: {result.report_html(args.report, title=title)}")
    if table is not None and not interrupted:
        print(f"Results: {result.to_parquet(table)} (run record: {output})")
    elif output:
        print(f"Results: {output}" + (" (rerun the command to resume)" if interrupted else ""))
    if interrupted:
        return EXIT_INTERRUPTED
    if stopped:
        print(f"error: {stopped}", file=sys.stderr)
        return EXIT_ALL_FAILED
    if result.rows and result.summary["rows_with_errors"] == len(result.rows):
        return EXIT_ALL_FAILED
    return EXIT_OK


def _dry_run(data: Any, specs: list[Any], args: argparse.Namespace) -> int:
    """Print what the run would cost (no model call, no target run)."""
    from openevals.evaluation.estimate import estimate_run_cost

    with _usage_errors(*_DATA_ERRORS):
        found = estimate_run_cost(data, specs, model=args.model, concurrency=args.concurrency)
    print(found)
    if args.target is not None:
        print(
            "  note: the target was not run; the prompts hold the rows' own outputs (if any), "
            "so the estimate is low by the length of the answers the target would write"
        )
    return EXIT_OK


def _trials(trials: int, judge_repeats: int) -> Any:
    """``--trials`` / ``--judge-repeats`` as ``evaluate``'s ``trials=`` (``None`` for 1 and 1)."""
    from openevals.evaluation.trials import Trials

    if (trials, judge_repeats) == (1, 1):
        return None
    try:
        return Trials(trials=trials, judge_repeats=judge_repeats)
    except ValueError as exc:
        flag = "--judge-repeats" if "judge_repeats" in str(exc) else "--trials"
        raise UsageError(f"{flag} must be >= 1") from None


def _calibrations(paths: Sequence[str]) -> list[Any]:
    """The ``--calibration`` files, read before any model call (a bad one is a usage error)."""
    from openevals.trust.labels import load_calibration

    with _usage_errors(ValueError, prefix="--calibration: "):
        return [load_calibration(path) for path in paths]


def _traces(path: str, per: str) -> Any:
    from openevals.traces.source import read_traces

    with _usage_errors(ValueError, TypeError, FileNotFoundError):
        return read_traces(path, per=per)


def _refuse_empty(data: Any) -> None:
    """A dataset without rows is a usage error (``--allow-empty`` accepts it)."""
    from openevals.data.rows import count_rows

    try:
        count = count_rows(data)
    except (ValueError, TypeError, OSError):
        return  # evaluate() reports the same problem with its own message
    if count == 0:
        raise UsageError(
            f"{show(data)} holds no rows, so there is nothing to evaluate; check the file, or pass "
            "--allow-empty to accept an empty dataset"
        )


def _demo(args: argparse.Namespace) -> int:
    data = _demo_data()
    if not data.exists():
        raise UsageError(f"the demo dataset is missing: {data}")
    evaluators = list(DEMO_EVALUATORS)
    if importlib.util.find_spec("sentence_transformers") is None:
        evaluators = [e for e in evaluators if not e.startswith("embedding_similarity")]
        print(
            "sentence-transformers is not installed (pip install 'openevals-suite[local]'); "
            "skipping embedding similarity",
            file=sys.stderr,
        )
    report = args.report or str(Path(tempfile.mkdtemp(prefix="openevals-demo-")) / "report.html")
    argv = ["run", str(data), "--concurrency=8", "--group-by=category", f"--report={report}"]
    argv += [f"--evaluator={spec}" for spec in evaluators] + ["--no-store"]
    argv += [f"--output={args.output}"] if args.output else []
    argv += ["--no-progress"] if args.no_progress else []
    return _run(_build_parser().parse_args(argv), title="openevals demo")


def _list_evaluators() -> int:
    from openevals.evaluation.registry import EVALUATOR_NAMES

    for name in EVALUATOR_NAMES:
        print(name)
    print("\nOptions: NAME:option=value[:option=value...]; every evaluator also takes")
    print("inputs=/outputs=/reference_outputs= (dotted row fields) and name=.")
    print("LLM judges: llm:<PROMPT_CONSTANT> with --model provider:model.")
    return EXIT_OK


def _check_paths(args: argparse.Namespace) -> None:
    """Checks of file options that can fail before any model call (see ``_cli_checks``)."""
    from openevals._cli_checks import check_cache_file, prepare_output_file

    check_cache_file(getattr(args, "cache", None))
    for option in ("output", "report", "json"):
        prepare_output_file(getattr(args, option, None), f"--{option}")
    if args.command in ("run", "calibrate", "compare"):
        from openevals.viewer.runs_cli import check_store

        check_store(args, UsageError)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``openevals`` console script; returns the exit status."""
    from openevals._cli_checks import CheckError, deep_data_message, one_line

    parser = _build_parser()
    args: argparse.Namespace | None = None
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        _check_paths(args)
        if args.command == "run":
            return _run(args, title=f"openevals: {Path(args.data).name}")
        if args.command == "calibrate":
            from openevals.calibration.cli import run_calibrate

            return run_calibrate(args, _judge_of(args), UsageError)
        if args.command == "audit":
            from openevals.audit.cli import run_audit

            return run_audit(args, _judge_of(args), UsageError)
        if args.command == "compare":
            from openevals.comparison.cli import run_compare

            return run_compare(args, UsageError)
        if args.command == "runs":
            from openevals.viewer.runs_cli import run_runs

            return run_runs(args, UsageError)
        if args.command == "view":
            from openevals.viewer.runs_cli import run_view

            return run_view(args, UsageError)
        if args.command == "demo":
            return _demo(args)
        if args.command == "evaluators":
            return _list_evaluators()
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    except (UsageError, CheckError) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except RecursionError:  # data nested deeper than the JSON reader can go
        data = getattr(args, "data", None)
        message = deep_data_message(data) if data else "a value is nested too deeply to process"
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.DatabaseError as exc:  # the judge cache file (checked first; this is a backstop)
        cache = getattr(args, "cache", None)
        print(f"error: --cache {cache}: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # a file that cannot be read or written (paths are checked first)
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
