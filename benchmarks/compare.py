"""Time our ``openevals`` against the public release, side by side, on identical inputs.

Usage::

    .venv/bin/python benchmarks/compare.py --baseline-python .venv-baseline/bin/python
    .venv/bin/python benchmarks/compare.py --baseline-python PATH --only import exact_match
    .venv/bin/python benchmarks/compare.py --baseline-python PATH --json results.json

Nothing is installed. Each workload of ``benchmarks/_workloads.py`` runs in fresh subprocesses of
this interpreter with the repository first on ``PYTHONPATH`` ("ours") and of the baseline
interpreter with the public package installed ("public"), alternating the two, with LangSmith
tracing variables removed from the environment. Per-call workloads keep the best of ``--rounds``
processes per side; import time is the median of ``--import-runs`` processes. The table shows
both numbers, the ratio public / ours (how many times faster we are), the target ratio and
whether it was met. The exit status is 1 when a target is missed or a workload fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORKLOADS_SCRIPT = HERE / "_workloads.py"

sys.path.insert(0, str(HERE))
from _workloads import WORKLOADS, Workload  # noqa: E402

_DROP_ENV_PREFIXES = ("LANGSMITH_", "LANGCHAIN_")


@dataclass
class Side:
    value: float | None = None
    values: list[float] = field(default_factory=list)
    fingerprint: str | None = None
    result: Any = None
    detail: dict[str, Any] = field(default_factory=dict)
    package: str | None = None
    error: str | None = None


@dataclass
class Row:
    name: str
    unit: str
    target: float
    description: str
    ours: Side
    public: Side
    ratio: float | None = None
    status: str = "error"
    notes: list[str] = field(default_factory=list)


def _env(python: str, ours: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_ENV_PREFIXES)}
    env.pop("PYTHONPATH", None)
    # As if the interpreter's venv were activated: tools such as mypy resolve from its bin dir.
    env["PATH"] = os.pathsep.join([os.path.dirname(python), env.get("PATH", "")])
    if ours:
        env["PYTHONPATH"] = str(REPO)
    env["PYTHONHASHSEED"] = "0"
    return env


def _run_child(python: str, name: str, *, ours: bool, timeout: float) -> dict[str, Any]:
    # A scratch working directory: tools the workloads start (mypy) must not pick up this
    # repository's configuration or leave caches in it.
    with tempfile.TemporaryDirectory(prefix="openevals-bench-") as scratch:
        proc = subprocess.run(
            [python, str(WORKLOADS_SCRIPT), name],
            cwd=scratch,
            env=_env(python, ours),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(tail)
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _finish(side: Side, aggregate: str) -> None:
    if side.error is None and side.values:
        side.value = statistics.median(side.values) if aggregate == "median" else min(side.values)


def _measure_into(side: Side, python: str, wl: Workload, *, ours: bool, timeout: float) -> None:
    if side.error is not None:
        return
    try:
        out = _run_child(python, wl.name, ours=ours, timeout=timeout)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
        side.error = f"{type(exc).__name__}: {exc}"
        return
    side.values.append(float(out["value"]))
    side.fingerprint = out["fingerprint"]
    side.result = out["result"]
    side.detail = out["detail"]
    side.package = out["package"]


def measure_pair(
    baseline_python: str, wl: Workload, *, runs: int, timeout: float
) -> tuple[Side, Side]:
    """Run ``wl`` ``runs`` times per package, alternating ours and public."""
    ours, public = Side(), Side()
    if wl.aggregate == "median":  # warm-up run per side: bytecode caches, page cache
        _measure_into(Side(), sys.executable, wl, ours=True, timeout=timeout)
        _measure_into(Side(), baseline_python, wl, ours=False, timeout=timeout)
    for i in range(runs):
        order = [(ours, sys.executable, True), (public, baseline_python, False)]
        for side, python, is_ours in order if i % 2 == 0 else reversed(order):
            _measure_into(side, python, wl, ours=is_ours, timeout=timeout)
    _finish(ours, wl.aggregate)
    _finish(public, wl.aggregate)
    return ours, public


def _check_package(side: Side, *, ours: bool, notes: list[str]) -> None:
    if side.package is None:
        return
    inside_repo = Path(side.package).resolve().is_relative_to(REPO / "openevals")
    if inside_repo != ours:
        who = "ours" if ours else "public"
        notes.append(f"{who} imported openevals from {side.package}")


def compare(
    baseline_python: str, names: list[str], *, import_runs: int, rounds: int, timeout: float
) -> list[Row]:
    rows = []
    for name in names:
        wl = WORKLOADS[name]
        runs = import_runs if wl.aggregate == "median" else rounds
        if wl.rounds is not None:
            runs = min(runs, wl.rounds)
        started = time.perf_counter()
        ours, public = measure_pair(baseline_python, wl, runs=runs, timeout=timeout)
        row = Row(wl.name, wl.unit, wl.target, wl.description, ours, public)
        _check_package(ours, ours=True, notes=row.notes)
        _check_package(public, ours=False, notes=row.notes)
        if ours.value is not None and public.value is not None:
            row.ratio = public.value / ours.value if ours.value > 0 else float("inf")
            row.status = "pass" if row.ratio >= wl.target else "FAIL"
            if ours.fingerprint != public.fingerprint:
                row.status = "error"
                row.notes.append("inputs differ between the two runs")
            if ours.result != public.result:
                row.notes.append(f"results differ: ours={ours.result!r} public={public.result!r}")
        for who, side in (("ours", ours), ("public", public)):
            if side.error:
                row.notes.append(f"{who}: {side.error}")
        print(f"  {name}: done in {time.perf_counter() - started:.1f}s", file=sys.stderr)
        rows.append(row)
    return rows


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_table(rows: list[Row]) -> str:
    header = ("workload", "unit", "ours", "public", "ratio", "target", "result")
    body = [
        (
            r.name,
            r.unit,
            _fmt(r.ours.value),
            _fmt(r.public.value),
            "-" if r.ratio is None else f"{r.ratio:,.1f}x",
            f">={r.target:g}x",
            r.status,
        )
        for r in rows
    ]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *body, strict=True)]
    lines = []
    for i, cells in enumerate([header, *body]):
        lines.append(
            "  ".join(
                str(c).ljust(w) if j in (0, 1, 6) else str(c).rjust(w)
                for j, (c, w) in enumerate(zip(cells, widths, strict=True))
            )
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"  {r.name}: {n}" for r in rows for n in r.notes]
    if notes:
        lines += ["", "notes:", *notes]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Compare our openevals with the public release on identical workloads."
    )
    parser.add_argument(
        "--baseline-python",
        help="interpreter with the public openevals installed (e.g. .venv-baseline/bin/python)",
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these workloads")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument(
        "--import-runs", type=int, default=7, help="fresh processes for import timing (median)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="fresh processes per package for per-call workloads (best is kept)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per subprocess")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)

    if args.list:
        for wl in WORKLOADS.values():
            print(f"{wl.name:<28} target >={wl.target:g}x  {wl.description}")
        return 0
    if not args.baseline_python:
        parser.error("--baseline-python is required (see benchmarks/README.md)")
    baseline = Path(os.path.abspath(args.baseline_python))  # no resolve(): keep the venv link
    if not baseline.exists():
        parser.error(f"--baseline-python {baseline} does not exist; see benchmarks/README.md")
    names = args.only or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")

    print(f"ours:   {sys.executable} (PYTHONPATH={REPO})", file=sys.stderr)
    print(f"public: {baseline}", file=sys.stderr)
    rows = compare(
        str(baseline),
        names,
        import_runs=args.import_runs,
        rounds=args.rounds,
        timeout=args.timeout,
    )
    print(format_table(rows))
    if args.json:
        payload = {
            "ours_python": sys.executable,
            "public_python": str(baseline),
            "rows": [asdict(r) for r in rows],
        }
        Path(args.json).write_text(json.dumps(payload, indent=2, default=repr) + "\n")
    return 0 if all(r.status == "pass" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
