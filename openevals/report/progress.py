"""Progress display for batch runs.

``evaluate(progress=...)`` accepts ``True`` (a rich progress bar on stderr: rows done, errors,
rate, ETA, and a table of running aggregates with their current 95% confidence intervals; in a
Jupyter notebook without ``ipywidgets``, one plain line instead, :class:`PlainProgress`),
``False``, a callable (called with :meth:`RunState.snapshot`-style dicts after every finished row
and once at the end with ``"finished": True``), or any object with ``start(state)``,
``advance(state)`` and ``stop(state)`` methods.

rich is imported only when a rich display is actually shown.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from openevals.evaluation.result import EvaluationResult

__all__ = [
    "CallbackProgress",
    "PlainProgress",
    "ProgressSink",
    "RichProgress",
    "RunState",
    "concurrency_label",
    "describe_common",
    "make_progress",
    "print_summary",
    "summary_table",
]

_MAX_LIVE_KEYS = 12


def describe_common(common: Sequence[Mapping[str, Any]], width: int = 120) -> list[str]:
    """One line per entry of :meth:`ErrorTally.common`: ``"5x judge: KeyError: ..."``."""
    texts = [
        f"{item['count']}x {item['evaluator']}: {item['type']}: {item['message']}"
        for item in common
    ]
    return [text if len(text) <= width else text[: width - 3] + "..." for text in texts]


class RunState(Protocol):
    """What a progress sink may read from a running evaluation."""

    rows_total: int | None
    rows_done: int
    rows_failed: int
    pairs_done: int
    pairs_failed: int

    @property
    def concurrency(self) -> int | None: ...

    @property
    def backoffs(self) -> int: ...

    def snapshot(self, *, final: bool = False) -> dict[str, Any]: ...

    def elapsed(self) -> float: ...

    def common_errors(self) -> list[dict[str, Any]]:
        """The most common failures so far (evaluator, type, message, count)."""
        ...


class ProgressSink(Protocol):
    def start(self, state: RunState) -> None: ...

    def advance(self, state: RunState) -> None: ...

    def stop(self, state: RunState) -> None: ...


class CallbackProgress:
    """Calls ``fn(snapshot)`` after every finished row and once more at the end."""

    def __init__(self, fn: Callable[[dict[str, Any]], Any]) -> None:
        self.fn = fn

    def start(self, state: RunState) -> None:
        return None

    def advance(self, state: RunState) -> None:
        self.fn(state.snapshot())

    def stop(self, state: RunState) -> None:
        self.fn({**state.snapshot(final=True), "finished": True})


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


class _RunningTable:
    """Renders the running aggregates each time rich refreshes (not on every update)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def __rich__(self) -> Any:
        from rich.table import Table

        snap = self.state.snapshot()
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold dim")
        table.add_column("running", style="cyan", no_wrap=True)
        for column in ("n", "mean", "95% CI"):
            table.add_column(column, justify="right")
        running = snap.get("running", {})
        for key in list(running)[:_MAX_LIVE_KEYS]:
            stats = running[key]
            low, high = stats["ci95"]
            table.add_row(key, str(stats["count"]), _fmt(stats["mean"]), f"[{low:.3f}, {high:.3f}]")
        if len(running) > _MAX_LIVE_KEYS:
            table.add_row(f"... {len(running) - _MAX_LIVE_KEYS} more", "", "", "")
        for name, value in snap.get("batch_metrics", {}).items():
            table.add_row(f"{name} (dataset)", "", _fmt(value), "")
        return table


