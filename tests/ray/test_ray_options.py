"""The Ray engine's options, its cache interface, and Ray staying out of every other path.

No Ray session is started here (fast; part of ``make test``).
"""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from openevals.evaluation import LocalEngine, RayEngine, evaluate
from openevals.evaluation.cache import CacheBackend, SQLiteJudgeCache, shares_storage
from openevals.evaluation.engines.batch_forms import batch_form
from openevals.evaluation.engines.engine import as_engine
from openevals.evaluation.evaluators import prepare_evaluators

ROOT = Path(__file__).resolve().parents[2]
DATA = [{"inputs": 1, "outputs": "a", "reference_outputs": "a"}]


@pytest.mark.parametrize(
    ("engine", "error", "words"),
    [
        ("spark", ValueError, "engine must be one of"),
        (None, ValueError, "engine must be one of"),
        ({"address": "auto"}, ValueError, "engine must be one of"),
    ],
)
def test_a_bad_engine_fails_before_anything_runs(
    engine: Any, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        evaluate(DATA, ["exact_match"], progress=False, engine=engine)


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"address": ""}, TypeError, "RayEngine(address=) must be"),
        ({"address": 5}, TypeError, "RayEngine(address=) must be"),
        ({"workers": 0}, ValueError, "RayEngine(workers=) must be"),
        ({"workers": True}, ValueError, "RayEngine(workers=) must be"),
        ({"batch_size": 0}, ValueError, "RayEngine(batch_size=) must be"),
        ({"batch_size": 2.5}, ValueError, "RayEngine(batch_size=) must be"),
        ({"env": "OPENAI_API_KEY"}, TypeError, "RayEngine(env=) must be a list"),
        ({"env": ["A=b"]}, TypeError, "names (no values)"),
        ({"env": [""]}, TypeError, "names (no values)"),
        ({"parquet": 3}, TypeError, "RayEngine(parquet=) must be a folder path"),
        ({"eval_timeout": 0}, ValueError, "RayEngine(eval_timeout=) must be a positive"),
    ],
)
def test_bad_ray_engine_options_fail_where_they_are_written(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        RayEngine(**kwargs)


def test_engine_objects_keep_their_options_and_the_names_mean_the_defaults() -> None:
    engine = RayEngine(
        address="ray://head:10001", workers=2, batch_size=8, env=["MY_VAR"], connect_timeout=5
    )
    assert engine.env == ("MY_VAR",) and engine.connect_timeout == 5.0
    assert engine.name == "ray" and LocalEngine().name == "local"
    assert as_engine("ray") == RayEngine() and as_engine("local") == LocalEngine()
    assert as_engine(engine) is engine
    assert pickle.loads(pickle.dumps(engine)) == engine
    with pytest.raises(TypeError):
        RayEngine("ray://head:10001")  # type: ignore[misc]  # options by name only


def test_import_and_local_runs_never_load_ray() -> None:
    code = (
        "import sys, openevals\n"
        "from openevals.evaluation import evaluate\n"
        "r = evaluate([{'outputs': 'a', 'reference_outputs': 'a'}], ['exact_match'], "
        "progress=False)\n"
        "assert r.aggregates['exact_match']['mean'] == 1.0\n"
        "import openevals.evaluation.engines, openevals.evaluation.engines.worker\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'pyarrow'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_missing_ray_names_the_extra() -> None:
    # A fresh interpreter where `import ray` fails (earlier tests may have imported Ray here).
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from openevals.evaluation import evaluate\n"
        "try:\n"
        "    evaluate([{'outputs': 1, 'reference_outputs': 1}], ['exact_match'], engine='ray',"
        " progress=False)\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "pip install 'openevals-suite[ray]'" in out.stdout, out.stdout + out.stderr


def test_sqlite_cache_is_a_backend_that_pickles_to_its_path(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with SQLiteJudgeCache(path) as cache:
        cache.set("k", {"v": 1})
        assert isinstance(cache, CacheBackend)
        assert not shares_storage(cache)
        copy = pickle.loads(pickle.dumps(cache))
    assert isinstance(copy, SQLiteJudgeCache) and copy.path == path
    assert copy.get("k") == {"v": 1}  # the copy reopened the same file
    copy.close()
    assert not isinstance(object(), CacheBackend)


class _WithBatch:
    def __call__(self, *, outputs: Any, reference_outputs: Any) -> bool:
        return bool(outputs == reference_outputs)

    def batch(self, outputs: list[Any], reference_outputs: list[Any]) -> list[bool]:
        return [o == r for o, r in zip(outputs, reference_outputs, strict=True)]


class _NeedsOther(_WithBatch):
    def batch(self, outputs: list[Any], reference_outputs: list[Any], weights: Any) -> list[bool]:  # type: ignore[override]
        return []


def test_batch_form_detection() -> None:
    from openevals.code.mypy import create_async_mypy_evaluator, create_mypy_evaluator

    def plain(outputs: Any) -> bool:
        return True

    found = {
        name: batch_form(ev)
        for ev, name in zip(
            prepare_evaluators(
                [
                    _WithBatch(),
                    _NeedsOther(),
                    plain,
                    create_mypy_evaluator(),
                    create_async_mypy_evaluator(),
                ]
            ),
            ("with", "needs_other", "plain", "mypy", "amypy"),
            strict=True,
        )
    }
    assert found["with"] is not None and found["with"].columns == ("outputs", "reference_outputs")
    assert found["needs_other"] is None and found["plain"] is None
    assert found["mypy"] is not None and found["mypy"].columns == ("outputs",)
    amypy = found["amypy"]
    assert amypy is not None and inspect.iscoroutinefunction(amypy.method)  # its abatch form


def test_judge_pickles_without_its_lock_and_resolved_client(
    fake_openai: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What engine='ray' needs to send a judge to its workers."""
    from openevals.llm import create_llm_as_judge

    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-pickle-test-0123456789")
    fake_openai.set_default_chat(json={"reasoning": "ok", "score": True})
    judge = create_llm_as_judge(prompt="Q: {inputs} A: {outputs}", model="openai:gpt-test")
    assert judge(inputs="q", outputs="a")["score"] is True  # resolves the client
    cloudpickle = pytest.importorskip("ray.cloudpickle")
    copy = cloudpickle.loads(cloudpickle.dumps(judge))
    assert copy(inputs="q", outputs="a")["score"] is True
    assert len(fake_openai.chat_requests) == 2
