"""Benchmark workloads, run unchanged against our package and against the public release.

Every workload only uses names both packages export (``openevals.exact_match``,
``openevals.string.levenshtein_distance``, ``openevals.json.create_json_match_evaluator``, ...),
builds its inputs deterministically, and measures one number. ``benchmarks/compare.py`` runs each
workload in a fresh interpreter per package, as::

    python benchmarks/_workloads.py NAME        # prints one JSON line

so whichever ``openevals`` that interpreter imports is the one measured. The JSON line holds the
measurement (``value`` in ``unit``), a fingerprint of the inputs (to prove both sides saw the same
data) and the evaluator's result (to show they agree).

Adding a workload: write a function returning :class:`Measurement` and register it::

    @workload("my_case", unit="us/call", target=5.0, description="...")
    def _my_case() -> Measurement:
        ...

``target`` is the minimum speed-up (public / ours) the comparison must show; values are times,
lower is better. ``compare.py`` runs every workload in several fresh processes per package,
alternating ours and public so background load hits both alike, and keeps the best
(``aggregate="min"``, right for per-call timings) or the median (``aggregate="median"``, used for
import time); ``rounds`` caps the processes per package for slow workloads. Workloads built on
another team's input module register only when that file exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


@dataclass
class Measurement:
    value: float
    fingerprint: str = ""
    result: Any = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Workload:
    name: str
    run: Callable[[], Measurement]
    unit: str
    target: float
    description: str
    aggregate: str = "min"
    rounds: int | None = None


WORKLOADS: dict[str, Workload] = {}


def workload(
    name: str,
    *,
    unit: str,
    target: float,
    description: str,
    aggregate: str = "min",
    rounds: int | None = None,
) -> Callable[[Callable[[], Measurement]], Callable[[], Measurement]]:
    """Register ``func`` as workload ``name`` (see the module docstring)."""
    if aggregate not in ("min", "median"):
        raise ValueError(f"aggregate must be 'min' or 'median', got {aggregate!r}")

    def register(func: Callable[[], Measurement]) -> Callable[[], Measurement]:
        if name in WORKLOADS:
            raise ValueError(f"workload {name!r} is registered twice")
        WORKLOADS[name] = Workload(name, func, unit, target, description, aggregate, rounds)
        return func

    return register


# --------------------------------------------------------------------------- helpers


def fingerprint(*values: Any) -> str:
    """A short hash of JSON-serialisable inputs, identical in both interpreters."""
    text = json.dumps(values, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def per_call_seconds(
    fn: Callable[[], Any], *, min_time: float = 0.2, repeats: int = 5, budget: float = 4.0
) -> float:
    """Best time of one call of ``fn`` over ``repeats`` timed batches.

    The batch size is calibrated so one batch takes at least ``min_time`` seconds; slow
    functions (one call > ``min_time``) run one call per batch, and repeats stop once ``budget``
    seconds have been spent.
    """
    fn()  # warm-up: lazy imports, caches
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time or number >= 10_000_000:
            break
        number = max(number * 2, int(number * min_time / max(elapsed, 1e-9) * 1.1))
    best = elapsed / number
    spent = elapsed
    for _ in range(repeats - 1):
        if spent >= budget:
            break
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        spent += elapsed
        best = min(best, elapsed / number)
    return best


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except TypeError:
        return repr(value)
    return value


# --------------------------------------------------------------------------- workloads


_IMPORT_PROBE = """
import sys, time, json
start = time.perf_counter()
import openevals
elapsed = time.perf_counter() - start
heavy = ("langchain_core", "langchain_openai", "openai", "langsmith", "torch")
print(json.dumps([elapsed, sorted(m for m in heavy if m in sys.modules)]))
"""


@workload(
    "import",
    unit="ms",
    target=10.0,
    aggregate="median",
    description="`import openevals` in a clean interpreter (median of fresh processes)",
)
def _import() -> Measurement:
    # A clean grandchild: nothing but the interpreter's own start-up is loaded before the import.
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE], capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    elapsed, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    return Measurement(
        elapsed * 1000.0,
        fingerprint("import openevals"),
        None,
        {"process_wall_ms": round(wall * 1000.0, 1), "loaded": loaded},
    )


EXACT_OUTPUTS = {"name": "Ada", "langs": ["en", "fr"], "score": 3, "nested": {"ok": True}}
EXACT_REFERENCE = {"nested": {"ok": True}, "score": 3, "langs": ["en", "fr"], "name": "Ada"}


@workload(
    "exact_match",
    unit="us/call",
    target=5.0,
    description="exact_match on a small nested dict (per-call overhead)",
)
def _exact_match() -> Measurement:
    from openevals import exact_match

    def call() -> Any:
        return exact_match(outputs=EXACT_OUTPUTS, reference_outputs=EXACT_REFERENCE)

    seconds = per_call_seconds(call)
    return Measurement(
        seconds * 1e6, fingerprint(EXACT_OUTPUTS, EXACT_REFERENCE), _jsonable(call()["score"])
    )


def levenshtein_inputs(length: int = 900, seed: int = 7) -> tuple[str, str]:
    """Two ~``length``-character English-like texts differing by ~10% word edits."""
    rng = random.Random(seed)
    text = (
        "the quick brown fox jumps over a lazy dog while seven wizards quietly judge "
        "boxing matches and vexing quizzes about jazz music in the old town square"
    )
    words = text.split(" ")
    first: list[str] = []
    while len(" ".join(first)) < length:
        first.append(words[int(rng.random() * len(words))])
    second = list(first)
    for i in range(len(second)):
        roll = rng.random()
        if roll < 0.05:
            second[i] = words[int(rng.random() * len(words))]
        elif roll < 0.08:
            second[i] = second[i][::-1]
    a = " ".join(first)[:length]
    b = " ".join(second)[:length]
    return a, b


@workload(
    "levenshtein_900",
    unit="us/call",
    target=1000.0,
    description="levenshtein_distance on two 900-character strings",
)
def _levenshtein() -> Measurement:
    from openevals.string import levenshtein_distance

    a, b = levenshtein_inputs()

    def call() -> Any:
        return levenshtein_distance(outputs=a, reference_outputs=b)

    seconds = per_call_seconds(call, repeats=3)
    return Measurement(
        seconds * 1e6, fingerprint(a, b), round(call()["score"], 6), {"chars": [len(a), len(b)]}
    )


JSON_OUTPUTS = {
    "name": "Ada Lovelace",
    "born": 1815,
    "address": {"city": "London", "street": "St James's Square", "zip": "SW1Y"},
    "languages": ["en", "fr"],
}
JSON_REFERENCE = {
    "name": "Ada Lovelace",
    "born": 1816,
    "address": {"city": "London", "street": "St James's Square", "zip": "SW1Y"},
    "languages": ["en", "fr"],
}


@workload(
    "json_match",
    unit="us/call",
    target=5.0,
    description='create_json_match_evaluator(aggregator="average") on a small nested dict',
)
def _json_match() -> Measurement:
    from openevals.json import create_json_match_evaluator

    evaluator = create_json_match_evaluator(aggregator="average")

    def call() -> Any:
        return evaluator(outputs=JSON_OUTPUTS, reference_outputs=JSON_REFERENCE)

    seconds = per_call_seconds(call)
    result = call()
    return Measurement(
        seconds * 1e6,
        fingerprint(JSON_OUTPUTS, JSON_REFERENCE),
        [(r["key"], r["score"]) for r in result],
    )


# --------------------------------------------------------------------------- other teams' inputs


def _load_sibling(module_name: str) -> Any | None:
    path = HERE / f"{module_name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"_bench_{module_name}", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRAJECTORY_CALLS = 1000


def _trajectory_workload(mode: str, args_mode: str) -> Callable[[], Measurement]:
    def run() -> Measurement:
        module = _load_sibling("trajectory_workload")
        assert module is not None
        from openevals import create_trajectory_match_evaluator

        outputs, reference = module.build(TRAJECTORY_CALLS)[mode]
        factory: Any = create_trajectory_match_evaluator  # modes are plain strings here
        evaluator = factory(trajectory_match_mode=mode, tool_args_match_mode=args_mode)

        def call() -> Any:
            return evaluator(outputs=outputs, reference_outputs=reference)

        seconds = per_call_seconds(call, repeats=3)
        return Measurement(
            seconds * 1e3,
            fingerprint(outputs, reference),
            _jsonable(call()["score"]),
            {"tool_calls": TRAJECTORY_CALLS},
        )

    return run


if (HERE / "trajectory_workload.py").exists():
    for _mode, _args_mode, _target in (
        ("strict", "exact", 5.0),
        ("unordered", "exact", 5.0),
        ("subset", "superset", 5.0),
        ("superset", "subset", 5.0),
    ):
        workload(
            f"trajectory_{_mode}_{_args_mode}",
            unit="ms/eval",
            target=_target,
            description=(
                f"trajectory match mode={_mode}, tool args={_args_mode}, "
                f"{TRAJECTORY_CALLS} tool calls per side (benchmarks/trajectory_workload.py)"
            ),
        )(_trajectory_workload(_mode, _args_mode))


def _code_workload(batched: bool, n_samples: int) -> Callable[[], Measurement]:
    """Seconds per sample to type-check ``n_samples`` samples with mypy.

    ``batched=False``: one evaluator call per sample in both packages (the public release's only
    mode). ``batched=True``: our ``evaluator.batch(samples)`` (one mypy process for all samples);
    a package without ``batch`` falls back to per-sample calls, which is what its users run.
    """

    def run() -> Measurement:
        module = _load_sibling("code_workload")
        assert module is not None
        codes = module.samples(n_samples)
        evaluator = module.make_evaluator("mypy")
        batch = getattr(evaluator, "batch", None) if batched else None
        start = time.perf_counter()
        if batch is not None:
            scores = [bool(r["score"]) for r in batch(codes)]
        else:
            scores = [bool(evaluator(outputs=code)["score"]) for code in codes]
        elapsed = time.perf_counter() - start
        mode = "batch" if batch is not None else "per-sample"
        return Measurement(elapsed / len(codes), fingerprint(codes), scores, {"mode": mode})

    return run


if (HERE / "code_workload.py").exists():
    workload(
        "mypy_per_sample",
        unit="s/sample",
        target=0.67,
        rounds=3,
        description=(
            "mypy evaluator, one call (one mypy process) per sample, 4 samples: parity check, "
            "the target leaves room for timing noise"
        ),
    )(_code_workload(batched=False, n_samples=4))
    workload(
        "mypy_batch",
        unit="s/sample",
        target=3.0,
        rounds=2,
        description="mypy on 10 samples: our evaluator.batch vs the public per-sample calls",
    )(_code_workload(batched=True, n_samples=10))


def _judge_throughput() -> Measurement:
    module = _load_sibling("judge_workload")
    assert module is not None
    out = module.judge_throughput()
    return Measurement(
        out["seconds"],
        fingerprint("judge_throughput", module.CALLS, module.LATENCY, module.CONCURRENCY),
        out["calls_scored_true"],
        {"ideal_seconds": out["ideal_seconds"], "ratio_to_ideal": round(out["ratio_to_ideal"], 2)},
    )


def _judge_construction() -> Measurement:
    module = _load_sibling("judge_workload")
    assert module is not None
    out = module.judge_construction(rounds=1)
    return Measurement(out["seconds"] * 1000.0, fingerprint("judge_construction"), None)


if (HERE / "judge_workload.py").exists():
    workload(
        "judge_throughput",
        unit="s",
        target=1.0,
        rounds=2,
        description=(
            "500 async LLM-judge calls, concurrency 50, fake OpenAI server with 50 ms latency "
            "(ideal 0.5 s; benchmarks/judge_workload.py)"
        ),
    )(_judge_throughput)
    workload(
        "judge_construction",
        unit="ms",
        target=2.0,
        aggregate="median",
        description=(
            "fresh process: import openevals.llm and create_llm_as_judge(model='openai:...')"
        ),
    )(_judge_construction)


# --------------------------------------------------------------------------- child entry point


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in WORKLOADS:
        print(f"usage: _workloads.py NAME  (one of: {', '.join(WORKLOADS)})", file=sys.stderr)
        return 2
    m = WORKLOADS[argv[0]].run()
    import openevals

    payload = {
        "value": m.value,
        "fingerprint": m.fingerprint,
        "result": m.result,
        "detail": m.detail,
        "package": getattr(openevals, "__file__", None),
        "python": sys.version.split()[0],
    }
    print(json.dumps(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