class RichProgress:
    """A rich progress bar with running aggregates (on stderr unless a console is given)."""

    def __init__(self, *, console: Console | None = None, description: str = "Evaluating") -> None:
        self.console = console
        self.description = description
        self._live: Any = None
        self._progress: Any = None
        self._task: Any = None

    def start(self, state: RunState) -> None:
        from rich.console import Console, Group
        from rich.live import Live
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = self.console or Console(stderr=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("rows"),
            TextColumn("[red]{task.fields[errors]} with errors"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[concurrency]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._task = self._progress.add_task(
            self.description, total=state.rows_total, errors=0, rate="", concurrency=""
        )
        self._live = Live(
            Group(self._progress, _RunningTable(state)),
            console=console,
            refresh_per_second=8,
        )
        self._live.start()

    def advance(self, state: RunState) -> None:
        if self._progress is None:
            return
        elapsed = state.elapsed()
        rate = f"{state.rows_done / elapsed:.1f} rows/s" if elapsed > 0 else ""
        self._progress.update(
            self._task,
            completed=state.rows_done,
            errors=state.rows_failed,
            rate=rate,
            concurrency=concurrency_label(state),
        )

    def stop(self, state: RunState) -> None:
        if self._live is None:
            return
        self.advance(state)
        live, self._live = self._live, None
        live.stop()
        common = describe_common(state.common_errors())
        if common:
            text = "Most common errors:\n" + "\n".join(f"  {line}" for line in common)
            live.console.print(text, markup=False, highlight=False, soft_wrap=True)


def concurrency_label(state: RunState) -> str:
    """``"concurrency 12"``, with the back-offs once the run has lowered it."""
    current = state.concurrency
    if current is None:
        return ""
    backoffs = state.backoffs
    return f"concurrency {current}" + (f" ({backoffs} back-offs)" if backoffs else "")


class PlainProgress:
    """One plain line on stderr, rewritten in place (``\r``) at most every half second: the
    display in a Jupyter notebook without ``ipywidgets``, where rich's live display only warns."""

    def __init__(self, stream: Any = None, *, every: float = 0.5) -> None:
        self.stream = stream
        self.every = every
        self._last = 0.0

    def _write(self, text: str) -> None:
        stream = self.stream if self.stream is not None else sys.stderr
        stream.write(text)
        stream.flush()

    def _line(self, state: RunState) -> str:
        total = f"/{state.rows_total}" if state.rows_total is not None else ""
        elapsed = state.elapsed()
        rate = f", {state.rows_done / elapsed:.1f} rows/s" if elapsed > 0 else ""
        return f"Evaluating: {state.rows_done}{total} rows, {state.rows_failed} with errors{rate}"

    def start(self, state: RunState) -> None:
        self._last = 0.0

    def advance(self, state: RunState) -> None:
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            self._write("\r" + self._line(state))

    def stop(self, state: RunState) -> None:
        lines = [self._line(state)]
        lines += [f"  {line}" for line in describe_common(state.common_errors())]
        self._write("\r" + "\n".join(lines) + "\n")


def _notebook_without_widgets() -> bool:
    """Running in a Jupyter kernel (IPython already imported: nothing is imported to tell)
    where ``ipywidgets``, which rich's live display needs there, is not installed?"""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is None or type(shell).__name__ != "ZMQInteractiveShell":
        return False
    return importlib.util.find_spec("ipywidgets") is None


def make_progress(progress: Any) -> ProgressSink | None:
    """Resolve the ``progress=`` argument of ``evaluate``."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return PlainProgress() if _notebook_without_widgets() else RichProgress()
    if all(callable(getattr(progress, m, None)) for m in ("start", "advance", "stop")):
        return progress  # type: ignore[no-any-return]
    if callable(progress):
        return CallbackProgress(progress)
    raise TypeError(
        "progress must be True, False, a callable taking a snapshot dict, or an object with "
        f"start/advance/stop methods; got {type(progress).__name__}"
    )


# --------------------------------------------------------------------------- summary table


def summary_table(result: EvaluationResult) -> Any:
    """A rich renderable summarising ``result``: aggregates per key, then per evaluator."""
    from rich.console import Group
    from rich.table import Table

    scores = Table(title="Scores", title_justify="left", header_style="bold")
    scores.add_column("feedback key", overflow="fold")
    corrected = any("corrected" in stats for stats in result.aggregates.values())
    extra = ("corrected", "corrected CI") if corrected else ()
    for column in ("n", "mean", "95% CI", *extra, "median", "min", "max", "stdev"):
        scores.add_column(column, justify="right", no_wrap=True)
    for key, stats in result.aggregates.items():
        if stats.get("count", 0) == 0:
            scores.add_row(key, "0", *(["-"] * (6 + len(extra))))
            continue
        low, high = stats["ci95"]
        label = f"{key} (rate)" if stats.get("type") == "boolean" else key
        fixed = stats.get("corrected")
        beside = (
            (_fmt(fixed["mean"]), f"[{fixed['ci'][0]:.3f}, {fixed['ci'][1]:.3f}]")
            if fixed
            else ("-", "-")
        )
        scores.add_row(
            label,
            str(stats["count"]),
            _fmt(stats["mean"]),
            f"[{low:.3f}, {high:.3f}]",
            *(beside if corrected else ()),
            _fmt(stats["median"]),
            _fmt(stats["min"]),
            _fmt(stats["max"]),
            _fmt(stats["stdev"]),
        )
    evaluators = Table(title="Evaluators", title_justify="left", header_style="bold")
    evaluators.add_column("evaluator", overflow="fold")
    for column in ("done", "errors", "mean time (s)", "tokens", "cost (USD)", "cache"):
        evaluators.add_column(column, justify="right", no_wrap=True)
    for name, info in result.summary["evaluators"].items():
        usage = info.get("usage") or {}
        cost = info.get("cost_usd")
        cache = info.get("cache")
        evaluators.add_row(
            name,
            str(info["done"]),
            str(info["errors"]),
            _fmt(info.get("mean_elapsed_sec")),
            str(usage.get("total_tokens", 0)) if usage else "-",
            f"{cost:.4f}" if isinstance(cost, float) else "-",
            f"{cache['hits']} hits / {cache['misses']} misses" if cache else "-",
        )
    parts: list[Any] = [scores, evaluators]
    if result.by_group is not None:
        groups = Table(title="Groups", title_justify="left", header_style="bold")
        groups.add_column("group", no_wrap=True)
        keys = list(result.aggregates)[:6]
        for column in ("ok rows", "error rows"):
            groups.add_column(column, justify="right")
        for key in keys:
            groups.add_column(f"{key} mean", justify="right", overflow="fold")
        for name, info in result.by_group["per_group"].items():
            means = [_fmt(info["scores"].get(k, {}).get("mean")) for k in keys]
            groups.add_row(
                name,
                str(info["number_of_success_samples"]),
                str(info["number_of_error_samples"]),
                *means,
            )
        macro = result.by_group["macro"]["scores"]
        groups.add_row(
            "[bold]macro[/bold]", "", "", *[_fmt(macro.get(k, {}).get("mean")) for k in keys]
        )
        parts.append(groups)
    if result.batch_metrics:
        dataset = Table(title="Dataset metrics", title_justify="left", header_style="bold")
        dataset.add_column("metric")
        dataset.add_column("value", justify="right")
        for name, info in result.batch_metrics.items():
            dataset.add_row(name, _fmt(info.get("value")))
        parts.append(dataset)
    return Group(*parts)


def print_summary(result: EvaluationResult, console: Console | None = None) -> None:
    """Print :func:`summary_table` and a one-line total to ``console`` (stdout by default)."""
    from rich.console import Console

    out = console or Console()
    if console is None and not out.is_terminal:
        # Piped or redirected: keep tables readable instead of folding them to 80 columns.
        out = Console(width=160)
    out.print(summary_table(result))
    s = result.summary
    cost = s.get("cost_usd")
    line = (
        f"{s['rows']} rows, {s['rows_with_errors']} with errors; "
        f"{s['pairs']['done']} evaluations ({s['pairs']['failed']} failed, "
        f"{s['pairs']['resumed']} resumed) in {s['elapsed_sec']:.2f}s"
    )
    if s.get("usage"):
        line += f"; {s['usage']['total_tokens']} tokens"
    if isinstance(cost, float):
        line += f", est. ${cost:.4f}"
    if s.get("cache"):
        line += f"; cache {s['cache']['hits']} hits / {s['cache']['misses']} misses"
    control = s.get("concurrency")
    if control and control.get("backoffs"):
        line += (
            f"; concurrency backed off {control['backoffs']} times (cap {control['cap']}, "
            f"lowest {control['lowest']}, final {control['final']})"
        )
    reevaluated = s["pairs"].get("reevaluated")
    if reevaluated:
        line += f"; {reevaluated} recorded evaluations redone (their row or evaluator changed)"
    if s.get("interrupted"):
        line += " (interrupted)"
    out.print(line, soft_wrap=True, markup=False, highlight=False)
    for text in describe_common(s.get("common_errors") or []):
        out.print(f"  {text}", soft_wrap=True, markup=False, highlight=False)
