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

from openevals.evaluation import evaluate
from openevals.evaluation.cache import CacheBackend, SQLiteJudgeCache, shares_storage
from openevals.evaluation.engines.batch_forms import batch_form
from openevals.evaluation.evaluators import prepare_evaluators

ROOT = Path(__file__).resolve().parents[2]
DATA = [{"inputs": 1, "outputs": "a", "reference_outputs": "a"}]


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"engine": "spark"}, ValueError, "engine must be one of"),
        ({"engine": None}, ValueError, "engine must be one of"),
        ({"ray_address": "auto"}, ValueError, "only used with engine='ray'"),
        ({"ray_workers": 2}, ValueError, "only used with engine='ray'"),
        ({"ray_env": ["X"]}, ValueError, "only used with engine='ray'"),
        ({"engine": "ray", "ray_address": ""}, TypeError, "ray_address must be"),
        ({"engine": "ray", "ray_address": 5}, TypeError, "ray_address must be"),
        ({"engine": "ray", "ray_workers": 0}, ValueError, "ray_workers must be"),
        ({"engine": "ray", "ray_workers": True}, ValueError, "ray_workers must be"),
        ({"engine": "ray", "ray_batch_size": 0}, ValueError, "ray_batch_size must be"),
        ({"ray_batch_size": 2.5}, ValueError, "ray_batch_size must be"),
        ({"engine": "ray", "ray_env": "OPENAI_API_KEY"}, TypeError, "ray_env must be a list"),
        ({"engine": "ray", "ray_env": ["A=b"]}, TypeError, "names (no values)"),
        ({"engine": "ray", "ray_env": [""]}, TypeError, "names (no values)"),
    ],
)
def test_bad_engine_options_fail_before_anything_runs(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")):
        evaluate(DATA, ["exact_match"], progress=False, **kwargs)


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
