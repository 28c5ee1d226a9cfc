"""``scripts/run_upstream_tests.py`` (``make compat``) on a small made-up sdist, fully offline.

The real run needs the 0.2.2 sdist and the baseline venv; these tests exercise its parts: the
extraction (only ``tests/``), the generated conftest (exact-id deselection, stale-list error, the
import guard), the offline environment, JUnit parsing and the report's verdict.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "run_upstream_tests", REPO / "scripts" / "run_upstream_tests.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


R = _load()

SUITE = {
    "tests/test_a.py": (
        "def test_ok():\n    assert True\n"
        "def test_ok_longer_name():\n    assert True\n"
        "def test_bad():\n    assert 1 == 2, 'one is not two'\n"
    ),
    "tests/test_b.py": (
        "import pytest\n"
        "@pytest.mark.skip(reason='upstream marker')\n"
        "def test_skipped():\n    pass\n"
        "@pytest.mark.parametrize('x', [1, 2])\n"
        "def test_param(x):\n    assert x == 1\n"
    ),
    "tests/test_c.py": "import no_such_module_xyz\ndef test_c():\n    pass\n",
    "openevals/__init__.py": "raise RuntimeError('the sdist package must never be imported')\n",
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['.']\n",
}


def _sdist(tmp_path: Path) -> Path:
    path = tmp_path / "openevals-0.2.2.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in SUITE.items():
            data = text.encode()
            info = tarfile.TarInfo(f"openevals-0.2.2/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    folder: Path = R.prepare(_sdist(tmp_path), tmp_path / "work")
    return folder


def _ours_env(**extra: str) -> dict[str, str]:
    env: dict[str, str] = R.offline_env(
        {"PYTHONPATH": str(REPO), "COMPAT_EXPECT_OPENEVALS": str(REPO / "openevals")}
    )
    # The made-up suite needs no plugins; loading none keeps each run quick.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def _network(run_dir: Path, ids: list[str]) -> None:
    (run_dir / "network_tests.json").write_text(json.dumps(ids), encoding="utf-8")


def test_prepare_extracts_only_the_tests(run_dir: Path) -> None:
    files = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())
    assert files == [
        "conftest.py",
        "network_tests.json",
        "pytest.ini",
        "tests/test_a.py",
        "tests/test_b.py",
        "tests/test_c.py",
    ]
    listed = json.loads((run_dir / "network_tests.json").read_text())
    assert listed == R.network_node_ids() and len(listed) == 102


def test_sdist_without_tests_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("openevals-0.2.2/README.md")
        archive.addfile(info, io.BytesIO(b""))
    with pytest.raises(SystemExit, match="no tests/ folder"):
        R.prepare(path, tmp_path / "work")


def test_offline_env_drops_credentials_and_points_at_a_closed_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "real")
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "real")
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("PYTHONPATH", "/somewhere")
    env = R.offline_env({})
    assert env["OPENAI_API_KEY"] == "sk-offline-compat-run"
    assert "ANTHROPIC_API_KEY" not in env and "SOME_SERVICE_API_KEY" not in env
    assert "PYTHONPATH" not in env
    assert env["LANGSMITH_TRACING"] == "false"
    assert env["HTTPS_PROXY"] == env["https_proxy"] == R.DEAD
    assert env["OPENAI_BASE_URL"].startswith(R.DEAD)


def test_run_deselects_exact_ids_and_parses_outcomes(run_dir: Path) -> None:
    # An exact id: test_ok must not also drop test_ok_longer_name (pytest's --deselect would).
    # test_c.py cannot be imported: it is one failed entry, and its listed test is not "stale".
    _network(run_dir, ["tests/test_a.py::test_ok", "tests/test_c.py::test_c"])
    results = R.run_pytest(sys.executable, run_dir, run_dir / "out.xml", _ours_env())
    assert {n: r["outcome"] for n, r in results.items()} == {
        "tests/test_a.py::test_ok_longer_name": "passed",
        "tests/test_a.py::test_bad": "failed",
        "tests/test_b.py::test_skipped": "skipped",
        "tests/test_b.py::test_param[1]": "passed",
        "tests/test_b.py::test_param[2]": "failed",
        "tests/test_c.py::(import)": "failed",
    }
    assert "No module named 'no_such_module_xyz'" in results["tests/test_c.py::(import)"]["message"]
    assert "one is not two" in results["tests/test_a.py::test_bad"]["message"]


def test_only_network_mode_runs_just_the_listed(run_dir: Path) -> None:
    _network(run_dir, ["tests/test_a.py::test_bad"])
    env = _ours_env(COMPAT_ONLY_NETWORK="1")
    results = R.run_pytest(sys.executable, run_dir, run_dir / "out.xml", env)
    # test_c.py's import failure shows in every mode.
    assert sorted(results) == ["tests/test_a.py::test_bad", "tests/test_c.py::(import)"]
    text, problems = R.check_network_list(results)
    assert problems == 3  # two failures that are not connection errors; the list has 102 entries
    assert "did not fail with a connection error" in text


def test_stale_network_list_stops_the_run(run_dir: Path) -> None:
    _network(run_dir, ["tests/test_a.py::test_renamed"])
    with pytest.raises(SystemExit, match="could not run the suite"):
        R.run_pytest(sys.executable, run_dir, run_dir / "out.xml", _ours_env())


def test_wrong_openevals_stops_the_run(run_dir: Path, tmp_path: Path) -> None:
    _network(run_dir, [])
    env = _ours_env(COMPAT_EXPECT_OPENEVALS=str(tmp_path / "elsewhere" / "openevals"))
    with pytest.raises(SystemExit, match=r"exit 3"):
        R.run_pytest(sys.executable, run_dir, run_dir / "out.xml", env)


def _result(outcome: str, message: str = "") -> dict[str, Any]:
    return {"outcome": outcome, "message": message}


def test_report_counts_and_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    known = "tests/test_a.py::test_known"
    monkeypatch.setattr(R, "KNOWN_DIFFERENCES", {known: ("deliberate", "on purpose")})
    baseline = {
        "tests/test_a.py::test_ok": _result("passed"),
        known: _result("passed"),
        "tests/test_b.py::test_new": _result("passed"),
    }
    ours = {
        "tests/test_a.py::test_ok": _result("passed"),
        known: _result("failed", "assert 1 == 0"),
        "tests/test_b.py::test_new": _result("failed", "boom"),
    }
    text, problems = R.report(ours, baseline)
    assert "0.2.2: 3 passed, 0 failed" in text
    assert "ours : 1 passed, 2 failed" in text
    assert "[deliberate] tests/test_a.py::test_known - on purpose" in text
    assert "[unexpected] tests/test_b.py::test_new - boom" in text
    assert problems == 1

    ours[known] = _result("passed")
    ours["tests/test_b.py::test_new"] = _result("passed")
    baseline["tests/test_a.py::test_ok"] = _result("failed", "needs network?")
    text, problems = R.report(ours, baseline)
    assert "passing now (drop them from the table)" in text
    assert "0.2.2 fails tests it should pass" in text
    assert problems == 1


def test_known_differences_use_known_categories_and_no_network_tests() -> None:
    network = set(R.network_node_ids())
    for node, (category, reason) in R.KNOWN_DIFFERENCES.items():
        assert category in R.CATEGORIES, node
        assert reason and node not in network
    assert set(R.NETWORK_REASONS) >= {k for f in R.NETWORK_TESTS.values() for k in f.values()}
